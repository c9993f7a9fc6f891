/**
 * Fleet benchmark: warden against a bare Temporal baseline, in the same run, on the same server.
 *
 *   npm run build && npm run bench:fleet -- --agents 1000 --period 10 --duration 60
 *
 * Two worker processes on one server: the bare baseline (bench/bare-worker.ts: an entity workflow
 * whose `reportTurn` update only counts and answers) and a real `warden worker` (agentWorkflow,
 * heuristic evaluator by default). N agents on each side are started and report one warm-up turn,
 * then each side is measured in turn (bare first, then warden; `--order warden-first` swaps):
 *
 * - open loop (default): every agent reports one turn every `--period` s, jittered ±20 %, first
 *   turn at a random offset, for `--duration` s. A turn is sent at its scheduled time whether or not
 *   the previous reply has come back; latency is measured from the scheduled time (so a late send
 *   counts against the system, not hidden by it).
 * - `--active M` (open loop): a realistic fleet. N live agents per side, of which only M report (one
 *   turn per `--period` s); the rest fell silent after their warm-up turn, their idle watchdogs
 *   running (`--idle-after`, on both sides: warden's supervisor.idleAfterMs, the bare entity's own
 *   timer). With `--cache-size` below N, silent agents are evicted from the worker's sticky cache
 *   and replayed when their timers fire. Each side is set up, measured and retired in turn, so one
 *   side's silent timers never fire in the other's window. The SDK's worker metrics (Prometheus,
 *   scraped before and after the window) give the replay rate: sticky-cache misses (a task for an
 *   agent the worker no longer holds, replayed from its history) and forced evictions per second.
 * - `--closed-loop`: every agent reports back to back (waits for its reply), for `--duration` s:
 *   throughput.
 * - `--mode recovery`: each side in turn (both by default). N agents build a long history
 *   (`--history-turns`), the side's worker is SIGKILLed, a new one starts, and every agent reports
 *   one turn: per-agent time from the new worker's spawn to the reply. Both workers use the same
 *   sticky schedule-to-start timeout, so bare is the SDK's own floor for the same number of turns.
 *
 * Worker RSS is sampled from /proc/<pid>/status every 200 ms. Everything it started is torn down
 * at the end, on error and on SIGINT/SIGTERM. stdout: exactly one JSON object; progress on stderr.
 * Exit 0 ok, 1 failure, 2 bad usage.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { WardenClient, isTransientUpdateError, workflowIdFor, type TurnInput } from '../src/client/index.js';
import { EvaluatorConfigSchema, type EvaluatorConfig } from '../src/domain/contract/schemas.js';
import { freePort } from '../src/devserver/ports.js';
import { WORKER_DEFAULTS, tuningFromEnv } from '../workers/main.js';
import {
  addressArg,
  benchMain,
  eachFlag,
  latencyStats as stats,
  makeTurn,
  numArg,
  type OwnServer,
  percentile,
  pool,
  type Proc,
  readRssKiB,
  round,
  serverAddress,
  sleep,
  startProc,
  stopOwnServer,
  UsageError,
  valueArg,
  waitReady,
} from './common.js';
import { readCpuMs, readTreeCpuMs } from './proc-cpu.js';
import { parseSdkCounters, type SdkCounters } from './sdk-metrics.js';

interface Options {
  mode: 'open' | 'closed' | 'recovery';
  agents: number;
  periodS: number;
  durationS: number;
  evaluator: EvaluatorConfig;
  evalInterval: number;
  /**
   * Warm-up turns per agent: 1 (the issue's benchmark, every agent's evaluations in phase), or
   * 1 + (agent index mod evalInterval) with --spread-evaluations (phases spread evenly, as in a
   * fleet whose agents started at different times). Both sides get the same counts.
   */
  spreadEvaluations: boolean;
  /** Warden agents upsert their search attributes (the default); off prices the visibility writes. */
  searchAttributes: boolean;
  address: string | null;
  /** With --address: the server's processes whose CPU (with their descendants') `cpuMsPerTurn.server` counts. */
  serverPids: number[];
  namespace: string;
  sides: Array<'bare' | 'warden'>;
  concurrency: number;
  historyTurns: number;
  /** Measured phases per side, the order alternating each round (open/closed modes). */
  rounds: number;
  timeoutMs: number;
  workerArgs: string[];
  /** Agents that report during the window (open loop); the others stay silent. Equals `agents` unless --active. */
  active: number;
  /** Idle watchdog of every agent on both sides, ms (null: warden's default, no bare timer). */
  idleAfterMs: number | null;
  /** Sticky cache size of both workers (null: the SDK's default / WARDEN_MAX_CACHED_WORKFLOWS). */
  cacheSize: number | null;
}

const USAGE = `usage: node dist/bench/fleet.js [options]
  --agents N           agents per side (default 100, max 20000)
  --active M           open loop: only M of the N agents report; the others stay silent with
                       their idle watchdogs running (default: all report). Each side is then set
                       up, measured and retired in turn; --idle-after defaults to half of
                       --duration
  --idle-after S       both sides' idle watchdog, seconds from an agent's last turn (warden:
                       supervisor.idleAfterMs; bare: the entity's own timer). Choose it longer than
                       the setup takes and shorter than --duration, so silent agents' timers fire
                       in the window (the JSON says how many were due there)
  --cache-size N       both workers' sticky cache (maxCachedWorkflows); below --agents, idle
                       agents are evicted and replayed when their timers fire
  --period S           open loop: seconds between an agent's turns, jittered ±20% (default 10)
  --duration S         measured seconds per side and round (default 60)
  --rounds K           measure K rounds, alternating the order (A B, B A, …); each side pools its
                       rounds (default 1)
  --evaluator E        heuristic (default), or an evaluator config as JSON
  --eval-interval N    turns between evaluations (default 5, warden's default)
  --spread-evaluations warm up agent i with 1 + (i mod eval-interval) turns (both sides), so the
                       agents' evaluation turns are spread evenly instead of falling in the same
                       round (the default: one warm-up turn each, every agent in phase)
  --no-search-attributes  warden agents without search-attribute upserts (prices visibility writes)
  --closed-loop        throughput: each agent reports back to back for --duration
  --mode M             open (default) | closed | recovery
  --history-turns T    recovery: turns per agent before the worker is killed (default 41: with the
                       warm-up turn, a warden run just below its continue-as-new point, 250 events)
  --side S             both (default) | bare | warden
  --order O            bare-first (default) | warden-first
  --address HOST:PORT  use this Temporal server (loopback) instead of starting a dev server
  --server-pid PID     with --address: count this process and its descendants as the server in
                       cpuMsPerTurn (repeat it: e.g. temporal-server and PostgreSQL's postmaster)
  --namespace NS       namespace (default "default")
  --concurrency N      parallel starts / warm-up turns / terminations (default 32)
  --timeout-ms MS      give up after this long in total (default 1800000)
Environment passed to the warden worker: WARDEN_MAX_CACHED_WORKFLOWS, WARDEN_WFT_CONCURRENCY,
WARDEN_WFT_POLLERS, WARDEN_NONSTICKY_POLL_RATIO, WARDEN_WORKFLOW_BUNDLE (see docs/operating/capacity.md).
Prints one JSON object on stdout; progress goes to stderr.`;

