/**
 * Shared plumbing of the benchmarks: rounding, percentiles, the `--address` and whole-number flag
 * checks; for the single-process ones (replay-time, agent-memory) "use the given server or start a
 * headless dev server on a temporary SQLite file, and always clean it up"; and for the ones that
 * run worker processes (report-turns, fleet) the turn payloads, the worker child process with its
 * RSS, their own dev server, and a main that tears everything down on every way out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import type { TurnInput } from '../src/client/index.js';
import { freePort } from '../src/devserver/ports.js';
import { startDevServer, type DevServer } from '../src/devserver/server.js';

/** Run `fn` over `items` with at most `limit` (at least 1) in flight; the results in the order of `items`. */
export const pool = <T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> =>
  pLimit(Math.max(1, Math.floor(limit))).map(items, fn);

export const round = (n: number, d = 1): number => Math.round(n * 10 ** d) / 10 ** d;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\]):\d+$/;

/** The value of `--address`: a loopback host:port, else a usage error. */
export function loopbackAddress(v: string | undefined): string {
  if (!v || !LOOPBACK.test(v)) throw new Error('--address must be a loopback host:port, e.g. 127.0.0.1:7233');
  return v;
}

/** The value of a whole-number flag within [min, max], else a usage error naming the flag. */
export function wholeArg(flag: string, v: string | undefined, min: number, max: number): number {
  if (!v || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new Error(`${flag} needs a whole number between ${min} and ${max}`);
  return Number(v);
}

/** Runs `fn` against `address`, or against a dev server of its own that is stopped and deleted afterwards. */
export async function withServer<T>(address: string | null, prefix: string, say: (msg: string) => void, fn: (address: string) => Promise<T>): Promise<T> {
  if (address) return fn(address);
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  let server: DevServer | null = null;
  try {
    server = await startDevServer({ port: await freePort(), uiPort: false, dbFile: join(tmp, 'temporal.db'), say });
    return await fn(server.address);
  } finally {
    await server?.stop().catch(() => undefined);
    rmSync(tmp, { recursive: true, force: true });
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Nearest-rank percentile of an ascending array (NaN when it is empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Nearest-rank p50, p90, p99 and the max of `latencies`, rounded to `d` digits (NaN, null in JSON, when empty). */
export function latencyStats(latencies: readonly number[], d = 1): { p50: number; p90: number; p99: number; max: number } {
  const s = [...latencies].sort((a, b) => a - b);
  return { p50: round(percentile(s, 50), d), p90: round(percentile(s, 90), d), p99: round(percentile(s, 99), d), max: round(s.at(-1) ?? NaN, d) };
}

// ---------- turns: varied, plausible work, so the heuristic evaluator answers OK ----------

const FILES = ['src/parser.ts', 'src/lexer.ts', 'src/cache.ts', 'src/http/routes.ts', 'src/db/pool.ts', 'test/parser.test.ts', 'README.md'];
const TOPICS = ['the retry loop', 'the cache eviction', 'error propagation', 'the config loader', 'pagination', 'the date parsing', 'the connection pool'];

/** Turn `t` of agent `a`, with the turn id `id`: unique text, successful tool calls, tests actually run before any claim. */
export function makeTurn(id: string, a: number, t: number): TurnInput {
  const file = FILES[(a + t) % FILES.length]!;
  const topic = TOPICS[(a * 3 + t) % TOPICS.length]!;
  const base = { id, tokensIn: 800 + ((a * 37 + t * 11) % 400), tokensOut: 120 + ((a + t * 7) % 90), costUsd: 0.002 };
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

// ---------- a worker child process and its RSS ----------

const RSS_SAMPLE_MS = 200;

/** VmRSS of a process, KiB (null when it is gone or /proc is not readable). */
export function readRssKiB(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export interface Proc {
  name: string;
  child: ChildProcess;
  spawnedAt: number;
  /** Resolves with the time (performance.now()) the process logged its ready message. */
  ready: Promise<number>;
  exited: Promise<number | string>;
  /** Sampled every 200 ms from /proc/<pid>/status. */
  rss: { peakKiB: number; lastKiB: number };
  /** Restart the peak: from now on `rss.peakKiB` is the peak of this phase. */
  resetPeak(): void;
  /** Take a last sample and stop sampling. */
  stopSampling(): void;
  /** Stop it with `signal` (SIGTERM: the SDK shuts down gracefully), SIGKILL after 15 s. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface ProcOptions {
  /** Pass the child's stdout on to our stderr (default: drop it). */
  forwardStdout?: boolean;
  /** Cut the warning and error lines passed on to our stderr to this many characters. */
  maxLogLine?: number;
  /** Warning and error lines not to pass on. */
  quiet?: (line: string) => boolean;
  /** Sample the RSS (default true); without, `rss` stays at zero. */
  sampleRss?: boolean;
}

/**
 * A Node child process (`node ...args`) that logs pino JSON lines on stderr: ready once it logs
 * `readyMsg`; its warnings, errors and non-JSON lines are passed on to our stderr as `[name] …`.
 */
export function startProc(name: string, args: string[], env: Record<string, string>, readyMsg: string, opts: ProcOptions = {}): Proc {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, sig) => resolve(code ?? sig ?? 'unknown')));
  let markReady: (t: number) => void = () => {};
  const ready = new Promise<number>((resolve) => (markReady = resolve));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    let rec: { level?: number; msg?: string } | null = null;
    try {
      rec = JSON.parse(line) as { level?: number; msg?: string };
    } catch {
      process.stderr.write(`[${name}] ${line}\n`);
      return;
    }
    if (rec.msg === readyMsg) markReady(performance.now());
    if ((rec.level ?? 0) >= 40 && !opts.quiet?.(line)) process.stderr.write(`[${name}] ${opts.maxLogLine ? line.slice(0, opts.maxLogLine) : line}\n`);
  });
  child.stdout!.on('data', opts.forwardStdout ? (d: Buffer) => process.stderr.write(d) : () => undefined);
  const rss = { peakKiB: 0, lastKiB: 0 };
  const sample = () => {
    const kib = child.pid ? readRssKiB(child.pid) : null;
    if (kib === null) return;
    rss.lastKiB = kib;
    rss.peakKiB = Math.max(rss.peakKiB, kib);
  };
  const sampling = opts.sampleRss ?? true;
  if (sampling) sample();
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  timer.unref();
  if (!sampling) clearInterval(timer);
  return {
    name,
    child,
    spawnedAt,
    ready,
    exited,
    rss,
    resetPeak() {
      sample();
      rss.peakKiB = rss.lastKiB;
    },
    stopSampling() {
      sample();
      clearInterval(timer);
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      clearInterval(timer);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** A worker process (`node dist/workers/main.js`) on `taskQueue`, named `worker`, ready once it logs "worker started". */
export function startWorkerMain(address: string, namespace: string, taskQueue: string, env: Record<string, string> = {}, opts: ProcOptions = {}): Proc {
  const script = fileURLToPath(new URL('../workers/main.js', import.meta.url));
  return startProc(
    'worker',
    [script],
    { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace, WARDEN_TASK_QUEUE: taskQueue, ...env },
    'worker started',
    opts,
  );
}

/** When `p` is ready (see Proc.ready); an error if it exits first or is not ready within 120 s. */
export async function waitReady(p: Proc): Promise<number> {
  const r = await Promise.race([
    p.ready,
    p.exited.then((c) => new Error(`${p.name} exited (${c}) before it was ready`)),
    sleep(120_000).then(() => new Error(`${p.name} not ready after 120 s`)),
  ]);
  if (r instanceof Error) throw r;
  return r;
}

// ---------- a dev server of the run's own ----------

/** The run's own dev server and its temporary directory (null when it uses `--address`, or once stopped). */
export interface OwnServer {
  tmp: string | null;
  server: DevServer | null;
}

/** `address`, or the address of a headless dev server started into `own` on a free port (SQLite in a temporary directory). */
export async function serverAddress(
  own: OwnServer,
  address: string | null,
  opts: { prefix: string; namespace: string; say: (msg: string) => void },
): Promise<string> {
  if (address) return address;
  own.tmp = mkdtempSync(join(tmpdir(), opts.prefix));
  const port = await freePort();
  opts.say(`starting a dev server on 127.0.0.1:${port} (SQLite in ${own.tmp})`);
  own.server = await startDevServer({ port, uiPort: false, dbFile: join(own.tmp, 'temporal.db'), namespace: opts.namespace, say: opts.say });
  return own.server.address;
}

/** Stop the run's own dev server, if any, and delete its directory. */
export async function stopOwnServer(own: OwnServer, say: (msg: string) => void): Promise<void> {
  if (own.server) {
    say('stopping dev server');
    await own.server.stop().catch((err) => say(`server stop: ${String(err)}`));
    own.server = null;
  }
  if (own.tmp) {
    rmSync(own.tmp, { recursive: true, force: true });
    own.tmp = null;
  }
}

// ---------- main: usage, one JSON object, teardown on every way out ----------

export class UsageError extends Error {}

/** Run `main` and exit with the code it returns; what it throws goes to stderr after `prefix`, exit 1. */
export function exitWith(main: () => Promise<number>, prefix = ''): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${prefix}${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}

/**
 * Walk the flags of `argv` (`--flag value` or `--flag=value`): `-h`/`--help` prints `usage` on
 * stderr and exits 0; `on` takes any other flag (`val()` reads its value) and returns false for
 * one it does not know, a UsageError.
 */
export function eachFlag(argv: string[], usage: string, on: (flag: string, val: () => string | undefined) => boolean): void {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const val = () => inline ?? argv[++i];
    if (flag === '-h' || flag === '--help') {
      process.stderr.write(`${usage}\n`);
      process.exit(0);
    }
    if (!on(flag, val)) throw new UsageError(`unknown argument: ${a}`);
  }
}

/** The value of a number flag within [min, max] (a whole number unless `whole` is false), else a UsageError. */
export function numArg(flag: string, v: string | undefined, min: number, max: number, whole = true): number {
  if (v === undefined || !(whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(v)) throw new UsageError(`${flag} needs a ${whole ? 'whole ' : ''}number`);
  const n = Number(v);
  if (n < min || n > max) throw new UsageError(`${flag} must be between ${min} and ${max}`);
  return n;
}

/** The value of a flag that needs one, else a UsageError. */
export function valueArg(flag: string, v: string | undefined): string {
  if (!v) throw new UsageError(`${flag} needs a value`);
  return v;
}

/** The value of `--address` (see loopbackAddress), else a UsageError. */
export function addressArg(v: string | undefined): string {
  try {
    return loopbackAddress(v);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export interface BenchMain<O, R extends { stopping: boolean }> {
  /** The name in the usage error line (`name: message`). */
  name: string;
  usage: string;
  say: (msg: string) => void;
  /** The options; a UsageError exits 2 with the usage. */
  parse: (argv: string[]) => O;
  timeoutMs: (o: O) => number;
  /** What the run starts, for `teardown` to stop; `stopping` is set by teardown. */
  resources: () => R;
  run: (o: O, r: R) => Promise<{ result: unknown; ok: boolean }>;
  teardown: (r: R, o: O) => Promise<void>;
  /** Said when the run printed its result but is not ok (exit 1). */
  notOk?: string;
}

/**
 * Parse, run within the timeout, tear down, then print the result as one JSON line and exit 0 (1
 * when not ok). On failure, SIGINT/SIGTERM or an uncaught error: tear down first, then exit 1, 130
 * or 143.
 */
export function benchMain<O, R extends { stopping: boolean }>(b: BenchMain<O, R>): void {
  main(b).then(
    (code) => process.exit(code),
    (err) => {
      b.say(`fatal: ${String(err)}`);
      process.exit(1);
    },
  );
}

async function main<O, R extends { stopping: boolean }>(b: BenchMain<O, R>): Promise<number> {
  let o: O;
  try {
    o = b.parse(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${b.name}: ${err.message}\n${b.usage}\n`);
      return 2;
    }
    throw err;
  }
  const r = b.resources();
  let cleaning: Promise<void> | null = null;
  const cleanup = () => (cleaning ??= b.teardown(r, o));
  // `on`, not `once`: while a listener of ours stays registered, execa's signal-exit hook does not
  // re-raise the signal and kill this process before the teardown has finished.
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    b.say(`${sig}: tearing down`);
    void cleanup().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Once tearing down, a straggling gRPC call failing on a closed channel must not kill this
  // process before the workers and the dev server are stopped.
  const straggler = (err: unknown) => {
    if (!r.stopping) {
      b.say(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      void cleanup().finally(() => process.exit(1));
      return;
    }
    b.say(`ignored during teardown: ${err instanceof Error ? err.message : String(err)}`);
  };
  process.on('uncaughtException', straggler);
  process.on('unhandledRejection', straggler);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`benchmark did not finish within ${b.timeoutMs(o)} ms`)), b.timeoutMs(o));
  });
  try {
    const { result, ok } = await Promise.race([b.run(o, r), timeout]);
    await cleanup();
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (!ok && b.notOk) b.say(b.notOk);
    return ok ? 0 : 1;
  } catch (err) {
    if (signalled) return new Promise<number>(() => {}); // the signal handler exits once torn down
    b.say(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await cleanup().catch((e) => b.say(`teardown: ${String(e)}`));
    return 1;
  } finally {
    clearTimeout(timer);
  }
}
