/**
 * What a supervised tool call costs the agent, for each way a hook reaches warden, side by side
 * with a hook that does nothing, in turn, in the same run:
 *
 *   - `command`: `warden hook <agent>`, the CLI as a hook command (one process per event that
 *     connects to Temporal itself), against `true`;
 *   - `forwarder`: `warden-hook <agent>` (dist/src/hooks/forward.js), the command hook `warden
 *     install` writes for Codex and for Claude Code in a project, which posts the event to the
 *     resident endpoint (`warden serve`, started by the first hook), against `true`;
 *   - `http` (Claude Code only): the event POSTed to the endpoint by a process that is already
 *     running, as Claude Code's `type: "http"` hooks do (a user-scope install), against a do-nothing
 *     HTTP listener on loopback.
 *
 *   npm run build && node dist/bench/hook-latency.js --calls 20 > result.json
 *
 * Starts its own headless dev server (or uses `--address`) and a worker process on a task queue of
 * its own; each session starts its own agent at its first event (auto-start, as after `warden
 * install`), then `--warmup` tool calls (not measured), then `--calls` tool calls: each a
 * PreToolUse and a PostToolUse event, each followed by the same event given to the do-nothing hook.
 * Command hooks run through `/usr/bin/time -f %M` (peak RSS) and `bash` (its `times` builtin: the
 * CPU of the command, to the millisecond), the same wrappers for both sides. The endpoint's own CPU
 * per event is read from /proc. One JSON object on stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createServer, request, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { WardenClient } from '../src/client/index.js';
import { freePort } from '../src/devserver/ports.js';
import { startDevServer, type DevServer } from '../src/devserver/server.js';
import { ensureEndpoint, type HookEndpoint } from '../src/hooks/endpoint-file.js';
import { sessionAgentId } from '../src/hooks/session.js';
import type { HookAgent } from '../src/hooks/protocol.js';
import { exitWith, loopbackAddress, type Proc, round, startWorkerMain, waitReady, wholeArg } from './common.js';
import { readCpuMs } from './proc-cpu.js';

const USAGE = `usage: node dist/bench/hook-latency.js [--calls N] [--warmup N] [--modes LIST] [--address HOST:PORT] [--namespace NS] [--main PATH]
  --calls N      measured tool calls per agent CLI and mode (a PreToolUse and a PostToolUse each; default 20, max 1000)
  --modes LIST   which ways to measure, comma-separated: command, forwarder, http (default all three)
  --warmup N     tool calls before measuring (default 3)
  --address      a running Temporal server (loopback) instead of a dev server of its own
  --main PATH    the warden CLI to run (default: this build's dist/src/cli/main.js), e.g. another build to compare
  --project DIR  the session's directory (default: an empty one): a git repository makes every PostToolUse read
                 its tree's fingerprint (WARDEN_TREE_TIMEOUT_MS passes through: 0 measures without it)`;

const say = (msg: string) => process.stderr.write(`[hook-latency ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

type Mode = 'command' | 'forwarder' | 'http';
const MODES: readonly Mode[] = ['command', 'forwarder', 'http'];

interface Options {
  modes: Mode[];
  calls: number;
  warmup: number;
  address: string | null;
  namespace: string;
  main: string;
  project: string | null;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    modes: [...MODES],
    calls: 20,
    warmup: 3,
    address: null,
    namespace: 'default',
    main: fileURLToPath(new URL('../src/cli/main.js', import.meta.url)),
    project: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    if (a === '--calls') o.calls = wholeArg(a, v, 1, 1000);
    else if (a === '--warmup') o.warmup = wholeArg(a, v, 0, 100);
    else if (a === '--address') o.address = loopbackAddress(v);
    else if (a === '--namespace' && v) o.namespace = v;
    else if (a === '--modes' && v) {
      o.modes = v.split(',').map((m) => m.trim()) as Mode[];
      const bad = o.modes.find((m) => !MODES.includes(m));
      if (bad || !o.modes.length) throw new Error(`--modes: ${JSON.stringify(bad ?? v)} is not one of ${MODES.join(', ')}\n${USAGE}`);
    } else if (a === '--main' && v) o.main = resolve(v);
    else if (a === '--project' && v) o.project = resolve(v);
    else throw new Error(`unknown or incomplete option ${a}\n${USAGE}`);
    i++;
  }
  return o;
}

/** One run of a shell command: wall ms (spawn to exit, as the agent CLI waits), CPU ms of the command, its peak RSS. */
interface Run {
  wallMs: number;
  cpuMs: number;
  peakKiB: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** bash's `times`: the second line is the children's user and system time, e.g. `0m0.123s 0m0.010s`. */
function childCpuMs(times: string): number {
  const line = times.trim().split('\n')[1] ?? '';
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60_000 + Number(m[2]) * 1000);
  return parts.reduce((a, b) => a + b, 0);
}