function parseArgs(argv: string[]): Options {
  const o: Options = {
    mode: 'open',
    agents: 100,
    periodS: 10,
    durationS: 60,
    evaluator: { kind: 'heuristic' } as EvaluatorConfig,
    evalInterval: 5,
    spreadEvaluations: false,
    searchAttributes: true,
    address: null,
    serverPids: [],
    namespace: 'default',
    sides: ['bare', 'warden'],
    concurrency: 32,
    historyTurns: 41,
    rounds: 1,
    timeoutMs: 1_800_000,
    workerArgs: [],
    active: 0,
    idleAfterMs: null,
    cacheSize: null,
  };
  let active: number | null = null;
  let order = 'bare-first' as 'bare-first' | 'warden-first';
  eachFlag(argv, USAGE, (flag, val) => {
    switch (flag) {
      case '--agents':
        o.agents = numArg(flag, val(), 1, 20000);
        break;
      case '--active':
        active = numArg(flag, val(), 1, 20000);
        break;
      case '--idle-after':
        o.idleAfterMs = Math.round(numArg(flag, val(), 1, 86400, false) * 1000);
        break;
      case '--cache-size':
        o.cacheSize = numArg(flag, val(), 1, 1_000_000);
        break;
      case '--period':
        o.periodS = numArg(flag, val(), 0.1, 3600, false);
        break;
      case '--duration':
        o.durationS = numArg(flag, val(), 1, 3600, false);
        break;
      case '--rounds':
        o.rounds = numArg(flag, val(), 1, 20);
        break;
      case '--eval-interval':
        o.evalInterval = numArg(flag, val(), 1, 1000);
        break;
      case '--history-turns':
        o.historyTurns = numArg(flag, val(), 1, 5000);
        break;
      case '--concurrency':
        o.concurrency = numArg(flag, val(), 1, 512);
        break;
      case '--timeout-ms':
        o.timeoutMs = numArg(flag, val(), 1_000, 7_200_000);
        break;
      case '--closed-loop':
        o.mode = 'closed';
        break;
      case '--no-search-attributes':
        o.searchAttributes = false;
        break;
      case '--spread-evaluations':
        o.spreadEvaluations = true;
        break;
      case '--mode': {
        const v = val();
        if (v !== 'open' && v !== 'closed' && v !== 'recovery') throw new UsageError('--mode must be open, closed or recovery');
        o.mode = v;
        break;
      }
      case '--side': {
        const v = val();
        if (v === 'both') o.sides = ['bare', 'warden'];
        else if (v === 'bare' || v === 'warden') o.sides = [v];
        else throw new UsageError('--side must be both, bare or warden');
        break;
      }
      case '--order': {
        const v = val();
        if (v !== 'bare-first' && v !== 'warden-first') throw new UsageError('--order must be bare-first or warden-first');
        order = v;
        break;
      }
      case '--evaluator':
        o.evaluator = evaluatorArg(val());
        break;
      case '--address':
        o.address = addressArg(val());
        break;
      case '--server-pid': {
        const pid = numArg(flag, val(), 1, 2 ** 31);
        if (readCpuMs(pid) === null) throw new UsageError(`--server-pid: no process ${pid} (or /proc is not readable)`);
        o.serverPids.push(pid);
        break;
      }
      case '--namespace':
        o.namespace = valueArg(flag, val());
        break;
      default:
        return false;
    }
    return true;
  });
  return checkOptions(o, active, order);
}

/** The flags' combinations checked, --active and --order applied, the workers' WARDEN_* tuning checked before anything starts. */
function checkOptions(o: Options, active: number | null, order: 'bare-first' | 'warden-first'): Options {
  o.active = active ?? o.agents;
  if (active !== null) {
    if (o.mode !== 'open') throw new UsageError('--active is for the open loop (not --closed-loop or --mode recovery)');
    if (active > o.agents) throw new UsageError('--active must be at most --agents');
    if (o.rounds > 1) throw new UsageError('--active measures one round per side (each side is set up, measured and retired in turn); drop --rounds');
    o.idleAfterMs ??= Math.round((o.durationS * 1000) / 2);
  }
  if (o.serverPids.length > 0 && !o.address) throw new UsageError('--server-pid needs --address (the dev server fleet starts is counted by itself)');
  if (order === 'warden-first') o.sides.reverse();
  try {
    tuningFromEnv();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return o;
}

/** The value of --evaluator: `heuristic`, another evaluator kind, or an evaluator config as JSON. */
function evaluatorArg(v: string | undefined): EvaluatorConfig {
  if (!v) throw new UsageError('--evaluator needs a value');
  let raw: unknown;
  try {
    raw = v.trim().startsWith('{') ? JSON.parse(v) : { kind: v };
  } catch {
    throw new UsageError('--evaluator: not valid JSON');
  }
  const parsed = EvaluatorConfigSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`--evaluator: ${parsed.error.issues.map((x) => `${x.path.join('.') || 'evaluator'}: ${x.message}`).join('; ')}`);
  return parsed.data;
}

