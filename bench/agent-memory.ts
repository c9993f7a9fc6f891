/**
 * Memory per cached agent, exactly: V8 heap after a full GC, not RSS.
 *
 *   node dist/bench/agent-memory.js --agents 200 [--side warden|bare] [--turns 1] [--tracing]
 *
 * Runs the worker in this process with `debugMode` (workflows in the main thread, the same
 * reusable V8 context the threaded worker uses), so one `gc()` sees every cached workflow. Starts
 * its own dev server (or `--address`), starts `--agents` workflows of the chosen side, reports
 * `--turns` turns to each (so each is cached and has run its handlers), forces a full GC, and
 * prints one JSON object: heap used before and after, and the difference per agent in KiB.
 * `--tracing` (warden side): the workflow code as a worker that exports traces runs it, bundled
 * from source with the SDK's tracing workflow interceptors and the span sink (spans are dropped,
 * not exported): what tracing costs each cached agent.
 * `fleet`'s RSS figure moves with GC timing; this one does not. `AGENT_MEMORY_SNAPSHOT=FILE` also
 * writes a heap snapshot after the agents are cached (open it in Chrome DevTools, Memory tab). Exit 0 ok, 1 failure, 2 bad usage.
 */
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { WardenClient, workflowIdFor } from '../src/client/index.js';
import { wardenDataConverter } from '../src/converter/path.js';
import { exitWith, loopbackAddress, pool, round, wholeArg, withServer } from './common.js';
import { createLogger } from '../src/logger.js';
import { BUNDLER_OPTIONS, TRACING_INTERCEPTOR_MODULES, WORKFLOWS_PATH, ZOD_PRELOADS, prebuiltBundlePath } from '../workers/bundle.js';
import { telemetrySinks } from '../workers/main.js';
import { workflowSpanSinks } from '../src/telemetry/workflow-spans.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const say = (msg: string) => process.stderr.write(`[agent-memory] ${msg}\n`);

interface Options {
  agents: number;
  side: 'warden' | 'bare';
  turns: number;
  address: string | null;
  /** bare side: another entry exporting bareEntityWorkflow (experiments: price one import). */
  workflows: string | null;
  /** bare side: preload zod once per thread, as warden's bundle does. */
  preloadZod: boolean;
  /** warden side: the tracing worker's bundle (tracing interceptors, span sink). */
  tracing: boolean;
}

function options(argv: string[]): Options {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      agents: { type: 'string' },
      turns: { type: 'string' },
      side: { type: 'string' },
      workflows: { type: 'string' },
      'preload-zod': { type: 'boolean' },
      tracing: { type: 'boolean' },
      address: { type: 'string' },
    },
  });
  if (v.side !== undefined && v.side !== 'warden' && v.side !== 'bare') throw new Error('--side is warden or bare');
  if (v.tracing && v.side === 'bare') throw new Error('--tracing is for the warden side');
  return {
    agents: v.agents === undefined ? 200 : wholeArg('--agents', v.agents, 1, 5000),
    side: (v.side as Options['side'] | undefined) ?? 'warden',
    turns: v.turns === undefined ? 1 : wholeArg('--turns', v.turns, 0, 1000),
    address: v.address === undefined ? null : loopbackAddress(v.address),
    workflows: v.workflows ?? null,
    preloadZod: v['preload-zod'] ?? false,
    tracing: v.tracing ?? false,
  };
}

