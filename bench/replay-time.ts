/**
 * Replay cost of one long agentWorkflow history: what a worker pays per agent after a restart
 * (or a cache eviction) before that agent can answer again.
 *
 *   node dist/bench/replay-time.js --turns 450 --replays 5
 *
 * Starts its own dev server (or uses `--address`), runs an in-process warden worker, starts one
 * agent (heuristic evaluator, defaults) and reports `--turns` turns back to back, fetches the
 * history, stops the worker, then replays that history `--replays` times with
 * `Worker.runReplayHistory` on the same workflow bundle the worker runs (the prebuilt
 * dist/workflow-bundle.js when current). Prints one JSON object: history events and bytes, events
 * per turn, and replay time (min, p50, max). Exit 0 ok, 1 failure, 2 bad usage.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { pino } from 'pino';
import { WardenClient, workflowIdFor } from '../src/client/index.js';
import { loopbackAddress, round, wholeArg, withServer } from './common.js';
import { prebuiltBundlePath, WORKFLOWS_PATH } from '../workers/bundle.js';
import { startWorker } from '../workers/main.js';

const say = (msg: string) => process.stderr.write(`[replay-time] ${msg}\n`);

function options(argv: string[]): { turns: number; replays: number; address: string | null } {
  const { values: v } = parseArgs({ args: argv, options: { turns: { type: 'string' }, replays: { type: 'string' }, address: { type: 'string' } } });
  return {
    turns: v.turns === undefined ? 450 : wholeArg('--turns', v.turns, 1, 5000),
    replays: v.replays === undefined ? 5 : wholeArg('--replays', v.replays, 1, 100),
    address: v.address === undefined ? null : loopbackAddress(v.address),
  };
}

async function main(): Promise<number> {
  let o: ReturnType<typeof options>;
  try {
    o = options(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`replay-time: ${(err as Error).message}\nusage: node dist/bench/replay-time.js [--turns N] [--replays K] [--address HOST:PORT]\n`);
    return 2;
  }
  const load0 = loadavg();
  try {
    return await withServer(o.address, 'warden-replay-', say, async (address) => {
      const taskQueue = `replay-time-${Date.now().toString(36)}`;
      const codePath = prebuiltBundlePath();
      const bundle = codePath
        ? { codePath }
        : await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never });
      const worker = await startWorker({ address, taskQueue, log: pino({ level: 'warn' }, pino.destination(2)), workflowBundle: bundle });
      const client = await WardenClient.connect({ address, taskQueue });
      const agentId = `replay-${Date.now().toString(36)}`;
      try {
        await client.start({ agentId, task: 'Replay benchmark: fix the parser and keep the tests green.' });
        say(`reporting ${o.turns} turns`);
        for (let t = 0; t < o.turns; t++) {
          await client.reportTurn(agentId, {
            id: `t${t}`,
            text: `Turn ${t}: reading src/parser.ts and running the tests for case ${t}.`,
            toolCalls: [{ name: 'read_file', args: { path: 'src/parser.ts' }, result: `${40 + t} lines`, ok: true }],
            tokensIn: 900,
            tokensOut: 150,
            costUsd: 0.002,
          });
        }
        await new Promise((r) => setTimeout(r, 1_000)); // the last evaluation
        const handle = client.client.workflow.getHandle(workflowIdFor(agentId));
        const d = await handle.describe();
        const history = await handle.fetchHistory();
        await worker.shutdown();
        say(`replaying ${history.events?.length} events ${o.replays} times`);
        const times: number[] = [];
        for (let k = 0; k < o.replays; k++) {
          const t0 = performance.now();
          await Worker.runReplayHistory({ workflowBundle: bundle, replayName: `replay-${k}` }, history, workflowIdFor(agentId));
          times.push(performance.now() - t0);
        }
        times.sort((a, b) => a - b);
        const events = history.events?.length ?? 0;
        process.stdout.write(
          `${JSON.stringify({
            bench: 'replay-time',
            turns: o.turns,
            historyEvents: events,
            historyBytes: Number(d.raw.workflowExecutionInfo?.historySizeBytes ?? 0),
            eventsPerTurn: round(events / o.turns, 2),
            replayMs: { min: round(times[0]!), p50: round(times[Math.floor(times.length / 2)]!), max: round(times.at(-1)!) },
            bundle: codePath ? 'prebuilt' : 'bundled-from-source',
            loadavg: load0.map((x) => round(x, 2)),
            node: process.version,
            cpus: cpus().length,
          })}\n`,
        );
        await handle.terminate('benchmark finished').catch(() => undefined);
        return 0;
      } finally {
        if (worker.worker.getState() === 'RUNNING') await worker.shutdown();
        await client.close();
      }
    });
  } catch (err) {
    say(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