const say = (msg: string) => process.stderr.write(`[fleet ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const mib = (kib: number) => round(kib / 1024, 1);

// ---------- worker processes and their RSS ----------

const distFile = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

/** A worker process: FLEET_NODE_ARGS gives both workers Node options that NODE_OPTIONS refuses (e.g. `--cpu-prof --cpu-prof-dir=DIR`). */
function startWorkerProc(name: string, args: string[], env: Record<string, string>, readyMsg: string): Proc {
  const nodeArgs = (process.env.FLEET_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  return startProc(name, [...nodeArgs, ...args], env, readyMsg, { maxLogLine: 600 });
}

/** Per-worker extras: the sticky cache size (--cache-size) and where it serves the SDK's metrics. */
interface WorkerExtras {
  cacheSize: number | null;
  metrics: string;
}

function startWardenWorker(address: string, namespace: string, taskQueue: string, x: WorkerExtras): Proc {
  // A real `warden worker` process (the CLI verb), as an operator runs it.
  return startWorkerProc(
    'warden-worker',
    [distFile('../src/cli/main.js'), 'worker'],
    {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      WARDEN_TASK_QUEUE: taskQueue,
      WARDEN_LOG_LEVEL: 'info',
      WARDEN_METRICS_ADDRESS: x.metrics,
      ...(x.cacheSize !== null ? { WARDEN_MAX_CACHED_WORKFLOWS: String(x.cacheSize) } : {}),
    },
    'worker started',
  );
}

/** The warden worker's sticky schedule-to-start timeout (workers/main.ts); the bare worker gets the same. */
function stickyTimeoutMs(): number {
  return Number(tuningFromEnv().stickyQueueScheduleToStartTimeout ?? WORKER_DEFAULTS.stickyQueueScheduleToStartTimeout);
}

function startBareWorker(address: string, namespace: string, taskQueue: string, x: WorkerExtras): Proc {
  return startWorkerProc(
    'bare-worker',
    [distFile('./bare-worker.js')],
    {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      WARDEN_TASK_QUEUE: taskQueue,
      FLEET_BARE_STICKY_MS: String(stickyTimeoutMs()),
      FLEET_BARE_METRICS: x.metrics,
      ...(x.cacheSize !== null ? { FLEET_BARE_CACHE: String(x.cacheSize) } : {}),
    },
    'bare worker started',
  );
}

async function scrapeSdkCounters(metrics: string): Promise<SdkCounters | null> {
  try {
    const res = await fetch(`http://${metrics}/metrics`, { signal: AbortSignal.timeout(10_000) });
    return res.ok ? parseSdkCounters(await res.text()) : null;
  } catch {
    return null;
  }
}

// ---------- the two sides ----------

interface Side {
  name: 'bare' | 'warden';
  ids: string[];
  worker: Proc;
  start(id: string): Promise<void>;
  report(id: string, turn: TurnInput): Promise<void>;
  workflowId(id: string): string;
  /** Turns sent to each agent so far, warm-up included (the n-th turn queues an evaluation when n % evalInterval is 0). */
  sent: number[];
}

/** Same retry policy on both sides: an update meeting a failed/superseded workflow task is retried. */
async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt < 8 && isTransientUpdateError(err)) {
        await sleep(Math.min(2_000, 50 * 2 ** attempt));
        continue;
      }
      throw err;
    }
  }
}

/**
 * Setup (not measured) survives an overloaded server: a start or warm-up turn whose RPC timed out
 * is sent again (the turn id is the update id, so a repeat is a duplicate, not a second turn).
 */
async function setupRetry(fn: () => Promise<void>, done?: RegExp): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (done && done.test(String((err as Error)?.message ?? err))) return;
      if (attempt >= 6) throw err;
      await sleep(500 * attempt);
    }
  }
}

/** The server's CPU so far: the dev server fleet started, or the --server-pid process trees of an external one (null without). */
function serverCpuMs(o: Options, r: Resources): number | null {
  return o.serverPids.length > 0 ? readTreeCpuMs(o.serverPids) : readCpuMs(r.server?.process.pid);
}

interface Resources extends OwnServer {
  procs: Set<Proc>;
  connection: Connection | null;
  warden: WardenClient | null;
  started: Array<{ workflowId: string }>;
  stopping: boolean;
}

async function teardown(r: Resources, o: Options): Promise<void> {
  r.stopping = true;
  // Our own dev server goes away with everything in it; on a shared server, terminate what we started.
  if (!r.server && r.connection && r.started.length > 0) {
    const client = new Client({ connection: r.connection, namespace: o.namespace });
    say(`terminating ${r.started.length} workflows`);
    await pool(r.started.splice(0), o.concurrency, async ({ workflowId }) => {
      await client.workflow
        .getHandle(workflowId)
        .terminate('benchmark finished')
        .catch(() => undefined);
    });
  }
  for (const p of r.procs) await p.stop().catch((err) => say(`${p.name} stop: ${String(err)}`));
  r.procs.clear();
  await r.warden?.close().catch(() => undefined);
  r.warden = null;
  await r.connection?.close().catch(() => undefined);
  r.connection = null;
  await stopOwnServer(r, say);
}

interface PhaseResult {
  turnsOffered: number;
  turnsAnswered: number;
  errors: number;
  errorSamples: string[];
  /** The latencies of turns numbered like warden's evaluation turns (every evalInterval-th), and of the others. */
  evaluationTurnLatencies: number[];
  otherTurnLatencies: number[];
}

const newPhase = (): PhaseResult => ({ turnsOffered: 0, turnsAnswered: 0, errors: 0, errorSamples: [], evaluationTurnLatencies: [], otherTurnLatencies: [] });

/** Every turn's latency: both halves of the split. */
const allLatencies = (x: { evaluationTurnLatencies: number[]; otherTurnLatencies: number[] }): number[] => [
  ...x.evaluationTurnLatencies,
  ...x.otherTurnLatencies,
];

/**
 * Count a turn sent to agent `a` and say where its latency goes: warden queues an evaluation on
 * every evalInterval-th turn it records (src/domain/agent/supervision.ts), so turn n is an
 * evaluation turn when n % evalInterval is 0. On the bare side the same numbering is a control.
 */
function countSent(side: Side, o: Options, a: number): (res: PhaseResult, ms: number) => void {
  side.sent[a] = (side.sent[a] ?? 0) + 1;
  const evaluation = side.sent[a]! % o.evalInterval === 0;
  return (res, ms) => {
    (evaluation ? res.evaluationTurnLatencies : res.otherTurnLatencies).push(ms);
  };
}

