/**
 * `warden top --once --json` over many agents: starts its own headless dev server (with warden's
 * search attributes) and a worker process, starts `--agents` agents (a tenth interrupted so they
 * await input, a tenth paused), waits until visibility lists them all, then runs the real CLI
 * `--runs` times and reports the wall time of each. Prints one JSON object; progress on stderr.
 *
 *   node dist/bench/top-once.js --agents 1000 --runs 3
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WardenClient } from '../src/client/index.js';
import { mapLimit, listRoster } from '../src/roster/source.js';
import { freePort } from '../src/devserver/ports.js';
import { startDevServer, type DevServer } from '../src/devserver/server.js';
import { exitWith } from './common.js';

const say = (m: string) => process.stderr.write(`[top-once] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`--${name} must be a positive whole number\n`);
    process.exit(2);
  }
  return n;
}

function runCli(address: string, args: string[]): Promise<{ code: number; stdout: string; ms: number }> {
  const t0 = performance.now();
  const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [cli, ...args], { env: { ...process.env, TEMPORAL_ADDRESS: address }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    c.on('exit', (code) => resolve({ code: code ?? 1, stdout: out, ms: performance.now() - t0 }));
  });
}

async function main(): Promise<number> {
  const agents = arg('agents', 1000);
  const runs = arg('runs', 3);
  const tmp = mkdtempSync(join(tmpdir(), 'warden-top-bench-'));
  let server: DevServer | null = null;
  let worker: ChildProcess | null = null;
  let client: WardenClient | null = null;
  try {
    const port = await freePort();
    say(`dev server on 127.0.0.1:${port}`);
    server = await startDevServer({ port, uiPort: false, dbFile: join(tmp, 'temporal.db') });
    const address = server.address;
    worker = spawn(process.execPath, [fileURLToPath(new URL('../workers/main.js', import.meta.url))], {
      env: { ...process.env, TEMPORAL_ADDRESS: address, WARDEN_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    client = await WardenClient.connect({ address });
    const c = client;
    // The namespace may be registered a moment after the frontend answers.
    for (let i = 0; ; i++) {
      try {
        await c.client.workflowService.describeNamespace({ namespace: c.namespace });
        break;
      } catch (err) {
        if (i > 120) throw err;
        await sleep(500);
      }
    }
    const ids = Array.from({ length: agents }, (_, i) => `bench-${String(i).padStart(4, '0')}`);
    const t0 = performance.now();
    await mapLimit(ids, 32, (id) => c.start({ agentId: id, task: `Benchmark agent ${id}: keep the parser tests green.`, supervisor: { idleAfterMs: 0 } }));
    say(`started ${agents} agents in ${Math.round(performance.now() - t0)} ms`);
    // Some in other states: a tenth heartbeats (running) and is interrupted (awaiting input), a tenth
    // paused. Signals only (cheap); one that fails under load is counted, not fatal.
    let signalFailures = 0;
    const tolerant = (p: Promise<unknown>) => p.catch(() => void (signalFailures += 1));
    await mapLimit(
      ids.filter((_, i) => i % 10 === 3),
      16,
      async (id) => {
        await tolerant(c.signal(id, 'heartbeat', {}));
        await tolerant(c.signal(id, 'interrupt', {}));
      },
    );
    await mapLimit(
      ids.filter((_, i) => i % 10 === 7),
      16,
      (id) => tolerant(c.signal(id, 'pause', {})),
    );
    for (let i = 0; ; i++) {
      const listed = await listRoster(c);
      if (listed.length >= agents && listed.some((e) => e.state === 'awaiting-input')) break;
      if (i > 240) throw new Error(`visibility lists ${listed.length} of ${agents} agents after 2 minutes`);
      await sleep(500);
    }
    say('visibility lists every agent; measuring');
    const results: { wallMs: number; elapsedMs: number; listedMs: number; rows: number; statusQueries: number; errors: number; firstState: string }[] = [];
    for (let i = 0; i < runs; i++) {
      const r = await runCli(address, ['top', '--once', '--json']);
      if (r.code !== 0) throw new Error(`warden top --once --json exited ${r.code}`);
      const j = JSON.parse(r.stdout) as {
        agents: number;
        elapsedMs: number;
        listedMs: number;
        statusQueries: number;
        errors: unknown[];
        rows: { state: string }[];
      };
      results.push({
        wallMs: Math.round(r.ms),
        elapsedMs: j.elapsedMs,
        listedMs: j.listedMs,
        rows: j.agents,
        statusQueries: j.statusQueries,
        errors: j.errors.length,
        firstState: j.rows[0]?.state ?? '',
      });
      say(`run ${i + 1}: ${Math.round(r.ms)} ms wall, ${j.agents} rows, ${j.statusQueries} status queries`);
    }
    const all = await runCli(address, ['top', '--once', '--json', '--details', 'all']);
    const v = JSON.parse(all.stdout) as { agents: number; statusQueries: number };
    process.stdout.write(
      `${JSON.stringify({
        bench: 'top-once',
        agents,
        runs: results,
        wallMsMedian: [...results].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(results.length / 2)]!.wallMs,
        signalFailures,
        detailsAll: { wallMs: Math.round(all.ms), rows: v.agents, statusQueries: v.statusQueries },
        node: process.version,
        cpus: cpus().length,
      })}\n`,
    );
    return 0;
  } finally {
    await client?.close();
    worker?.kill('SIGTERM');
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

exitWith(main, '[top-once] ');
