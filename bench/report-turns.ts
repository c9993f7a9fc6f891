/**
 * Benchmark: N supervised agents reporting turns concurrently, end to end.
 *
 *   npm run build && npm run bench -- --agents 100 --turns 20
 *
 * Each agent is one `agentWorkflow` started through the typed client; each reports `--turns` turns
 * one after another (an agent waits for the reply before its next turn, like a real agent), all
 * agents at once. The supervisor runs as configured by default (heuristic evaluator, one evaluation
 * every 5 turns). Measured: the report→reply latency of every `reportTurn` update, turns/second
 * over the measured phase, and the worker's RSS (a separate `node dist/workers/main.js` process,
 * VmRSS sampled every 200 ms).
 *
 * By default it starts its own headless dev server (free port, temporary SQLite file); with
 * `--address host:port` it uses an existing server, still with its own worker on a unique task
 * queue. Everything it started is torn down at the end, on error and on SIGINT/SIGTERM too; every
 * agent it started is terminated. Loopback only.
 *
 * stdout: exactly one JSON object. Everything else goes to stderr. Exit 0 ok, 1 failure, 2 bad usage.
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { WardenClient, workflowIdFor } from '../src/client/index.js';
import {
  addressArg,
  benchMain,
  eachFlag,
  latencyStats,
  makeTurn,
  numArg,
  type OwnServer,
  pool,
  type Proc,
  round,
  serverAddress,
  sleep,
  startWorkerMain,
  stopOwnServer,
  valueArg,
  waitReady,
} from './common.js';

const EVAL_INTERVAL = 5; // the default, stated explicitly so `evaluationsExpected` is right
const LIMITS = { agents: 2000, turns: 1000 } as const;

interface Options {
  agents: number;
  turns: number;
  address: string | null;
  namespace: string;
  warmupAgents: number;
  warmupTurns: number;
  concurrency: number;
  timeoutMs: number;
}

const USAGE = `usage: node dist/bench/report-turns.js [options]
  --agents N          agents reporting concurrently (default 100, max ${LIMITS.agents})
  --turns T           turns per agent (default 20, max ${LIMITS.turns})
  --address HOST:PORT use this Temporal server (loopback only) instead of starting a dev server
  --namespace NS      namespace (default "default")
  --warmup-agents N   extra agents for the unmeasured warm-up (default min(10, agents))
  --warmup-turns T    turns per warm-up agent (default 5: one evaluation each)
  --concurrency N     parallel workflow starts / status queries / terminations (default 32)
  --timeout-ms MS     give up after this long in total (default 600000)
Prints one JSON object on stdout; progress and the worker's warnings go to stderr.`;

function parseArgs(argv: string[]): Options {
  const o: Options = {
    agents: 100,
    turns: 20,
    address: null,
    namespace: 'default',
    warmupAgents: -1,
    warmupTurns: 5,
    concurrency: 32,
    timeoutMs: 600_000,
  };
  eachFlag(argv, USAGE, (flag, val) => {
    switch (flag) {
      case '--agents':
        o.agents = numArg(flag, val(), 1, LIMITS.agents);
        break;
      case '--turns':
        o.turns = numArg(flag, val(), 1, LIMITS.turns);
        break;
      case '--address':
        o.address = addressArg(val());
        break;
      case '--namespace':
        o.namespace = valueArg(flag, val());
        break;
      case '--warmup-agents':
        o.warmupAgents = numArg(flag, val(), 0, 100);
        break;
      case '--warmup-turns':
        o.warmupTurns = numArg(flag, val(), 1, 100);
        break;
      case '--concurrency':
        o.concurrency = numArg(flag, val(), 1, 256);
        break;
      case '--timeout-ms':
        o.timeoutMs = numArg(flag, val(), 1_000, 3_600_000);
        break;
      default:
        return false;
    }
    return true;
  });
  if (o.warmupAgents < 0) o.warmupAgents = Math.min(10, o.agents);
  return o;
}

const say = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// ---------- the run ----------

interface Resources extends OwnServer {
  worker: Proc | null;
  client: WardenClient | null;
  /** Every agent id the run has tried to start (pushed before the start call). */
  agentIds: string[];
  /** Client calls in flight; teardown lets them settle before it terminates and disconnects. */
  inFlight: Set<Promise<unknown>>;
  /** Set by teardown: the run issues no new calls. */
  stopping: boolean;
}