/** Open loop: each agent's turns at their scheduled times, for durationMs; latency from the schedule. */
async function openLoop(
  side: Side,
  o: Options,
  tag: string,
  ids: string[],
): Promise<PhaseResult & { offeredPerS: number; achievedPerS: number; lateSendsMaxMs: number }> {
  const periodMs = o.periodS * 1000;
  const durationMs = o.durationS * 1000;
  const res = newPhase();
  const inFlight = new Set<Promise<void>>();
  let answeredInWindow = 0;
  let lateSendsMaxMs = 0;
  const t0 = performance.now() + 200;
  const end = t0 + durationMs;
  await Promise.all(
    ids.map(async (id, a) => {
      let at = t0 + Math.random() * periodMs;
      let t = 1; // turn 0 was the warm-up
      while (at < end) {
        const wait = at - performance.now();
        if (wait > 0) await sleep(wait);
        lateSendsMaxMs = Math.max(lateSendsMaxMs, performance.now() - at);
        const scheduled = at;
        const turn = makeTurn(`${tag}-${side.name}-${a}-${t}`, a, t);
        const record = countSent(side, o, a);
        res.turnsOffered += 1;
        const p = side
          .report(id, turn)
          .then(
            () => {
              const now = performance.now();
              res.turnsAnswered += 1;
              if (now <= end) answeredInWindow += 1;
              record(res, now - scheduled);
            },
            (err: unknown) => {
              res.errors += 1;
              if (res.errorSamples.length < 5) res.errorSamples.push(String((err as Error)?.message ?? err).slice(0, 300));
            },
          )
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        t += 1;
        at += periodMs * (0.8 + 0.4 * Math.random());
      }
    }),
  );
  // Every turn offered in the window gets up to 60 s more to be answered; the rest are errors.
  const unanswered = await Promise.race([Promise.all(inFlight).then(() => 0), sleep(60_000).then(() => inFlight.size)]);
  if (unanswered > 0) {
    res.errors += unanswered;
    res.errorSamples.push(`${unanswered} turns unanswered 60 s after the window`);
  }
  return { ...res, offeredPerS: res.turnsOffered / o.durationS, achievedPerS: answeredInWindow / o.durationS, lateSendsMaxMs };
}

/** Closed loop: each agent reports back to back for durationMs. */
async function closedLoop(side: Side, o: Options, tag: string): Promise<PhaseResult & { turnsPerS: number }> {
  const res = newPhase();
  const t0 = performance.now();
  const end = t0 + o.durationS * 1000;
  let inWindow = 0;
  await Promise.all(
    side.ids.map(async (id, a) => {
      for (let t = 1; performance.now() < end; t++) {
        const s = performance.now();
        const record = countSent(side, o, a);
        res.turnsOffered += 1;
        try {
          await side.report(id, makeTurn(`${tag}-${side.name}-c${a}-${t}`, a, t));
          const now = performance.now();
          res.turnsAnswered += 1;
          if (now <= end) inWindow += 1;
          record(res, now - s);
        } catch (err) {
          res.errors += 1;
          if (res.errorSamples.length < 5) res.errorSamples.push(String((err as Error)?.message ?? err).slice(0, 300));
        }
      }
    }),
  );
  return { ...res, turnsPerS: inWindow / o.durationS };
}

/**
 * Each workflow's history over all its runs: the current run (describe) plus every run it continued
 * from (visibility), so growth across a continue-as-new is counted whole. A run that switched a
 * moment before may not be listed yet (visibility is eventually consistent): a slight undercount.
 */
async function historyOf(connection: Connection, namespace: string, workflowIds: string[]) {
  const client = new Client({ connection, namespace });
  const rows = await Promise.all(
    workflowIds.map(async (wid) => {
      const d = await client.workflow.getHandle(wid).describe();
      let events = d.historyLength;
      let bytes = Number(d.raw.workflowExecutionInfo?.historySizeBytes ?? 0);
      for await (const w of client.workflow.list({ query: `WorkflowId = "${wid}" AND ExecutionStatus = "ContinuedAsNew"` })) {
        events += w.historyLength;
        bytes += w.historySize ?? 0;
      }
      return { events, bytes };
    }),
  );
  return rows;
}

/** Replies that said `duplicate` to a turn the bench sent once (see the warden side's `report`). */
const duplicateReplies: Record<string, number> = {};

/** What the phases of one run share. */
interface Ctx {
  o: Options;
  r: Resources;
  tag: string;
  /** The load average when the run began. */
  load0: number[];
  address: string;
  raw: Client;
  warden: WardenClient;
  wardenTq: string;
  bareTq: string;
  extras: Record<string, WorkerExtras>;
  sides: Side[];
  /** --active: each side is set up right before its window and retired after it. */
  realistic: boolean;
  /** Per side, KiB: the worker's RSS before any agent, with every agent cached, and its peak during the warm-up. */
  idleRss: Record<string, number>;
  cachedRss: Record<string, number>;
  setupPeakKiB: Record<string, number>;
  /** Per side: how long starting every agent and its warm-up turns took, ms. */
  startMs: Record<string, number>;
  /** --active: when each silent agent's warm-up turn was answered (its idle timer runs from there). */
  silentSince: Record<string, number[]>;
}

/** Setup: the server (given, or a dev server of our own), the clients, each side's task queue and metrics port. */
async function setUp(o: Options, r: Resources): Promise<Ctx> {
  const tag = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const load0 = loadavg();
  const address = await serverAddress(r, o.address, { prefix: 'warden-fleet-', namespace: o.namespace, say });
  r.connection = await Connection.connect({ address });
  const raw = new Client({ connection: r.connection, namespace: o.namespace });
  const wardenTq = `fleet-warden-${tag}`;
  const bareTq = `fleet-bare-${tag}`;
  r.warden = await WardenClient.connect({ address, namespace: o.namespace, taskQueue: wardenTq });
  const extras: Record<string, WorkerExtras> = {};
  for (const name of o.sides) extras[name] = { cacheSize: o.cacheSize, metrics: `127.0.0.1:${await freePort()}` };
  return {
    o,
    r,
    tag,
    load0,
    address,
    raw,
    warden: r.warden,
    wardenTq,
    bareTq,
    extras,
    sides: [],
    realistic: o.active < o.agents,
    idleRss: {},
    cachedRss: {},
    setupPeakKiB: {},
    startMs: {},
    silentSince: {},
  };
}

