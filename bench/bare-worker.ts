/**
 * Worker process of the bare baseline (bench/fleet.ts starts it): registers only
 * bareEntityWorkflow, default worker options, no activities. Connection and task queue from
 * TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and WARDEN_TASK_QUEUE; FLEET_BARE_STICKY_MS sets the sticky
 * schedule-to-start timeout (fleet passes warden's, so a restart costs both sides the same wait),
 * FLEET_BARE_CACHE the sticky cache size (maxCachedWorkflows), FLEET_BARE_METRICS a host:port to
 * serve the SDK's Prometheus metrics on (as WARDEN_METRICS_ADDRESS does for warden's worker). Prints "bare worker started" on
 * stderr when it polls; SIGINT/SIGTERM shut it down gracefully.
 */
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';

async function main(): Promise<void> {
  const metrics = process.env.FLEET_BARE_METRICS;
  Runtime.install({ logger: new DefaultLogger('WARN'), ...(metrics ? { telemetryOptions: { metrics: { prometheus: { bindAddress: metrics } } } } : {}) });
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  const taskQueue = process.env.WARDEN_TASK_QUEUE;
  if (!taskQueue) throw new Error('WARDEN_TASK_QUEUE is required');
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    // FLEET_BARE_WORKFLOWS: another entry exporting bareEntityWorkflow, for experiments (docs/operating/capacity.md).
    workflowsPath: process.env.FLEET_BARE_WORKFLOWS || fileURLToPath(new URL('./bare-workflow.js', import.meta.url)),
    shutdownGraceTime: '5s',
    ...(process.env.FLEET_BARE_CACHE ? { maxCachedWorkflows: Number(process.env.FLEET_BARE_CACHE) } : {}),
    ...(process.env.FLEET_BARE_STICKY_MS ? { stickyQueueScheduleToStartTimeout: Number(process.env.FLEET_BARE_STICKY_MS) } : {}),
  });
  process.stderr.write(`${JSON.stringify({ msg: 'bare worker started', taskQueue })}\n`);
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
}

main().catch((err) => {
  process.stderr.write(`bare worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
