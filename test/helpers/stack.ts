/**
 * Test stack: a real `temporal server start-dev` on free ports with a fresh SQLite file, and a real
 * warden worker (in-process with a once-per-file bundle, or as a separate process that tests can
 * SIGKILL). In-process workers and replays run the prebuilt dist/workflow-bundle.js when it is current
 * (see workflowBundle).
 */
import { afterAll, beforeAll } from 'vitest';
import { bundleWorkflowCode, type WorkflowBundleOption } from '@temporalio/worker';
import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { WardenClient } from '../../src/client/index.js';
import { startDevServer, type DevServer, type DevServerOptions } from '../../src/devserver/server.js';
import { freePort } from '../../src/devserver/ports.js';
import { startWorker, type WorkerHandle } from '../../workers/main.js';
import { BUNDLE_OPTIONS } from '../../workers/bundle.js';
import { currentPrebuiltBundle } from './bundle.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const quietLog = pino({ level: process.env.WARDEN_TEST_LOG ?? 'silent' });

export interface TestServer extends DevServer {
  dir: string;
  restart(): Promise<TestServer>;
}

export async function startTestServer(opts: Partial<DevServerOptions> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-test-'));
  const dbFile = opts.dbFile ?? join(dir, 'temporal.db');
  let port = opts.port ?? (await freePort());
  const logFile = join(dir, 'server.log');
  let server: DevServer;
  try {
    server = await startDevServer({ uiPort: false, logFile, ...opts, port, dbFile });
  } catch (err) {
    // A free port can be taken by another process between the check and the bind: try once more.
    if (opts.port !== undefined || !/exited before it was ready/.test(String(err))) throw err;
    port = await freePort();
    server = await startDevServer({ uiPort: false, logFile, ...opts, port, dbFile });
  }
  const wrap = (s: DevServer): TestServer => ({
    ...s,
    dir,
    async restart() {
      await s.stop();
      return wrap(await startDevServer({ uiPort: false, logFile, ...opts, port, dbFile }));
    },
  });
  return wrap(server);
}

let bundle: Promise<WorkflowBundleOption> | null = null;
/**
 * The workflow code, once per test file: the prebuilt bundle when it is current (`npm test` builds
 * it first), else bundled from source (about six seconds of webpack).
 */
export function workflowBundle(): Promise<WorkflowBundleOption> {
  bundle ??= (async () => {
    const codePath = await currentPrebuiltBundle();
    if (codePath) return { codePath };
    return bundleWorkflowCode({ ...BUNDLE_OPTIONS, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never });
  })();
  return bundle;
}

/** Activities that replace warden's own by name: workflow scenarios with fake activities. */
export type ActivityOverrides = NonNullable<Parameters<typeof startWorker>[0]>['activities'];

export async function inProcessWorker(server: DevServer, taskQueue = 'warden', activities?: ActivityOverrides): Promise<WorkerHandle> {
  return startWorker({ address: server.address, namespace: server.namespace, taskQueue, log: quietLog, workflowBundle: await workflowBundle(), activities });
}

/** A worker in its own process (node dist/workers/main.js), so a test can SIGKILL it. */
export function workerProcess(server: DevServer, env: Record<string, string> = {}): ResultPromise {
  return execa('node', [join(ROOT, 'dist/workers/main.js')], {
    env: { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace, WARDEN_LOG_LEVEL: 'warn', ...env },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: process.env.WARDEN_TEST_LOG ? 'inherit' : 'ignore',
    reject: false,
    cleanup: true,
  });
}

export async function clientFor(server: DevServer, taskQueue = 'warden'): Promise<WardenClient> {
  return WardenClient.connect({ address: server.address, namespace: server.namespace, taskQueue });
}

/** Poll `fn` until it returns a truthy value or the time runs out. */
export async function eventually<T>(fn: () => Promise<T>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${opts.what ?? 'condition'}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}

/** Remove a scratch directory; retried, since a process that just exited (claude, codex) may still be writing into it. */
export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

export interface Stack {
  server: TestServer;
  worker: WorkerHandle;
  warden: WardenClient;
}

/**
 * A dev server, an in-process worker and a client for the enclosing file or describe block:
 * started in beforeAll, stopped in afterAll. Read the fields inside tests (they are set by then).
 * `activities` replace warden's own by name (a workflow scenario with fake activities).
 */
export function useStack(opts: Partial<DevServerOptions> = {}, activities?: ActivityOverrides): Stack {
  const stack = {} as Stack;
  beforeAll(async () => {
    stack.server = await startTestServer(opts);
    stack.worker = await inProcessWorker(stack.server, 'warden', activities);
    stack.warden = await clientFor(stack.server);
  });
  afterAll(async () => {
    await stack.warden?.close();
    await stack.worker?.shutdown();
    await stack.server?.stop();
  });
  return stack;
}

export interface ProcessStack {
  server: TestServer;
  warden: WardenClient;
  /** A worker in its own process (so a test can SIGKILL it); killed at the end if still running. */
  spawnWorker(): ResultPromise;
  /** SIGKILL a worker and wait until it is gone. */
  kill(worker: ResultPromise): Promise<void>;
}

/**
 * A dev server (`serverOpts`, e.g. dynamic config) and a client for the enclosing file, with
 * workers as separate processes (`env` is added to theirs). Not async-returning on purpose: a ResultPromise is a thenable.
 */
export function useWorkerProcesses(env: Record<string, string> = {}, serverOpts: Partial<DevServerOptions> = {}): ProcessStack {
  const workers: ResultPromise[] = [];
  const stack = {
    spawnWorker() {
      const w = workerProcess(stack.server, env);
      workers.push(w);
      return w;
    },
    async kill(w: ResultPromise) {
      w.kill('SIGKILL');
      await w;
    },
  } as ProcessStack;
  beforeAll(async () => {
    stack.server = await startTestServer(serverOpts);
    stack.warden = await clientFor(stack.server);
  });
  afterAll(async () => {
    await stack.warden?.close();
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await stack.server?.stop();
  });
  return stack;
}