function startWorkerOf(c: Ctx, name: 'bare' | 'warden'): Proc {
  return name === 'bare'
    ? startBareWorker(c.address, c.o.namespace, c.bareTq, c.extras.bare!)
    : startWardenWorker(c.address, c.o.namespace, c.wardenTq, c.extras.warden!);
}

/** Each side's worker in turn: started, ready, its idle RSS read; then the side that drives it. */
async function startSides(c: Ctx): Promise<void> {
  for (const name of c.o.sides) {
    const worker = startWorkerOf(c, name);
    c.r.procs.add(worker);
    await waitReady(worker);
    await sleep(500);
    c.idleRss[name] = readRssKiB(worker.child.pid!) ?? 0;
    const ids = Array.from({ length: c.o.agents }, (_, i) => `fleet-${c.tag}-${name}-${i}`);
    c.sides.push(name === 'bare' ? bareSide(c, ids, worker) : wardenSide(c, ids, worker));
  }
}

function bareSide(c: Ctx, ids: string[], worker: Proc): Side {
  const { o, r, raw } = c;
  return {
    name: 'bare',
    ids,
    worker,
    workflowId: (id) => id,
    sent: [],
    start: async (id) => {
      r.started.push({ workflowId: id });
      await raw.workflow.start('bareEntityWorkflow', { taskQueue: c.bareTq, workflowId: id, args: o.idleAfterMs !== null ? [0, o.idleAfterMs] : [0] });
    },
    report: async (id, turn) => {
      await withRetry(() => raw.workflow.getHandle(id).executeUpdate('reportTurn', { args: [turn], updateId: `turn-${turn.id}` }));
    },
  };
}

function wardenSide(c: Ctx, ids: string[], worker: Proc): Side {
  const { o, r, warden } = c;
  return {
    name: 'warden',
    ids,
    worker,
    workflowId: workflowIdFor,
    sent: [],
    start: async (id) => {
      r.started.push({ workflowId: workflowIdFor(id) });
      await warden.start({
        agentId: id,
        task: `Fleet agent ${id}: fix the empty-input handling in the parser and keep the tests green.`,
        supervisor: { evalInterval: o.evalInterval, ...(o.idleAfterMs !== null ? { idleAfterMs: o.idleAfterMs } : {}) },
        evaluator: o.evaluator,
        searchAttributes: o.searchAttributes,
      });
    },
    report: async (id, turn) => {
      const reply = await warden.reportTurn(id, turn);
      // Each turn is sent once: a duplicate reply means the client re-sent it after a lost reply
      // (e.g. the run continued as new under it); the workflow recorded it once and answered the
      // retry with the same whispers. Answered, and counted apart.
      if (reply.duplicate) duplicateReplies.warden = (duplicateReplies.warden ?? 0) + 1;
      else if (!reply.accepted) throw new Error(`turn ${turn.id} not accepted: ${JSON.stringify(reply).slice(0, 200)}`);
    },
  };
}

/**
 * Warm-up (not measured): start every agent of `side` and report its warm-up turns (one each, or
 * spread: see Options); every agent is then cached by its worker.
 */
async function warmUp(c: Ctx, side: Side): Promise<void> {
  const { o, r } = c;
  const warmupTurns = (a: number) => (o.spreadEvaluations ? 1 + (a % o.evalInterval) : 1);
  side.worker.resetPeak();
  const since: number[] = (c.silentSince[side.name] = []);
  say(
    `${side.name}: starting ${side.ids.length} agents, ${o.spreadEvaluations ? `1 to ${o.evalInterval} warm-up turns each (spread)` : 'one warm-up turn each'}`,
  );
  const s0 = performance.now();
  await pool(side.ids, o.concurrency, async (id, a) => {
    if (r.stopping) throw new Error('stopping');
    await setupRetry(() => side.start(id), /already started|already running/i);
    for (let w = 0; w < warmupTurns(a); w++) {
      await setupRetry(() => side.report(id, makeTurn(`${c.tag}-${side.name}-${a}-${w === 0 ? '0' : `w${w}`}`, a, w)), /"duplicate":true/);
    }
    side.sent[a] = warmupTurns(a);
    if (a >= o.active) since.push(performance.now());
  });
  c.startMs[side.name] = performance.now() - s0;
  await sleep(1_000);
  c.cachedRss[side.name] = readRssKiB(side.worker.child.pid!) ?? 0;
  c.setupPeakKiB[side.name] = side.worker.rss.peakKiB;
}

/** Retire a measured side (--active) before the next: its agents terminated, its worker stopped. */
async function retire(c: Ctx, side: Side): Promise<void> {
  const { o, r } = c;
  say(`${side.name}: retiring ${side.ids.length} agents`);
  const ids = new Set(side.ids.map(side.workflowId));
  const mine = r.started.filter((w) => ids.has(w.workflowId));
  r.started = r.started.filter((w) => !ids.has(w.workflowId));
  await pool(mine, o.concurrency, async ({ workflowId }) => {
    await c.raw.workflow
      .getHandle(workflowId)
      .terminate('benchmark side finished')
      .catch(() => undefined);
  });
  await side.worker.stop();
  r.procs.delete(side.worker);
}

/** The agents that report in the window: all, or the first --active. */
const reporting = (c: Ctx, side: Side) => side.ids.slice(0, c.o.active);

/** Up to five of them, spread evenly, whose history growth is measured: their workflow ids. */
const sampleOf = (c: Ctx, side: Side) =>
  reporting(c, side)
    .filter((_, i) => i % Math.max(1, Math.floor(c.o.active / 5)) === 0)
    .slice(0, 5)
    .map(side.workflowId);

// ---------- --mode recovery ----------

/**
 * Each side in turn, on the same server: build the histories, SIGKILL its worker, start a new
 * one, and time every agent's next turn. The bare side is the floor: what the SDK itself pays to
 * replay entities with as many turns, behind the same sticky schedule-to-start timeout.
 */