class Stopping extends Error {
  constructor() {
    super('stopping');
  }
}

/** Run one client call unless the run is stopping; teardown waits for it. */
function tracked<T>(r: Resources, fn: () => Promise<T>): Promise<T> {
  if (r.stopping) return Promise.reject(new Stopping());
  const p = fn();
  const settled = p.then(
    () => undefined,
    () => undefined,
  );
  r.inFlight.add(settled);
  void settled.then(() => r.inFlight.delete(settled));
  return p;
}

async function teardown(r: Resources, concurrency: number): Promise<void> {
  r.stopping = true;
  if (r.inFlight.size > 0) {
    say(`waiting for ${r.inFlight.size} calls in flight`);
    await Promise.race([Promise.all(r.inFlight), sleep(15_000)]);
  }
  if (r.client && r.agentIds.length > 0) {
    say(`terminating ${r.agentIds.length} agents`);
    let terminated = 0;
    const ids = r.agentIds.splice(0);
    await pool(ids, concurrency, async (id) => {
      try {
        await r.client!.client.workflow.getHandle(workflowIdFor(id)).terminate('benchmark finished');
        terminated += 1;
      } catch (err) {
        // Already closed or never started: nothing to clean.
        if (!/not found|already completed|already.*closed/i.test(String((err as Error)?.message ?? err))) say(`terminate ${id}: ${String(err)}`);
      }
    });
    say(`terminated ${terminated}`);
  }
  if (r.worker) {
    say('stopping worker');
    await r.worker.stop().catch((err) => say(`worker stop: ${String(err)}`));
    r.worker = null;
  }
  if (r.client) {
    await r.client.close().catch(() => undefined);
    r.client = null;
  }
  await stopOwnServer(r, say);
}

/** What the phases of one run share. */
interface Ctx {
  o: Options;
  r: Resources;
  tag: string;
  worker: Proc;
  client: WardenClient;
}

/** Setup: the server (given, or a dev server of our own), the worker on a task queue of its own, ready, and the client. */
async function setUp(o: Options, r: Resources): Promise<Ctx> {
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const taskQueue = `warden-bench-${tag}`;

  if (o.address) say(`using the Temporal server at ${o.address}`);
  const address = await serverAddress(r, o.address, { prefix: 'warden-bench-', namespace: o.namespace, say });

  say(`starting the worker on task queue ${taskQueue}`);
  r.worker = startWorkerMain(address, o.namespace, taskQueue, { WARDEN_LOG_LEVEL: 'info' }, { forwardStdout: true });
  const worker = r.worker;
  await waitReady(worker);

  r.client = await WardenClient.connect({ address, namespace: o.namespace, taskQueue });
  return { o, r, tag, worker, client: r.client };
}

/** Start these agents; a workflow task per agent has run (the worker has it cached) once a status query answers. */
async function startAll(c: Ctx, ids: string[]): Promise<void> {
  const { o, r, client } = c;
  const spec = (agentId: string) => ({
    agentId,
    task: `Benchmark agent ${agentId}: fix the empty-input handling in the parser and keep the tests green.`,
    supervisor: { evalInterval: EVAL_INTERVAL },
    evaluator: { kind: 'heuristic' as const },
  });
  await pool(ids, o.concurrency, async (id) => {
    if (r.stopping) throw new Stopping();
    r.agentIds.push(id);
    await tracked(r, () => client.start(spec(id)));
    await tracked(r, () => client.status(id));
  });
}

/** Every agent reports `turns` turns, one after another, all agents at once; the whispers they were answered with. */
async function reportAll(c: Ctx, ids: string[], turns: number, onLatency: ((ms: number) => void) | null): Promise<number> {
  const { r, client, tag } = c;
  let whispers = 0;
  await Promise.all(
    ids.map(async (id, a) => {
      for (let t = 0; t < turns; t++) {
        const t0 = performance.now();
        const reply = await tracked(r, () => client.reportTurn(id, makeTurn(`${tag}-${a}-${t}`, a, t)));
        const ms = performance.now() - t0;
        if (!reply.accepted || reply.duplicate) throw new Error(`turn ${t} of ${id} not accepted: ${JSON.stringify(reply)}`);
        whispers += reply.whispers.length;
        onLatency?.(ms);
      }
    }),
  );
  return whispers;
}

type Evaluations = { total: number; ok: number; flagged: number; skipped: number };

