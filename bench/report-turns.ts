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
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { WardenClient, workflowIdFor, type TurnInput } from '../src/client/index.js';
import { freePort } from '../src/devserver/ports.js';
import { startDevServer, type DevServer } from '../src/devserver/server.js';
import { loopbackAddress, pool } from './common.js';

const EVAL_INTERVAL = 5; // the default, stated explicitly so `evaluationsExpected` is right
const RSS_SAMPLE_MS = 200;
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

class UsageError extends Error {}

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
  const int = (name: string, v: string | undefined, min: number, max: number): number => {
    if (v === undefined || !/^\d+$/.test(v)) throw new UsageError(`${name} needs a whole number`);
    const n = Number(v);
    if (n < min || n > max) throw new UsageError(`${name} must be between ${min} and ${max}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const val = () => inline ?? argv[++i];
    switch (flag) {
      case '--agents':
        o.agents = int(flag, val(), 1, LIMITS.agents);
        break;
      case '--turns':
        o.turns = int(flag, val(), 1, LIMITS.turns);
        break;
      case '--address': {
        try {
          o.address = loopbackAddress(val());
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        break;
      }
      case '--namespace': {
        const v = val();
        if (!v) throw new UsageError('--namespace needs a value');
        o.namespace = v;
        break;
      }
      case '--warmup-agents':
        o.warmupAgents = int(flag, val(), 0, 100);
        break;
      case '--warmup-turns':
        o.warmupTurns = int(flag, val(), 1, 100);
        break;
      case '--concurrency':
        o.concurrency = int(flag, val(), 1, 256);
        break;
      case '--timeout-ms':
        o.timeoutMs = int(flag, val(), 1_000, 3_600_000);
        break;
      case '-h':
      case '--help':
        process.stderr.write(`${USAGE}\n`);
        return process.exit(0);
      // falls through (unreachable)
      default:
        throw new UsageError(`unknown argument: ${a}`);
    }
  }
  if (o.warmupAgents < 0) o.warmupAgents = Math.min(10, o.agents);
  return o;
}

const say = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

// ---------- turns: varied, plausible work, so the heuristic evaluator mostly answers OK ----------

const FILES = ['src/parser.ts', 'src/lexer.ts', 'src/cache.ts', 'src/http/routes.ts', 'src/db/pool.ts', 'test/parser.test.ts', 'README.md'];
const TOPICS = ['the retry loop', 'the cache eviction', 'error propagation', 'the config loader', 'pagination', 'the date parsing', 'the connection pool'];

/** Turn `t` of agent `a`: unique text, successful tool calls, tests actually run before any claim. */
function makeTurn(tag: string, a: number, t: number): TurnInput {
  const file = FILES[(a + t) % FILES.length]!;
  const topic = TOPICS[(a * 3 + t) % TOPICS.length]!;
  const base = { id: `${tag}-${a}-${t}`, tokensIn: 800 + ((a * 37 + t * 11) % 400), tokensOut: 120 + ((a + t * 7) % 90), costUsd: 0.002 };
  switch (t % 4) {
    case 0:
      return {
        ...base,
        text: `Turn ${t}: reading ${file} to understand ${topic} before changing anything (agent ${a}).`,
        toolCalls: [{ name: 'read_file', args: { path: file }, result: `${40 + t} lines`, ok: true }],
      };
    case 1:
      return {
        ...base,
        text: `Turn ${t}: editing ${file} so that ${topic} handles the empty case explicitly (agent ${a}).`,
        toolCalls: [{ name: 'edit_file', args: { path: file, patch: `@@ -${t},3 +${t},5 @@ handle empty input in ${topic}` }, result: 'applied', ok: true }],
      };
    case 2:
      return {
        ...base,
        text: `Turn ${t}: running the parser tests after the change to ${topic} (agent ${a}).`,
        toolCalls: [{ name: 'shell', args: { cmd: `npx vitest run test/parser.test.ts -t "case ${a}-${t}"` }, result: `${5 + (t % 7)} passed`, ok: true }],
      };
    default:
      return {
        ...base,
        text: `Turn ${t}: the ${topic} change looks right; next I will check callers of ${file} for the same assumption (agent ${a}).`,
        toolCalls: [{ name: 'grep', args: { pattern: topic.split(' ').at(-1), path: 'src' }, result: `${1 + (t % 5)} matches`, ok: true }],
      };
  }
}

// ---------- the worker process and its RSS ----------

interface WorkerProc {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<number | string>;
  rss: { peakKiB: number; lastKiB: number; samples: number };
  stopSampling(): void;
  stop(): Promise<void>;
}

function readRssKiB(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

function startWorkerProcess(address: string, namespace: string, taskQueue: string): WorkerProc {
  const script = fileURLToPath(new URL('../workers/main.js', import.meta.url));
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace, WARDEN_TASK_QUEUE: taskQueue, WARDEN_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, sig) => resolve(code ?? sig ?? 'unknown')));
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  // The worker logs pino JSON lines on stderr: watch for "worker started", pass on warnings and errors.
  const lines = createInterface({ input: child.stderr! });
  lines.on('line', (line) => {
    let rec: { level?: number; msg?: string } | null = null;
    try {
      rec = JSON.parse(line) as { level?: number; msg?: string };
    } catch {
      process.stderr.write(`[worker] ${line}\n`);
      return;
    }
    if (rec.msg === 'worker started') markReady();
    if ((rec.level ?? 0) >= 40) process.stderr.write(`[worker] ${line}\n`);
  });
  child.stdout!.on('data', (d: Buffer) => process.stderr.write(d));

  const rss = { peakKiB: 0, lastKiB: 0, samples: 0 };
  const sample = () => {
    const kib = child.pid ? readRssKiB(child.pid) : null;
    if (kib === null) return;
    rss.lastKiB = kib;
    rss.peakKiB = Math.max(rss.peakKiB, kib);
    rss.samples += 1;
  };
  sample();
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  timer.unref();
  return {
    child,
    ready,
    exited,
    rss,
    stopSampling: () => {
      sample();
      clearInterval(timer);
    },
    async stop() {
      clearInterval(timer);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM'); // the SDK shuts down gracefully (shutdownGraceTime 10 s)
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

// ---------- the run ----------

interface Resources {
  tmp: string | null;
  server: DevServer | null;
  worker: WorkerProc | null;
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
  if (r.server) {
    say('stopping dev server');
    await r.server.stop().catch((err) => say(`server stop: ${String(err)}`));
    r.server = null;
  }
  if (r.tmp) {
    rmSync(r.tmp, { recursive: true, force: true });
    r.tmp = null;
  }
}

async function run(o: Options, r: Resources): Promise<{ result: Record<string, unknown>; ok: boolean }> {
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const taskQueue = `warden-bench-${tag}`;

  let address: string;
  if (o.address) {
    address = o.address;
    say(`using the Temporal server at ${address}`);
  } else {
    r.tmp = mkdtempSync(join(tmpdir(), 'warden-bench-'));
    const port = await freePort();
    say(`starting a dev server on 127.0.0.1:${port} (SQLite in ${r.tmp})`);
    r.server = await startDevServer({ port, uiPort: false, dbFile: join(r.tmp, 'temporal.db'), namespace: o.namespace, say });
    address = r.server.address;
  }

  say(`starting the worker on task queue ${taskQueue}`);
  r.worker = startWorkerProcess(address, o.namespace, taskQueue);
  const worker = r.worker;
  const early = await Promise.race([
    worker.ready.then(() => null),
    worker.exited.then((c) => `worker exited (${c}) before it was ready`),
    sleep(120_000).then(() => 'worker not ready after 120 s'),
  ]);
  if (early) throw new Error(early);

  r.client = await WardenClient.connect({ address, namespace: o.namespace, taskQueue });
  const client = r.client;
  const spec = (agentId: string) => ({
    agentId,
    task: `Benchmark agent ${agentId}: fix the empty-input handling in the parser and keep the tests green.`,
    supervisor: { evalInterval: EVAL_INTERVAL },
    evaluator: { kind: 'heuristic' as const },
  });
  // A workflow task per agent has run (the worker has it cached) once a status query answers.
  const startAll = (ids: string[]) =>
    pool(ids, o.concurrency, async (id) => {
      if (r.stopping) throw new Stopping();
      r.agentIds.push(id);
      await tracked(r, () => client.start(spec(id)));
      await tracked(r, () => client.status(id));
    });
  const reportAll = async (ids: string[], turns: number, onLatency: ((ms: number) => void) | null) => {
    let whispers = 0;
    await Promise.all(
      ids.map(async (id, a) => {
        for (let t = 0; t < turns; t++) {
          const t0 = performance.now();
          const reply = await tracked(r, () => client.reportTurn(id, makeTurn(tag, a, t)));
          const ms = performance.now() - t0;
          if (!reply.accepted || reply.duplicate) throw new Error(`turn ${t} of ${id} not accepted: ${JSON.stringify(reply)}`);
          whispers += reply.whispers.length;
          onLatency?.(ms);
        }
      }),
    );
    return whispers;
  };

  // Warm-up (not measured): workflow bundle loaded, connections up, the evaluation path exercised.
  const warmIds = Array.from({ length: o.warmupAgents }, (_, i) => `bench-${tag}-warm-${i}`);
  if (warmIds.length > 0) {
    say(`warm-up: ${warmIds.length} agents × ${o.warmupTurns} turns`);
    await startAll(warmIds);
    await reportAll(warmIds, o.warmupTurns, null);
  }

  const ids = Array.from({ length: o.agents }, (_, i) => `bench-${tag}-${i}`);
  say(`starting ${ids.length} agents`);
  const s0 = performance.now();
  await startAll(ids);
  const startMs = performance.now() - s0;

  say(`measuring: ${ids.length} agents × ${o.turns} turns, concurrently`);
  const latencies: number[] = [];
  const m0 = performance.now();
  const whispers = await reportAll(ids, o.turns, (ms) => latencies.push(ms));
  const durationMs = performance.now() - m0;

  // Let the evaluations queued by the last turns finish, then count them.
  const expected = o.agents * Math.floor(o.turns / EVAL_INTERVAL);
  const settleDeadline = Date.now() + 60_000;
  let evals = { total: 0, ok: 0, flagged: 0, skipped: 0 };
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
      break;
    }
    if (Date.now() > settleDeadline) {
      say(`only ${evals.total} of ${expected} evaluations finished within 60 s`);
      break;
    }
    await sleep(250);
  }
  worker.stopSampling();
  if (r.stopping) throw new Stopping();

  latencies.sort((a, b) => a - b);
  const turns = latencies.length;
  const mib = (kib: number) => round(kib / 1024, 1);
  const result = {
    bench: 'report-turns',
    agents: o.agents,
    turnsPerAgent: o.turns,
    turns,
    durationMs: round(durationMs, 1),
    turnsPerSecond: round((turns / durationMs) * 1000, 1),
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? NaN),
    },
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

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }

  const r: Resources = { tmp: null, server: null, worker: null, client: null, agentIds: [], inFlight: new Set(), stopping: false };
  let cleaning: Promise<void> | null = null;
  const cleanup = () => (cleaning ??= teardown(r, o.concurrency));
  // `on`, not `once`: while a listener of ours stays registered, execa's signal-exit hook does not
  // re-raise the signal and kill this process before the teardown has finished.
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    say(`${sig}: tearing down`);
    void cleanup().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Once tearing down, a straggling gRPC call failing on a closed channel must not kill this
  // process before the worker and the dev server are stopped.
  const straggler = (err: unknown) => {
    if (!r.stopping) {
      say(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      void cleanup().finally(() => process.exit(1));
      return;
    }
    say(`ignored during teardown: ${err instanceof Error ? err.message : String(err)}`);
  };
  process.on('uncaughtException', straggler);
  process.on('unhandledRejection', straggler);

  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`benchmark did not finish within ${o.timeoutMs} ms`)), o.timeoutMs);
  });
  try {
    const { result, ok } = await Promise.race([run(o, r), timeout]);
    await cleanup();
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (!ok) say('not every expected evaluation ran: failing the run');
    return ok ? 0 : 1;
  } catch (err) {
    if (signalled) return new Promise<number>(() => {}); // the signal handler exits once torn down
    say(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanup().catch((e) => say(`teardown: ${String(e)}`));
    return 1;
  } finally {
    clearTimeout(timer);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    say(`fatal: ${String(err)}`);
    process.exit(1);
  },
);