async function recoveryResult(c: Ctx): Promise<Record<string, unknown>> {
  const { o } = c;
  const recovered: Record<string, Record<string, unknown>> = {};
  for (const side of c.sides) recovered[side.name] = await recover(c, side);
  const q = (name: string, k: 'p50' | 'max') => (recovered[name]?.recoveryMs as Record<string, number> | undefined)?.[k] ?? NaN;
  return {
    bench: 'fleet',
    mode: 'recovery',
    agents: o.agents,
    historyTurns: o.historyTurns,
    stickyTimeoutMs: stickyTimeoutMs(),
    sides: recovered,
    ...(recovered.bare && recovered.warden
      ? { ratios: { recoveryP50: round(q('warden', 'p50') / q('bare', 'p50'), 2), recoveryMax: round(q('warden', 'max') / q('bare', 'max'), 2) } }
      : {}),
    evaluator: o.evaluator.kind,
    server: o.address ? 'external' : 'dev-server',
    loadavgBefore: c.load0.map((x) => round(x, 2)),
    loadavgAfter: loadavg().map((x) => round(x, 2)),
    node: process.version,
    cpus: cpus().length,
  };
}

/** Recovery setup: every agent of `side` reports --history-turns turns, back to back; how long that took, ms. */
async function buildHistories(c: Ctx, side: Side): Promise<number> {
  const { o, r } = c;
  say(`${side.name} recovery: building histories, ${side.ids.length} agents × ${o.historyTurns} turns (closed loop)`);
  const b0 = performance.now();
  let built = 0;
  const progress = setInterval(() => say(`  ${built} of ${side.ids.length * o.historyTurns} turns`), 10_000);
  try {
    await Promise.all(
      side.ids.map(async (id, a) => {
        for (let t = 1; t <= o.historyTurns && !r.stopping; t++) {
          await setupRetry(() => side.report(id, makeTurn(`${c.tag}-${side.name}-h${a}-${t}`, a, t)), /"duplicate":true/);
          built += 1;
        }
      }),
    );
  } finally {
    clearInterval(progress);
  }
  return performance.now() - b0;
}

/** One side's recovery: its histories built, its worker SIGKILLed and a new one started, every agent's next turn timed from the spawn. */
async function recover(c: Ctx, side: Side): Promise<Record<string, unknown>> {
  const { o, r } = c;
  const buildMs = await buildHistories(c, side);
  await sleep(2_000); // the evaluations queued by the last turns
  const hist = await historyOf(r.connection!, o.namespace, side.ids.map(side.workflowId));
  const rssBefore = side.worker.rss.lastKiB;
  say(`${side.name}: SIGKILL the worker (pid ${side.worker.child.pid}); histories: max ${Math.max(...hist.map((h) => h.events))} events`);
  await side.worker.stop('SIGKILL');
  r.procs.delete(side.worker);
  const next = startWorkerOf(c, side.name);
  r.procs.add(next);
  const spawned = next.spawnedAt;
  const perAgent: number[] = new Array(side.ids.length).fill(NaN);
  const errors: string[] = [];
  const turnsP = pool(side.ids, side.ids.length, async (id, a) => {
    try {
      await side.report(id, makeTurn(`${c.tag}-${side.name}-rec-${a}`, a, o.historyTurns + 1));
      perAgent[a] = performance.now() - spawned;
    } catch (err) {
      errors.push(String((err as Error)?.message ?? err).slice(0, 300));
    }
  });
  const readyAt = await waitReady(next);
  await turnsP;
  // Quiet the box for the next side.
  await next.stop('SIGTERM');
  r.procs.delete(next);
  const ok = perAgent.filter((x) => Number.isFinite(x));
  const events = hist.map((h) => h.events).sort((a, b) => a - b);
  return {
    historyEvents: { min: events[0], p50: percentile(events, 50), max: events.at(-1) },
    historyBytesMax: Math.max(...hist.map((h) => h.bytes)),
    buildMs: round(buildMs, 0),
    workerReadyMs: round(readyAt - spawned, 0),
    recoveryMs: { ...stats(ok), perAgentMax: round(Math.max(...ok)) },
    recoveredAgents: ok.length,
    duplicateReplies: duplicateReplies[side.name] ?? 0,
    errors: errors.length,
    errorSamples: errors.slice(0, 5),
    workerRssMiB: { beforeKill: mib(rssBefore), afterRecoveryPeak: mib(next.rss.peakKiB) },
  };
}

// ---------- the measured phases (open and closed loop) ----------

/** One side's measured phases, pooled. */
interface Acc {
  phases: Array<Record<string, number | string[] | number[]>>;
  evaluationTurnLatencies: number[];
  otherTurnLatencies: number[];
  cpu: { worker: number | null; server: number | null };
  grown: number;
  grownBytes: number;
  sampledTurns: number;
  peakKiB: number;
  lagMaxMs: number;
  roundP99: number[];
  /** Each round's latency percentiles and the worker's CPU per answered turn (ms): a round after a pause stands out. */
  rounds: Array<{ p50: number; p99: number; max: number; workerCpuMsPerTurn: number | null }>;
  /** --active: the SDK's counters over the window, idle timers due in it, the window's length. */
  sdk: SdkCounters | null;
  silentDueInWindow: number;
  windowS: number;
}

const newAcc = (): Acc => ({
  phases: [],
  evaluationTurnLatencies: [],
  otherTurnLatencies: [],
  cpu: { worker: 0, server: 0 },
  grown: 0,
  grownBytes: 0,
  sampledTurns: 0,
  peakKiB: 0,
  lagMaxMs: 0,
  roundP99: [],
  rounds: [],
  sdk: null,
  silentDueInWindow: 0,
  windowS: 0,
});

/**
 * Rounds alternate the order (A B, B A, A B, …), so drift on a shared box (the server's database
 * growing, a neighbour's load) falls on both sides alike; each side's numbers pool its phases.
 * With --active each side is set up right before its window and retired after it.
 */
async function measureRounds(c: Ctx): Promise<Record<string, Acc>> {
  const acc: Record<string, Acc> = {};
  for (let k = 0; k < c.o.rounds; k++) {
    const order = k % 2 === 0 ? c.sides : [...c.sides].reverse();
    for (const side of order) {
      const a = (acc[side.name] ??= newAcc());
      if (c.realistic) await warmUp(c, side);
      await measurePhase(c, side, a, k);
      if (c.realistic && side !== order.at(-1)) await retire(c, side);
      await sleep(2_000);
    }
  }
  return acc;
}

