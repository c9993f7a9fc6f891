/**
 * A time-skipping Temporal server for the integration tests that wait on long workflow timers:
 * `@temporalio/testing`'s TestWorkflowEnvironment on Temporal's Java test server (installed from
 * Maven Central by test/time-skipping/install.sh, as .ci/run does; the SDK's own download of a
 * native build is not used). `env.sleep(ms)` moves the server's clock on by `ms` at once while no
 * workflow or activity task is outstanding, so a five-minute workflow timer costs no wall time.
 * Workers and clients are the real ones, connected to it by address like the dev server.
 */
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { WardenClient } from '../../src/client/index.js';
import type { DevServer } from '../../src/devserver/server.js';
import { SEARCH_ATTRIBUTES } from '../../src/domain/contract/search-attributes.js';
import { ROOT, clientFor, inProcessWorker, quietLog, workerProcess } from './stack.js';
import { installPinoRuntime, type WorkerHandle } from '../../workers/main.js';
import type { ResultPromise } from 'execa';

const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;
const INDEXED: Record<string, proto.temporal.api.enums.v1.IndexedValueType> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Bool: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** The path of the test server's start script (installing it on first use). */
export async function testServerExecutable(): Promise<string> {
  const r = await execa('bash', [join(ROOT, 'test/time-skipping/install.sh')], { reject: false, all: true });
  if (r.exitCode !== 0) throw new Error(`could not install Temporal's time-skipping test server (test/time-skipping/install.sh needs java and mvn):\n${r.all}`);
  return String(r.stdout).trim().split('\n').at(-1)!;
}

/**
 * The SDK gives the test server (a JVM) five seconds to listen; on a loaded machine (integration files
 * run side by side) it can take longer. A start that failed that way is tried again, three times in all.
 */
async function createWithRetries(path: string): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
    } catch (err) {
      if (attempt >= 3 || !/did not start within/.test(String(err))) throw err;
    }
  }
}

/** A time-skipping environment with warden's search attributes registered. */
export async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  const path = await testServerExecutable();
  // The environment instantiates the SDK runtime; install warden's first, as an in-process worker would.
  installPinoRuntime(quietLog);
  const env = await createWithRetries(path);
  const searchAttributes = Object.fromEntries(Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => [name, INDEXED[type]!]));
  await env.connection.operatorService.addSearchAttributes({ namespace: env.namespace ?? 'default', searchAttributes });
  return env;
}

export interface TimeSkippingStack {
  env: TestWorkflowEnvironment;
  /** What workerProcess and clientFor need: the server's address and namespace. */
  server: Pick<DevServer, 'address' | 'namespace'>;
  warden: WardenClient;
  spawnWorker(): ResultPromise;
  kill(worker: ResultPromise): Promise<void>;
}

/** A client of the time-skipping server that knows warden's search attributes are registered there. */
async function timeSkippingClient(server: Pick<DevServer, 'address' | 'namespace'>): Promise<WardenClient> {
  const warden = await clientFor(server as DevServer);
  // The test server takes AddSearchAttributes (startTimeSkipping registered them all) but does not
  // implement ListSearchAttributes, which the client asks before it lets an agent publish them.
  warden.registeredSearchAttributes = async () => Object.keys(SEARCH_ATTRIBUTES);
  return warden;
}

export interface TimeSkippingInProcessStack {
  env: TestWorkflowEnvironment;
  server: Pick<DevServer, 'address' | 'namespace'>;
  worker: WorkerHandle;
  warden: WardenClient;
}

/** useStack (test/helpers/stack.ts) on a time-skipping server: an in-process worker and a client. */
export function useTimeSkippingStack(): TimeSkippingInProcessStack {
  const stack = {} as TimeSkippingInProcessStack;
  beforeAll(async () => {
    stack.env = await startTimeSkipping();
    stack.server = { address: stack.env.address, namespace: stack.env.namespace ?? 'default' };
    stack.worker = await inProcessWorker(stack.server as DevServer);
    stack.warden = await timeSkippingClient(stack.server);
  }, 120_000);
  afterAll(async () => {
    await stack.warden?.close();
    await stack.worker?.shutdown();
    await stack.env?.teardown();
  });
  return stack;
}

/** useWorkerProcesses (test/helpers/stack.ts) on a time-skipping server. */
export function useTimeSkippingWorkerProcesses(env: Record<string, string> = {}): TimeSkippingStack {
  const workers: ResultPromise[] = [];
  const stack = {
    spawnWorker() {
      const w = workerProcess(stack.server as DevServer, env);
      workers.push(w);
      return w;
    },
    async kill(w: ResultPromise) {
      w.kill('SIGKILL');
      await w;
    },
  } as TimeSkippingStack;
  beforeAll(async () => {
    stack.env = await startTimeSkipping();
    stack.server = { address: stack.env.address, namespace: stack.env.namespace ?? 'default' };
    stack.warden = await timeSkippingClient(stack.server);
  }, 120_000);
  afterAll(async () => {
    await stack.warden?.close();
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await stack.env?.teardown();
  });
  return stack;
}