/** Let the evaluations queued by the last turns finish (up to 60 s), then count them. */
async function settleEvaluations(c: Ctx, ids: string[], expected: number): Promise<Evaluations> {
  const { o, r, client } = c;
  const settleDeadline = Date.now() + 60_000;
  let evals: Evaluations = { total: 0, ok: 0, flagged: 0, skipped: 0 };
  for (;;) {
    const statuses = await pool(ids, o.concurrency, (id) => tracked(r, () => client.status(id)));
    evals = statuses.reduce(
      (acc, s) => ({
        total: acc.total + s.evaluations.total,
        ok: acc.ok + s.evaluations.ok,
        flagged: acc.flagged + s.evaluations.flagged,
        skipped: acc.skipped + s.evaluations.skipped,
      }),
      { total: 0, ok: 0, flagged: 0, skipped: 0 },
    );
    if (evals.total >= expected) {
      // A skipped evaluation (timeout, crash, superseded) is counted, not a verdict: say why.
      const reasons = [...new Set(statuses.filter((st) => st.evaluations.skipped > 0).map((st) => st.lastSkipReason ?? '(no reason)'))];
      if (reasons.length > 0) say(`skipped evaluations, last reasons: ${reasons.slice(0, 5).join(' | ')}`);
      return evals;
    }
    if (Date.now() > settleDeadline) {
      say(`only ${evals.total} of ${expected} evaluations finished within 60 s`);
      return evals;
    }
    await sleep(250);
  }
}

/** The phases in their order: setup, warm-up, starting the agents, the measured turns, the evaluations settling, the result. */
async function run(o: Options, r: Resources): Promise<{ result: Record<string, unknown>; ok: boolean }> {
  const c = await setUp(o, r);
  const { tag, worker } = c;

  // Warm-up (not measured): workflow bundle loaded, connections up, the evaluation path exercised.
  const warmIds = Array.from({ length: o.warmupAgents }, (_, i) => `bench-${tag}-warm-${i}`);
  if (warmIds.length > 0) {
    say(`warm-up: ${warmIds.length} agents × ${o.warmupTurns} turns`);
    await startAll(c, warmIds);
    await reportAll(c, warmIds, o.warmupTurns, null);
  }

  const ids = Array.from({ length: o.agents }, (_, i) => `bench-${tag}-${i}`);
  say(`starting ${ids.length} agents`);
  const s0 = performance.now();
  await startAll(c, ids);
  const startMs = performance.now() - s0;

  say(`measuring: ${ids.length} agents × ${o.turns} turns, concurrently`);
  const latencies: number[] = [];
  const m0 = performance.now();
  const whispers = await reportAll(c, ids, o.turns, (ms) => latencies.push(ms));
  const durationMs = performance.now() - m0;

  const expected = o.agents * Math.floor(o.turns / EVAL_INTERVAL);
  const evals = await settleEvaluations(c, ids, expected);
  worker.stopSampling();
  if (r.stopping) throw new Stopping();

  const turns = latencies.length;
  const mib = (kib: number) => round(kib / 1024, 1);
  const result = {
    bench: 'report-turns',
    agents: o.agents,
    turnsPerAgent: o.turns,
    turns,
    durationMs: round(durationMs, 1),
    turnsPerSecond: round((turns / durationMs) * 1000, 1),
    latencyMs: latencyStats(latencies, 2),
    workerRssMiB: { peak: mib(worker.rss.peakKiB), final: mib(worker.rss.lastKiB) },
    evaluations: evals.total,
    evaluationsExpected: expected,
    evaluationVerdicts: { ok: evals.ok, flagged: evals.flagged, skipped: evals.skipped },
    whispers,
    startMs: round(startMs, 1),
    warmup: { agents: warmIds.length, turnsPerAgent: warmIds.length > 0 ? o.warmupTurns : 0 },
    server: o.address ? 'external' : 'dev-server',
    node: process.version,
    cpus: cpus().length,
  };
  return { result, ok: evals.total >= expected };
}

benchMain({
  name: 'bench',
  usage: USAGE,
  say,
  parse: parseArgs,
  timeoutMs: (o) => o.timeoutMs,
  resources: (): Resources => ({ tmp: null, server: null, worker: null, client: null, agentIds: [], inFlight: new Set(), stopping: false }),
  run,
  teardown: (r, o) => teardown(r, o.concurrency),
  notOk: 'not every expected evaluation ran: failing the run',
});
