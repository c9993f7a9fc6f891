/**
 * Replay cost of one long agentWorkflow history: what a worker pays per agent after a restart
 * (or a cache eviction) before that agent can answer again.
 *
 *   node dist/bench/replay-time.js --turns 450 --replays 5 [--side warden|bare]
 *
 * Starts its own dev server (or uses `--address`), runs an in-process warden worker, starts one
 * agent (heuristic evaluator, defaults) and reports `--turns` turns back to back, fetches the
 * history, stops the worker, then replays that history `--replays` times with
 * `Worker.runReplayHistory` on the same workflow bundle the worker runs (the prebuilt
 * dist/workflow-bundle.js when current). Prints one JSON object: history events and bytes, events
 * per turn, and replay time (min, p50, max, and p50 per turn). `--side bare` does the same with the bare
 * baseline (bench/bare-workflow.ts, bundled alone, the same turns through its `reportTurn`
 * update), the denominator of warden's per-turn cost. Exit 0 ok, 1 failure, 2 bad usage.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { pino } from 'pino';
import { WardenClient, workflowIdFor } from '../src/client/index.js';
import { exitWith, loopbackAddress, round, wholeArg, withServer } from './common.js';
import { prebuiltBundlePath, WORKFLOWS_PATH } from '../workers/bundle.js';
import { startWorker } from '../workers/main.js';

const say = (msg: string) => process.stderr.write(`[replay-time] ${msg}\n`);

function options(argv: string[]): { turns: number; replays: number; address: string | null; side: 'warden' | 'bare'; evalInterval: number | null } {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      turns: { type: 'string' },
      replays: { type: 'string' },
      address: { type: 'string' },
      side: { type: 'string' },
      'eval-interval': { type: 'string' },
    },
  });
  if (v.side !== undefined && v.side !== 'warden' && v.side !== 'bare') throw new Error('--side is warden or bare');
  return {
    side: v.side === 'bare' ? 'bare' : 'warden',
    turns: v.turns === undefined ? 450 : wholeArg('--turns', v.turns, 1, 5000),
    evalInterval: v['eval-interval'] === undefined ? null : wholeArg('--eval-interval', v['eval-interval'], 1, 1000),
    replays: v.replays === undefined ? 5 : wholeArg('--replays', v.replays, 1, 100),
    address: v.address === undefined ? null : loopbackAddress(v.address),
  };
}

async function main(): Promise<number> {
  let o: ReturnType<typeof options>;
  try {
    o = options(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(
      `replay-time: ${(err as Error).message}\nusage: node dist/bench/replay-time.js [--turns N] [--replays K] [--side warden|bare] [--eval-interval N] [--address HOST:PORT]\n`,
    );
    return 2;
  }
  const load0 = loadavg();
  try {
    return await withServer(o.address, 'warden-replay-', say, async (address) => {
      const taskQueue = `replay-time-${Date.now().toString(36)}`;
      const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never;
      const codePath = o.side === 'warden' ? prebuiltBundlePath() : null;
      const bundle = codePath
        ? { codePath }
        : await bundleWorkflowCode({
            workflowsPath: o.side === 'warden' ? WORKFLOWS_PATH : fileURLToPath(new URL('./bare-workflow.js', import.meta.url)),
            logger: quiet,
          });
      const worker =
        o.side === 'warden'
          ? await startWorker({ address, taskQueue, log: pino({ level: 'warn' }, pino.destination(2)), workflowBundle: bundle })
          : await bareWorker(address, taskQueue, bundle);
      const client = await WardenClient.connect({ address, taskQueue });
      const agentId = `replay-${Date.now().toString(36)}`;
      try {
        if (o.side === 'warden') {
          await client.start({
            agentId,
            task: 'Replay benchmark: fix the parser and keep the tests green.',
            ...(o.evalInterval !== null ? { supervisor: { evalInterval: o.evalInterval } } : {}),
          });
        } else await client.client.workflow.start('bareEntityWorkflow', { taskQueue, workflowId: workflowIdFor(agentId), args: [0] });
        say(`reporting ${o.turns} turns (${o.side})`);
        for (let t = 0; t < o.turns; t++) {
          const turn = {
            id: `t${t}`,
            text: `Turn ${t}: reading src/parser.ts and running the tests for case ${t}.`,
            toolCalls: [{ name: 'read_file', args: { path: 'src/parser.ts' }, result: `${40 + t} lines`, ok: true }],
            tokensIn: 900,
            tokensOut: 150,
            costUsd: 0.002,
          };
          if (o.side === 'warden') await client.reportTurn(agentId, turn);
          else await client.client.workflow.getHandle(workflowIdFor(agentId)).executeUpdate('reportTurn', { args: [turn] });
        }
        await new Promise((r) => setTimeout(r, 1_000)); // the last evaluation
        const handle = client.client.workflow.getHandle(workflowIdFor(agentId));
        const d = await handle.describe();
        // Every run of the agent (warden continues-as-new every few hundred events), oldest first.
        const runs: string[] = [];
        for await (const e of client.client.workflow.list({ query: `WorkflowId = '${workflowIdFor(agentId)}'` })) runs.push(e.runId);
        runs.reverse();
        const histories = await Promise.all(runs.map((runId) => client.client.workflow.getHandle(workflowIdFor(agentId), runId).fetchHistory()));
        await worker.shutdown();
        const events = histories.reduce((n, h) => n + (h.events?.length ?? 0), 0);
        say(`replaying ${runs.length} run(s), ${events} events, ${o.replays} times`);
        const times: number[] = [];
        // Warm: each replay worker replays the runs twice; the second pass, timed alone, is the
        // per-turn cost without the worker's start-up (bundle load, context creation).
        const warm: number[] = [];
        const warmCpu: number[] = [];
        for (let k = 0; k < o.replays; k++) {
          const t0 = performance.now();
          const results = Worker.runReplayHistories(
            { workflowBundle: bundle, replayName: `replay-${k}` },
            [...histories, ...histories].map((history) => ({ workflowId: workflowIdFor(agentId), history })),
          );
          let n = 0;
          let firstPassAt = t0;
          let cpuAt = process.cpuUsage();
          for await (const r of results) {
            if (r.error) throw r.error;
            n += 1;
            if (n === histories.length) {
              firstPassAt = performance.now();
              cpuAt = process.cpuUsage();
            }
          }
          const t1 = performance.now();
          times.push(firstPassAt - t0);
          warm.push(t1 - firstPassAt);
          const cpu = process.cpuUsage(cpuAt);
          warmCpu.push((cpu.user + cpu.system) / 1000);
        }
        times.sort((a, b) => a - b);
        warm.sort((a, b) => a - b);
        warmCpu.sort((a, b) => a - b);
        const warmCpuP50 = warmCpu[Math.floor(warmCpu.length / 2)]!;
        const warmP50 = warm[Math.floor(warm.length / 2)]!;
        // One more replay, counting the promises made in workflow context: the SDK captures a stack
        // trace for each (its promise hook), so this count is a deterministic proxy for that cost.
        let promises = 0;
        const stopCounting = v8.promiseHooks.onInit((promise) => {
          const fn = (promise as unknown as { constructor: { constructor: FunctionConstructor } }).constructor.constructor;
          if (fn !== Function && fn('return globalThis.__TEMPORAL_ACTIVATOR__')()) promises += 1;
        });
        try {
          const results = Worker.runReplayHistories(
            { workflowBundle: bundle, replayName: 'replay-count' },
            histories.map((history) => ({ workflowId: workflowIdFor(agentId), history })),
          );
          for await (const r of results) if (r.error) throw r.error;
        } finally {
          stopCounting();
        }
        const turnsInHistory = histories.reduce((n, h) => n + (h.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length, 0);
        const p50 = times[Math.floor(times.length / 2)]!;
        process.stdout.write(
          `${JSON.stringify({
            bench: 'replay-time',
            side: o.side,
            evalInterval: o.evalInterval,
            turns: o.turns,
            turnsInHistory,
            runs: runs.length,
            historyEvents: events,
            historyBytes: Number(d.raw.workflowExecutionInfo?.historySizeBytes ?? 0),
            eventsPerTurn: round(events / o.turns, 2),
            replayMs: { min: round(times[0]!), p50: round(p50), max: round(times.at(-1)!) },
            p50MsPerTurn: turnsInHistory > 0 ? round(p50 / turnsInHistory, 3) : null,
            warmReplayMs: { min: round(warm[0]!), p50: round(warmP50), max: round(warm.at(-1)!) },
            warmP50MsPerTurn: turnsInHistory > 0 ? round(warmP50 / turnsInHistory, 3) : null,
            // CPU time of this process (all its threads) over the warm pass: steadier than wall time on a busy box.
            warmCpuMs: { min: round(warmCpu[0]!), p50: round(warmCpuP50), max: round(warmCpu.at(-1)!) },
            warmCpuP50MsPerTurn: turnsInHistory > 0 ? round(warmCpuP50 / turnsInHistory, 3) : null,
            workflowPromisesPerTurn: turnsInHistory > 0 ? round(promises / turnsInHistory, 2) : null,
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

/** The bare baseline's worker: bareEntityWorkflow alone, no activities (as bench/bare-worker.ts). */
async function bareWorker(address: string, taskQueue: string, bundle: { code: string } | { codePath: string }) {
  const connection = await NativeConnection.connect({ address });
  const w = await Worker.create({ connection, taskQueue, workflowBundle: bundle });
  const running = w.run();
  return {
    worker: w,
    async shutdown() {
      if (w.getState() === 'RUNNING') w.shutdown();
      await running;
      await connection.close();
    },
  };
}

exitWith(main);