function heapMiB(): number {
  for (let k = 0; k < 3; k++) gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

const turn = (id: string, t: number) => ({
  id,
  text: `Turn ${t}: reading src/parser.ts to understand the retry loop before changing anything.`,
  toolCalls: [{ name: 'read_file', args: { path: 'src/parser.ts' }, result: `${40 + t} lines`, ok: true }],
  tokensIn: 900,
  tokensOut: 150,
  costUsd: 0.002,
});

async function main(): Promise<number> {
  let o: Options;
  try {
    o = options(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(
      `agent-memory: ${(err as Error).message}\nusage: node dist/bench/agent-memory.js [--agents N] [--side warden|bare] [--turns T] [--workflows FILE] [--preload-zod] [--tracing] [--address HOST:PORT]\n`,
    );
    return 2;
  }
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const load0 = loadavg();
  try {
    return await withServer(o.address, 'warden-memory-', say, async (address) => {
      const taskQueue = `memory-${o.side}-${Date.now().toString(36)}`;
      const connection = await NativeConnection.connect({ address });
      const common = { connection, taskQueue, debugMode: true, maxCachedWorkflows: o.agents + 100, shutdownGraceTime: '2s' } as const;
      const codePath = prebuiltBundlePath();
      if (o.side === 'warden' && !o.tracing && !codePath) throw new Error('no current dist/workflow-bundle.js: run npm run build first');
      const worker =
        o.side === 'warden' && o.tracing
          ? await Worker.create({
              ...common,
              workflowsPath: WORKFLOWS_PATH,
              bundlerOptions: BUNDLER_OPTIONS,
              interceptors: { workflowModules: TRACING_INTERCEPTOR_MODULES },
              sinks: { ...telemetrySinks(), ...workflowSpanSinks() },
              activities: createActivities(createLogger('agent-memory', 'warn')),
              dataConverter: wardenDataConverter(),
            })
          : o.side === 'warden'
            ? await Worker.create({
                ...common,
                workflowBundle: { codePath: codePath! },
                activities: createActivities(createLogger('agent-memory', 'warn')),
                dataConverter: wardenDataConverter(),
              })
            : await Worker.create({
                ...common,
                workflowsPath: o.workflows ? resolve(o.workflows) : fileURLToPath(new URL('./bare-workflow.js', import.meta.url)),
                ...(o.preloadZod ? { bundlerOptions: { preloadModules: ZOD_PRELOADS } } : {}),
              });
      const running = worker.run();
      const ids = Array.from({ length: o.agents }, (_, i) => `mem-${o.side}-${i}`);
      try {
        // One agent first, so the bundle and every lazily created shared object exist before the baseline.
        const warm = `mem-${o.side}-warm`;
        const warden = o.side === 'warden' ? await WardenClient.connect({ address, taskQueue }) : null;
        const raw = new Client({ connection: await Connection.connect({ address }) });
        const startOne = async (id: string) => {
          if (warden) {
            await warden.start({ agentId: id, task: `Memory agent ${id}: fix the parser and keep the tests green.` });
            for (let t = 0; t < o.turns; t++) await warden.reportTurn(id, turn(`${id}-t${t}`, t));
          } else {
            const h = await raw.workflow.start('bareEntityWorkflow', { taskQueue, workflowId: id, args: [0] });
            for (let t = 0; t < o.turns; t++) await h.executeUpdate('reportTurn', { args: [turn(`${id}-t${t}`, t)], updateId: `${id}-t${t}` });
          }
        };
        await startOne(warm);
        const before = heapMiB();
        say(`heap with 1 agent: ${round(before)} MiB; starting ${o.agents}`);
        await pool(ids, 16, startOne);
        const after = heapMiB();
        if (process.env.AGENT_MEMORY_SNAPSHOT) say(`heap snapshot: ${writeHeapSnapshot(process.env.AGENT_MEMORY_SNAPSHOT)}`);
        process.stdout.write(
          `${JSON.stringify({
            bench: 'agent-memory',
            side: o.side,
            agents: o.agents,
            turnsEach: o.turns,
            heapUsedMiB: { before: round(before), after: round(after) },
            perCachedAgentKiB: Math.round(((after - before) * 1024) / o.agents),
            bundle: o.side === 'warden' ? (o.tracing ? 'traced (from source, tracing interceptors)' : 'prebuilt') : (o.workflows ?? 'bare-workflow'),
            preloadZod: o.side === 'warden' || o.preloadZod,
            loadavg: load0.map((x) => round(x, 2)),
            node: process.version,
            cpus: cpus().length,
          })}\n`,
        );
        const terminate = async (id: string) => {
          const wid = warden ? workflowIdFor(id) : id;
          await raw.workflow
            .getHandle(wid)
            .terminate('benchmark finished')
            .catch(() => undefined);
        };
        if (o.address) await pool([warm, ...ids], 16, terminate);
        await warden?.close();
        await raw.connection.close();
        return 0;
      } finally {
        worker.shutdown();
        await running.catch(() => undefined);
        await connection.close();
      }
    });
  } catch (err) {
    say(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

exitWith(main);
