/**
 * The warden worker: registers agentWorkflow and the activities on the task queue, routes the
 * SDK's own logs (and workflow `log` calls) to pino. Run it with `warden worker`, or directly with
 * `node dist/workers/main.js` (the Docker image does).
 */
import { DefaultLogger, NativeConnection, Runtime, Worker, type InjectedSinks, type LogLevel, type LogMetadata, type WorkerOptions } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { createActivities } from '../activities/index.js';
import { BUNDLER_OPTIONS, TRACING_INTERCEPTOR_MODULES, WORKFLOWS_PATH, prebuiltBundlePath } from './bundle.js';
import { connectionSettings, type ConnectionSettings } from '../src/config/connection.js';
import { wardenDataConverter } from '../src/converter/path.js';
import { groupWindowFromEnv, workerConfig } from '../src/config/worker.js';
import { createLogger } from '../src/logger.js';
import { startOtel } from '../src/telemetry/otel.js';
import { recordAgentEvent } from '../src/telemetry/record.js';
import { observeAgentsByState } from '../src/telemetry/fleet.js';
import { workflowSpanSinks } from '../src/telemetry/workflow-spans.js';
import type { WardenSinks } from '../workflows/ports.js';

export { WORKFLOWS_PATH };

let runtimeInstalled = false;
/**
 * Route the Temporal runtime's logger (SDK + workflow `log`) to pino. Once per process. `metrics`:
 * serve the SDK's metrics for Prometheus there (the agent worker passes WARDEN_METRICS_ADDRESS; the
 * IRC bot, another process that may share its environment, does not, so they never race for a port).
 */
export function installPinoRuntime(log: Logger, metrics?: string): void {
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
    // WARDEN_METRICS_ADDRESS: the SDK's own worker metrics (sticky cache hits, misses and evictions,
    // workflow task latencies) served for Prometheus on this loopback-or-any host:port.
    ...(metrics ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metrics } } } } : {}),
    logger: new DefaultLogger('INFO', (entry) => {
      const meta: LogMetadata = { ...(entry.meta ?? {}) };
      log[levels[entry.level]]({ ...meta, sdk: true }, entry.message);
    }),
  });
}

/**
 * The workflow code: a bundle given by the caller (tests), else the prebuilt dist/workflow-bundle.js
 * when it is current (`npm run build` makes it), else bundle from source at start (dev). `traced`
 * (the worker exports traces): bundle from source with the SDK's tracing workflow interceptors
 * (workers/bundle.ts says why they are not in the prebuilt bundle), unless WARDEN_WORKFLOW_BUNDLE
 * names a bundle.
 */
function workflowSource(
  given: WorkerOptions['workflowBundle'] | undefined,
  log: Logger,
  traced: boolean,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'> {
  if (given) return { workflowBundle: given };
  if (traced && !process.env.WARDEN_WORKFLOW_BUNDLE) {
    log.info({ workflowsPath: WORKFLOWS_PATH }, 'traces exported: bundling the workflow code with the tracing interceptors');
    return { workflowsPath: WORKFLOWS_PATH, bundlerOptions: BUNDLER_OPTIONS };
  }
  const codePath = prebuiltBundlePath();
  if (codePath) return { workflowBundle: { codePath } };
  log.info({ workflowsPath: WORKFLOWS_PATH }, 'no current prebuilt workflow bundle: bundling from source');
  return { workflowsPath: WORKFLOWS_PATH, bundlerOptions: BUNDLER_OPTIONS };
}

/**
 * Warden's defaults where the SDK's do not fit (docs/operating/capacity.md, "Worker tuning"):
 * - `stickyQueueScheduleToStartTimeout` 5 s (SDK: 10 s; the Go SDK's default). After a worker dies,
 *   the server keeps sending each of its agents' next task to the dead worker's sticky queue until
 *   this expires; measured after a SIGKILL, every agent waited the full timeout before a new worker
 *   could take it. Not lower: a sticky task that waits longer than this (an overloaded worker) is
 *   handed out again with the whole history, and the worker replays the agent from scratch. At 3 s,
 *   the burst of 1,000 agents' first evaluations on the 2-core box pushed queueing past 3 s and
 *   turned into a replay storm (a round's p99 of 3.3 s and 13 s, in two runs); at 5 s and 10 s the
 *   same round stayed at 1.2–1.4 s (bench/fleet.ts --rounds 4; docs/operating/capacity.md).
 */
export const WORKER_DEFAULTS = { stickyQueueScheduleToStartTimeout: 5_000 } as const;