/**
 * One measured phase of `side` in round `k`, added to `a`: its turns (open or closed loop), and
 * around them the sampled agents' history growth, the worker's and the server's CPU, the worker's
 * RSS peak, this process's event-loop delay and the SDK's counters.
 */
async function measurePhase(c: Ctx, side: Side, a: Acc, k: number): Promise<void> {
  const { o, r } = c;
  const before = await historyOf(r.connection!, o.namespace, sampleOf(c, side));
  say(`${side.name}: measuring (${o.mode} loop, ${o.durationS} s${o.rounds > 1 ? `, round ${k + 1} of ${o.rounds}` : ''})`);
  side.worker.resetPeak();
  const cpu0 = { worker: readCpuMs(side.worker.child.pid), server: serverCpuMs(o, r) };
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const roundTag = o.rounds > 1 ? `${c.tag}r${k}` : c.tag;
  const sdk0 = await scrapeSdkCounters(c.extras[side.name]!.metrics);
  const w0 = performance.now();
  const phase = o.mode === 'open' ? await openLoop(side, o, roundTag, reporting(c, side)) : await closedLoop(side, o, roundTag);
  const w1 = performance.now();
  const sdk1 = await scrapeSdkCounters(c.extras[side.name]!.metrics);
  lag.disable();
  addSdkCounters(a, sdk0, sdk1);
  a.windowS += (w1 - w0) / 1000;
  countSilentDue(c, side, a, w0, w1);
  const cpu1 = { worker: readCpuMs(side.worker.child.pid), server: serverCpuMs(o, r) };
  for (const key of ['worker', 'server'] as const) {
    a.cpu[key] = a.cpu[key] === null || cpu0[key] === null || cpu1[key] === null ? null : a.cpu[key]! + cpu1[key]! - cpu0[key]!;
  }
  const after = await historyOf(r.connection!, o.namespace, sampleOf(c, side));
  // History growth per turn over the sampled agents, every run of each counted (historyOf).
  a.grown += after.reduce((n, h, i) => n + Math.max(0, h.events - before[i]!.events), 0);
  a.grownBytes += after.reduce((n, h, i) => n + Math.max(0, h.bytes - before[i]!.bytes), 0);
  a.sampledTurns += (phase.turnsAnswered / o.active) * after.length;
  a.peakKiB = Math.max(a.peakKiB, side.worker.rss.peakKiB);
  a.lagMaxMs = Math.max(a.lagMaxMs, lag.max / 1e6);
  addPhase(a, phase);
  const { p50, p99, max } = stats(allLatencies(phase));
  const workerMs = cpu0.worker === null || cpu1.worker === null ? null : cpu1.worker - cpu0.worker;
  a.rounds.push({ p50, p99, max, workerCpuMsPerTurn: workerMs === null || phase.turnsAnswered === 0 ? null : round(workerMs / phase.turnsAnswered, 2) });
}

/** The SDK's counters over the window (after − before), added to the side's. */
function addSdkCounters(a: Acc, sdk0: SdkCounters | null, sdk1: SdkCounters | null): void {
  if (!sdk0 || !sdk1) return;
  const d = Object.fromEntries(Object.keys(sdk1).map((key) => [key, sdk1[key as keyof SdkCounters] - sdk0[key as keyof SdkCounters]])) as SdkCounters;
  a.sdk = a.sdk ? (Object.fromEntries(Object.keys(d).map((key) => [key, a.sdk![key as keyof SdkCounters] + d[key as keyof SdkCounters]])) as SdkCounters) : d;
}

/** With an idle watchdog: how many silent agents' idle timers were due in the window [w0, w1]. */
function countSilentDue(c: Ctx, side: Side, a: Acc, w0: number, w1: number): void {
  const { o } = c;
  if (o.idleAfterMs === null) return;
  const since = c.silentSince[side.name] ?? [];
  const due = since.filter((t) => t + o.idleAfterMs! >= w0 && t + o.idleAfterMs! <= w1).length;
  a.silentDueInWindow += due;
  if (c.realistic && due < since.length)
    say(
      `${side.name}: only ${due} of ${since.length} silent agents' idle timers were due in the window (set --idle-after between the setup time, ${round(c.startMs[side.name]! / 1000, 0)} s, and --duration)`,
    );
}

/** A phase's latencies and counts (all its fields but the latencies: the open or closed loop's too), added to the side's. */
function addPhase(a: Acc, phase: PhaseResult): void {
  for (const l of phase.evaluationTurnLatencies) a.evaluationTurnLatencies.push(l);
  for (const l of phase.otherTurnLatencies) a.otherTurnLatencies.push(l);
  a.roundP99.push(stats(allLatencies(phase)).p99 ?? NaN);
  const { evaluationTurnLatencies: _e, otherTurnLatencies: _o, ...rest } = phase;
  a.phases.push(rest as unknown as Record<string, number | string[]>);
}

// ---------- the result ----------