function runShell(command: string, stdin: string, env: NodeJS.ProcessEnv, cwd: string, rssFile: string): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const t0 = performance.now();
    // The agent CLI runs `sh -c COMMAND`; bash around it reports the CPU of that shell and its children on fd 3.
    const child: ChildProcess = spawn('/usr/bin/time', ['-f', '%M', '-o', rssFile, 'bash', '-c', 'sh -c "$1"; s=$?; times >&3; exit $s', 'bash', command], {
      env,
      cwd,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let times = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => (times += d));
    child.once('error', reject);
    child.once('close', (code) => {
      const wallMs = performance.now() - t0;
      const peakKiB = Number(readFileSync(rssFile, 'utf8').trim().split('\n').at(-1));
      resolveRun({ wallMs, cpuMs: childCpuMs(times), peakKiB, code, stdout, stderr });
    });
    child.stdin!.end(stdin);
  });
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function summary(runs: Run[]) {
  const wall = runs.map((r) => r.wallMs);
  return {
    wallMs: { p50: round(pct(wall, 50)), p99: round(pct(wall, 99)), mean: round(mean(wall)) },
    cpuMsPerCall: {
      p50: round(
        pct(
          runs.map((r) => r.cpuMs),
          50,
        ),
      ),
      mean: round(mean(runs.map((r) => r.cpuMs))),
    },
    peakRssMiB: round(Math.max(...runs.map((r) => r.peakKiB)) / 1024),
  };
}

/** The events Claude Code and Codex send around one tool call (the fields warden reads; Codex adds its turn and model). */
function events(agent: HookAgent, session: string, cwd: string, transcript: string, n: number): { pre: string; post: string } {
  const base = {
    session_id: session,
    transcript_path: transcript,
    cwd,
    ...(agent === 'codex' && { turn_id: `turn-${n}`, model: 'gpt-5.4', permission_mode: 'default' }),
  };
  const tool = { tool_name: 'Bash', tool_input: { command: `npm test -- --grep case-${n}` }, tool_use_id: `toolu_${n}` };
  return {
    pre: JSON.stringify({ ...base, hook_event_name: 'PreToolUse', ...tool }),
    post: JSON.stringify({
      ...base,
      hook_event_name: 'PostToolUse',
      ...tool,
      tool_response: { stdout: `ok ${n} tests passed\n`, stderr: '', interrupted: false },
    }),
  };
}

/** A loopback HTTP listener that answers every request with an empty 200: the do-nothing HTTP hook. */
async function doNothingListener(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-length': 0 }).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return { server, url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/` };
}

