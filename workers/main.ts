/**
 * The warden worker: registers agentWorkflow and the activities on the task queue, routes the
 * SDK's own logs (and workflow `log` calls) to pino. Run it with `warden worker`, or directly with
 * `node dist/workers/main.js` (the Docker image does).
 */
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel, type LogMetadata, type WorkerOptions } from '@temporalio/worker';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { createActivities } from '../activities/index.js';
import { connectionSettings, type ConnectionSettings } from '../src/config/connection.js';
import { wardenDataConverter } from '../src/converter/path.js';
import { workerConfig } from '../src/config/worker.js';
import { createLogger } from '../src/logger.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/index${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

let runtimeInstalled = false;
/** Route the Temporal runtime's logger (SDK + workflow `log`) to pino. Once per process. */
export function installPinoRuntime(log: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
      const meta: LogMetadata = { ...(entry.meta ?? {}) };
      log[levels[entry.level]]({ ...meta, sdk: true }, entry.message);
    }),
  });
}

export interface WorkerHandle {
  worker: Worker;
  connection: NativeConnection;
  settings: ConnectionSettings;
  /** Resolves when the worker has stopped (after shutdown() or a fatal error). */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startWorker(
  opts: { address?: string; namespace?: string; taskQueue?: string; log?: Logger } & Partial<Pick<WorkerOptions, 'workflowBundle' | 'maxConcurrentActivityTaskExecutions'>> = {},
): Promise<WorkerHandle> {
  const log = opts.log ?? createLogger('warden-worker');
  installPinoRuntime(log);
  const settings = connectionSettings(opts);
  // The operator's secrets configuration: refuse to start on a malformed one; log names, never values.
  const secrets = workerConfig();
  log.info(secrets, 'worker secrets configuration (names and endpoints only)');
  const connection = await NativeConnection.connect(settings.connectionOptions);
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities(log),
    // Undecodable signal/start payloads become a sentinel instead of failing every workflow task.
    dataConverter: wardenDataConverter(),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivityTaskExecutions ?? 50,
    shutdownGraceTime: '10s',
    // Cancellation reaches a running turn with a heartbeat reply; the default throttle (80% of the
    // heartbeat timeout) would delay an interrupt by ~24 s. One heartbeat a second per running turn.
    maxHeartbeatThrottleInterval: '1s',
  });
  log.info({ address: settings.connectionOptions.address, namespace: settings.namespace, taskQueue: settings.taskQueue }, 'worker started');
  const done = worker.run().finally(() => connection.close());
  return {
    worker,
    connection,
    settings,
    done,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}

// `node dist/workers/main.js`: run until SIGINT/SIGTERM (the SDK shuts down gracefully on both).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const log = createLogger('warden-worker');
  startWorker({ log })
    .then((h) => h.done)
    .catch((err) => {
      log.error({ err }, 'worker failed');
      process.exitCode = 1;
    });
}