/** One side's entry in the result: its phases pooled. */
function sideResult(c: Ctx, side: Side, a: Acc): Record<string, unknown> {
  const { o, realistic } = c;
  const sum = (key: string) => a.phases.reduce((n, ph) => n + (ph[key] as number), 0);
  const mean = (key: string) => sum(key) / a.phases.length;
  const answered = sum('turnsAnswered');
  const perTurn = (v: number | null) => (v === null || answered === 0 ? null : round(v / answered, 2));
  return {
    latencyMs: stats(allLatencies(a)),
    // Split by turn number (see countSent): on warden, the turns that queued an evaluation; on
    // bare, the same numbers (a control).
    latencyByTurnMs: {
      evaluationTurns: { turns: a.evaluationTurnLatencies.length, ...stats(a.evaluationTurnLatencies) },
      otherTurns: { turns: a.otherTurnLatencies.length, ...stats(a.otherTurnLatencies) },
    },
    turnsOffered: sum('turnsOffered'),
    turnsAnswered: answered,
    errors: sum('errors'),
    errorSamples: a.phases.flatMap((ph) => ph.errorSamples as string[]).slice(0, 5),
    ...(o.mode === 'open'
      ? {
          offeredPerS: round(mean('offeredPerS'), 1),
          achievedPerS: round(mean('achievedPerS'), 1),
          lateSendsMaxMs: round(Math.max(...a.phases.map((ph) => ph.lateSendsMaxMs as number)), 1),
        }
      : { turnsPerS: round(mean('turnsPerS'), 1) }),
    ...(o.rounds > 1 ? { roundP99Ms: a.roundP99, rounds: a.rounds } : {}),
    workerRssMiB: {
      idle: mib(c.idleRss[side.name]!),
      withAgentsCached: mib(c.cachedRss[side.name]!),
      phasePeak: mib(a.peakKiB),
      ...(realistic ? { setupPeak: mib(c.setupPeakKiB[side.name]!) } : {}),
      perCachedAgentKiB: round((c.cachedRss[side.name]! - c.idleRss[side.name]!) / Math.min(side.ids.length, o.cacheSize ?? Infinity), 0),
    },
    // The SDK's own counters over the measured window(s) (Prometheus), and per second: a replay of
    // an evicted agent is a sticky-cache miss (its task came with the whole history).
    ...(a.sdk
      ? {
          sdkCounters: a.sdk,
          replayPerS: {
            stickyCacheMiss: round(a.sdk.stickyCacheMiss / a.windowS, 2),
            workflowTasks: round(a.sdk.workflowTasks / a.windowS, 2),
            forcedEvictions: round(a.sdk.forcedEvictions / a.windowS, 2),
          },
        }
      : {}),
    ...(realistic ? { silentAgents: o.agents - o.active, silentIdleTimersDueInWindow: a.silentDueInWindow } : {}),
    historyPerTurn: { events: round(a.grown / a.sampledTurns, 2), bytes: round(a.grownBytes / a.sampledTurns, 0) },
    // CPU spent per answered turn while measuring: the worker's own work, and the dev server's
    // (null with --address). Steadier than latency or throughput on a shared box.
    cpuMsPerTurn: { worker: perTurn(a.cpu.worker), server: perTurn(a.cpu.server) },
    duplicateReplies: duplicateReplies[side.name] ?? 0,
    startAndWarmupMs: round(c.startMs[side.name]!, 0),
    clientLoopDelayMaxMs: round(a.lagMaxMs, 1),
  };
}

/** warden ÷ bare: each latency percentile, each split's p99 (against bare's turns of the same numbers), CPU per turn, throughput (closed loop). */
function ratios(o: Options, perSide: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const p = (name: string, k: string) => (perSide[name]?.latencyMs as Record<string, number> | undefined)?.[k] ?? NaN;
  const ratio = (k: string) => round(p('warden', k) / p('bare', k), 2);
  const splitP99 = (name: string, k: string) => (perSide[name]?.latencyByTurnMs as Record<string, { p99: number | null }> | undefined)?.[k]?.p99 ?? NaN;
  const splitRatio = (k: string) => round(splitP99('warden', k) / splitP99('bare', k), 2);
  const cpuOf = (name: string, of: 'worker' | 'server' = 'worker') =>
    (perSide[name]?.cpuMsPerTurn as Record<'worker' | 'server', number | null> | undefined)?.[of] ?? NaN;
  return {
    p50: ratio('p50'),
    p90: ratio('p90'),
    p99: ratio('p99'),
    max: ratio('max'),
    evaluationTurnsP99: splitRatio('evaluationTurns'),
    otherTurnsP99: splitRatio('otherTurns'),
    workerCpuPerTurn: round(cpuOf('warden') / cpuOf('bare'), 2),
    ...(Number.isFinite(cpuOf('warden', 'server') / cpuOf('bare', 'server'))
      ? { serverCpuPerTurn: round(cpuOf('warden', 'server') / cpuOf('bare', 'server'), 2) }
      : {}),
    ...(o.mode === 'closed' ? { throughput: round((perSide.warden!.turnsPerS as number) / (perSide.bare!.turnsPerS as number), 2) } : {}),
  };
}

/** The result of an open- or closed-loop run: the settings, each side, the ratios (both sides measured), the machine. */
function fleetResult(c: Ctx, perSide: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const { o } = c;
  return {
    bench: 'fleet',
    mode: o.mode,
    agents: o.agents,
    ...(c.realistic ? { active: o.active } : {}),
    ...(o.idleAfterMs !== null ? { idleAfterS: o.idleAfterMs / 1000 } : {}),
    ...(o.cacheSize !== null ? { cacheSize: o.cacheSize } : {}),
    ...(o.mode === 'open' ? { periodS: o.periodS } : {}),
    durationS: o.durationS,
    rounds: o.rounds,
    evaluator: o.evaluator.kind,
    evalInterval: o.evalInterval,
    spreadEvaluations: o.spreadEvaluations,
    order: o.sides,
    ...perSide,
    ...(perSide.bare && perSide.warden ? { ratios: ratios(o, perSide) } : {}),
    server: o.address ? 'external' : 'dev-server',
    ...(o.serverPids.length > 0 ? { serverPids: o.serverPids } : {}),
    loadavgBefore: c.load0.map((x) => round(x, 2)),
    loadavgAfter: loadavg().map((x) => round(x, 2)),
    node: process.version,
    cpus: cpus().length,
  };
}

/** The phases in their order: setup, workers, warm-up, then recovery or the measured rounds, then the result. */
async function run(o: Options, r: Resources): Promise<Record<string, unknown>> {
  const c = await setUp(o, r);
  await startSides(c);
  // Without --active every side is set up before any is measured (all cached, all alike); with it
  // each side is set up right before its window and retired after (measureRounds), so silent
  // agents' idle timers fire only in their own side's window.
  if (!c.realistic) for (const side of c.sides) await warmUp(c, side);
  if (o.mode === 'recovery') return recoveryResult(c);
  const acc = await measureRounds(c);
  const perSide: Record<string, Record<string, unknown>> = {};
  for (const side of c.sides) perSide[side.name] = sideResult(c, side, acc[side.name]!);
  return fleetResult(c, perSide);
}

benchMain({
  name: 'fleet',
  usage: USAGE,
  say,
  parse: parseArgs,
  timeoutMs: (o) => o.timeoutMs,
  resources: (): Resources => ({ tmp: null, server: null, procs: new Set(), connection: null, warden: null, started: [], stopping: false }),
  run: async (o, r) => ({ result: await run(o, r), ok: true }),
  teardown,
});