/** POST `body` as a hook event, timed from the request to the end of the answer (the hook's wall time as its CLI waits). */
function postTo(url: string, body: string, headers: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolvePost, reject) => {
    const t0 = performance.now();
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d));
      res.on('end', () =>
        resolvePost({
          wallMs: performance.now() - t0,
          cpuMs: 0, // the poster is the agent CLI's own, long-running process
          peakKiB: 0,
          code: res.statusCode === 200 ? 0 : (res.statusCode ?? 1),
          stdout: text,
          stderr: res.statusCode === 200 ? '' : text,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A Claude Code HTTP hook's request: the token, and the connection the install was given in the query string. */
function postHook(endpoint: HookEndpoint, agent: HookAgent, body: string, c: { address: string; namespace: string; taskQueue: string }): Promise<Run> {
  const query = new URLSearchParams({ address: c.address, namespace: c.namespace, task_queue: c.taskQueue });
  return postTo(`${endpoint.url}/hooks/${agent}?${query}`, body, { authorization: `Bearer ${endpoint.token}` });
}

/** The `warden serve` a forwarder started for this warden home (found in /proc by its environment). */
function serveProcess(wardenHome: string): number | undefined {
  const marker = `WARDEN_HOME=${wardenHome}\0`;
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/environ`, 'latin1').includes(marker) && readFileSync(`/proc/${e}/cmdline`, 'utf8').includes('serve')) return Number(e);
    } catch {
      // gone, or not ours
    }
  }
  return undefined;
}

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const taskQueue = `warden-hookbench-${tag}`;
  const tmp = mkdtempSync(join(tmpdir(), 'warden-hook-latency-'));
  let server: DevServer | null = null;
  let worker: Proc | null = null;
  let client: WardenClient | null = null;
  try {
    let address = o.address;
    if (!address) {
      const port = await freePort();
      say(`starting a dev server on 127.0.0.1:${port}`);
      server = await startDevServer({ port, uiPort: false, dbFile: join(tmp, 'temporal.db'), namespace: o.namespace, say });
      address = server.address;
    }
    say(`starting the worker on task queue ${taskQueue}`);
    worker = startWorkerMain(address, o.namespace, taskQueue, {}, { sampleRss: false });
    await waitReady(worker);
    client = await WardenClient.connect({ address, namespace: o.namespace, taskQueue });

    // The hooks' world: a project directory (the session's cwd), their own cache and config dirs.
    const project = o.project ?? join(tmp, 'project');
    const home = join(tmp, 'home');
    mkdirSync(project, { recursive: true });
    mkdirSync(home, { recursive: true });
    const transcript = join(tmp, 'transcript.jsonl');
    writeFileSync(transcript, '');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      WARDEN_CACHE_DIR: join(tmp, 'cache'),
      CLAUDE_PROJECT_DIR: project,
      ...(process.env.WARDEN_TREE_TIMEOUT_MS !== undefined && { WARDEN_TREE_TIMEOUT_MS: process.env.WARDEN_TREE_TIMEOUT_MS }),
    };
    const rssFile = join(tmp, 'rss');
    const result: Record<string, Record<string, unknown>> = { claude: {}, codex: {} };
    let ok = true;
    const q = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
    const flags = ['--address', address, '--namespace', o.namespace, '--task-queue', taskQueue].map(q).join(' ');
    const forward = fileURLToPath(new URL('../src/hooks/forward.js', import.meta.url));
    // The endpoint's address and token (as `warden install` leaves them), in this run's own warden home.
    const wardenHome = join(home, '.warden');
    env.WARDEN_HOME = wardenHome;
    const { endpoint } = await ensureEndpoint(env, `127.0.0.1:${await freePort()}`);
    const nothing = await doNothingListener();
    let endpointPid: number | undefined;
    try {
      if (o.modes.includes('http') && !o.modes.includes('forwarder')) {
        // HTTP hooks cannot start the endpoint: a forwarder does (here, with an event it ignores).
        await runShell(`${q(process.execPath)} ${q(forward)} claude`, '{"hook_event_name":"Warmup"}', env, project, rssFile);
      }
      for (const agent of ['claude', 'codex'] as const) {
        for (const mode of o.modes) {
          if (mode === 'http' && agent === 'codex') continue; // codex has command hooks only
          const session = `bench-${tag}-${agent}-${mode}`;
          const agentId = sessionAgentId(project, session);
          const command =
            mode === 'command' ? `${q(process.execPath)} ${q(o.main)} hook ${agent} ${flags}` : `${q(process.execPath)} ${q(forward)} ${agent} ${flags}`;
          // One event: a command hook as the CLI runs it, or an HTTP hook posted from this (already running) process.
          const fire = (body: string): Promise<Run> =>
            mode === 'http' ? postHook(endpoint, agent, body, { address, namespace: o.namespace, taskQueue }) : runShell(command, body, env, project, rssFile);
          const baseline = (body: string): Promise<Run> => (mode === 'http' ? postTo(nothing.url, body) : runShell('true', body, env, project, rssFile));
          say(`${agent} ${mode}: ${mode === 'http' ? `POST ${endpoint.url}/hooks/${agent}` : command}`);
          // The first event starts the session's agent (auto-start) and, for the forwarder, the endpoint.
          const first = await fire(events(agent, session, project, transcript, 0).pre);
          if (first.code !== 0 || first.stderr) throw new Error(`${agent} ${mode}: the first hook failed (exit ${first.code}): ${first.stderr}`);
          endpointPid ??= serveProcess(wardenHome);
          for (let i = 1; i <= o.warmup; i++) {
            const e = events(agent, session, project, transcript, i);
            await fire(e.pre);
            await fire(e.post);
          }
          const hook: Record<'pre' | 'post', Run[]> = { pre: [], post: [] };
          const bare: Record<'pre' | 'post', Run[]> = { pre: [], post: [] };
          const endpointCpu0 = readCpuMs(endpointPid);
          for (let i = 0; i < o.calls; i++) {
            const e = events(agent, session, project, transcript, 1000 + i);
            for (const kind of ['pre', 'post'] as const) {
              hook[kind].push(await fire(e[kind]));
              bare[kind].push(await baseline(e[kind]));
            }
          }
          const endpointCpu1 = readCpuMs(endpointPid);
          const all = [...hook.pre, ...hook.post];
          const failed = all.filter((r) => r.code !== 0 || r.stderr);
          const denied = hook.pre.filter((r) => r.stdout.includes('"deny"')).length;
          const status = await client.status(agentId);
          // Every PostToolUse reports one turn: warm-up and measured ones.
          const turnsOk = status.turns >= o.warmup + o.calls;
          if (failed.length || denied || !turnsOk) ok = false;
          const p50 = (runs: Run[]) =>
            pct(
              runs.map((r) => r.wallMs),
              50,
            );
          result[agent]![mode] = {
            ...(mode === 'http' ? { url: `${endpoint.url}/hooks/${agent}` } : { command }),
            agentId,
            firstEventWallMs: round(first.wallMs),
            turnsRecorded: status.turns,
            failedCalls: failed.length,
            ...(failed[0] && { firstFailure: failed[0].stderr.trim().slice(0, 300) }),
            deniedPreToolUse: denied,
            preToolUse: { hook: summary(hook.pre), [mode === 'http' ? 'nothing' : 'true']: summary(bare.pre) },
            postToolUse: { hook: summary(hook.post), [mode === 'http' ? 'nothing' : 'true']: summary(bare.post) },
            addedWallMsPerEventP50: {
              preToolUse: round(p50(hook.pre) - p50(bare.pre)),
              postToolUse: round(p50(hook.post) - p50(bare.post)),
            },
            // The resident endpoint's CPU per event (the forwarder's and HTTP hooks' other half).
            ...(mode !== 'command' &&
              endpointCpu0 !== null &&
              endpointCpu1 !== null && { endpointCpuMsPerEvent: round((endpointCpu1 - endpointCpu0) / (2 * o.calls), 2) }),
          };
          await client.signal(agentId, 'abort', { reason: 'benchmark over' }).catch(() => undefined);
        }
      }
    } finally {
      nothing.server.close();
      const pid = endpointPid ?? serveProcess(wardenHome);
      if (pid) process.kill(pid, 'SIGTERM');
    }
    // Written before the process exits: a pipe takes it asynchronously.
    await new Promise<void>((done) =>
      process.stdout.write(
        `${JSON.stringify({
          bench: 'hook-latency',
          calls: o.calls,
          warmup: o.warmup,
          modes: o.modes,
          main: o.main,
          ...result,
          node: process.version,
          cpus: cpus().length,
          loadavg1m: round(loadavg()[0]!, 2),
        })}\n`,
        () => done(),
      ),
    );
    return ok ? 0 : 1;
  } finally {
    await client?.close().catch(() => undefined);
    await worker?.stop();
    await server?.stop().catch(() => undefined);
    rmSync(tmp, { recursive: true, force: true });
  }
}

exitWith(main, 'hook-latency: ');