/** Worker tuning by environment (docs/operating/capacity.md says when to change them); unset = measured defaults. */
export function tuningFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<WorkerOptions> {
  const int = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    if (!/^\d+$/.test(v)) throw new Error(`${name} must be a whole number, got ${JSON.stringify(v)}`);
    return Number(v);
  };
  const cached = int('WARDEN_MAX_CACHED_WORKFLOWS');
  const wft = int('WARDEN_WFT_CONCURRENCY');
  const pollers = int('WARDEN_WFT_POLLERS');
  const sticky = int('WARDEN_STICKY_TIMEOUT_MS');
  const threads = int('WARDEN_WORKFLOW_THREADS');
  const ratioText = env.WARDEN_NONSTICKY_POLL_RATIO;
  let ratio: number | undefined;
  if (ratioText !== undefined && ratioText !== '') {
    ratio = Number(ratioText);
    if (!/^\d*\.?\d+$/.test(ratioText) || !(ratio > 0 && ratio <= 1))
      throw new Error(`WARDEN_NONSTICKY_POLL_RATIO must be a number above 0 and at most 1, got ${JSON.stringify(ratioText)}`);
  }
  return {
    ...(ratio !== undefined ? { nonStickyToStickyPollRatio: ratio } : {}),
    ...(threads !== undefined ? { workflowThreadPoolSize: threads } : {}),
    ...(sticky !== undefined ? { stickyQueueScheduleToStartTimeout: sticky } : {}),
    ...(cached !== undefined ? { maxCachedWorkflows: cached } : {}),
    ...(wft !== undefined ? { maxConcurrentWorkflowTaskExecutions: wft } : {}),
    ...(pollers !== undefined ? { workflowTaskPollerBehavior: { type: 'simple-maximum' as const, maximum: pollers } } : {}),
  };
}

/**
 * WARDEN_METRICS_ADDRESS (host:port): where the worker serves the Temporal SDK's metrics in
 * Prometheus text (`GET /metrics`); unset or empty = no metrics endpoint.
 */
export function metricsFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env.WARDEN_METRICS_ADDRESS;
  if (v === undefined || v === '') return undefined;
  const m = /^(?:\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 65535)
    throw new Error(`WARDEN_METRICS_ADDRESS must be host:port (e.g. 127.0.0.1:9464), got ${JSON.stringify(v)}`);
  return v;
}

/**
 * The agents' telemetry events (src/domain/agent/telemetry.ts) reach the worker through this sink,
 * always registered (a workflow calls it whether or not this worker exports): a no-op when
 * telemetry is off, and never called while a workflow replays.
 */
export function telemetrySinks(): InjectedSinks<WardenSinks> {
  return { otel: { event: { fn: (info, e) => recordAgentEvent({ workflowId: info.workflowId, runId: info.runId }, e), callDuringReplay: false } } };
}

/**
 * A span per activity (the evaluation, a webhook, a driven turn) from the Temporal SDK's
 * OpenTelemetry interceptors, through the global OpenTelemetry API; its parent is the workflow's
 * span that scheduled it, from the activity's headers. Loaded only when traces are exported. The
 * workflow's own spans come from the SDK's workflow interceptors, through the `exporter` sink
 * (src/telemetry/workflow-spans.ts).
 */
async function activitySpans(): Promise<NonNullable<NonNullable<WorkerOptions['interceptors']>['activity']>[number]> {
  const { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return (ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) });
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
  opts: {
    address?: string;
    namespace?: string;
    taskQueue?: string;
    log?: Logger;
    /** Activities that replace warden's own by name (tests: workflow scenarios with fake activities). */
    activities?: Partial<ReturnType<typeof createActivities>>;
  } & Partial<Pick<WorkerOptions, 'workflowBundle' | 'maxConcurrentActivityTaskExecutions'>> = {},
): Promise<WorkerHandle> {
  const log = opts.log ?? createLogger('warden-worker');
  installPinoRuntime(log, metricsFromEnv());
  const settings = connectionSettings(opts);
  // The operator's secrets configuration: refuse to start on a malformed one; log names, never values.
  const secrets = workerConfig();
  // The incident grouping window (one alert for one cause): refuse to start on a malformed one.
  const groupWindowMs = groupWindowFromEnv();
  log.info(secrets, 'worker secrets configuration (names and endpoints only)');
  // OpenTelemetry (OTEL_* environment variables; docs/operating/observability.md): off, and nothing
  // started, without an OTLP endpoint.
  const telemetry = await startOtel('warden-worker', log);
  const traced = telemetry.signals.includes('traces');
  log.info({ groupWindowMs }, 'notification grouping window (0: off)');
  const connection = await NativeConnection.connect(settings.connectionOptions);
  await observeAgentsByState(connection, settings.namespace, log);
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    ...workflowSource(opts.workflowBundle, log, traced),
    ...WORKER_DEFAULTS,
    ...tuningFromEnv(),
    activities: { ...createActivities(log), ...opts.activities },
    // Undecodable signal/start payloads become a sentinel instead of failing every workflow task.
    dataConverter: wardenDataConverter(),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivityTaskExecutions ?? 50,
    shutdownGraceTime: '10s',
    // Cancellation reaches a running turn with a heartbeat reply; the default throttle (80% of the
    // heartbeat timeout) would delay an interrupt by ~24 s. One heartbeat a second per running turn.
    maxHeartbeatThrottleInterval: '1s',
    sinks: { ...telemetrySinks(), ...(traced ? workflowSpanSinks() : {}) },
    ...(traced ? { interceptors: { activity: [await activitySpans()], workflowModules: TRACING_INTERCEPTOR_MODULES } } : {}),
  });
  log.info({ address: settings.connectionOptions.address, namespace: settings.namespace, taskQueue: settings.taskQueue }, 'worker started');
  const done = worker.run().finally(() => Promise.allSettled([connection.close(), telemetry.shutdown()]).then(() => undefined));
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
