/**
 * What warden's hooks cost a whole session of a real agent CLI: the real `claude` binary against
 * the scripted Anthropic Messages server and the real `codex` binary against the scripted Responses
 * server, each scripted to make `--calls` shell tool calls (`echo step-N`) and then answer `done`,
 * run without hooks and with the hooks `warden install <agent> --user` writes, alternately.
 *
 *   npm run build && node dist/bench/session.js --calls 50 --runs 3 > result.json
 *
 * Starts its own headless dev server (or uses `--address`) and a worker process on a task queue of
 * its own. Everything the sessions touch lives in one temporary "world" directory: HOME,
 * WARDEN_HOME, XDG_*, WARDEN_CACHE_DIR, and per CLI and side its CLAUDE_CONFIG_DIR / CODEX_HOME.
 * The hooked side's config is written by running the warden CLI itself (`--main`, default this
 * build) as `install claude|codex --user` with the run's `--address`, `--namespace`, `--task-queue`
 * (and `--endpoint` on a free port when that CLI has the flag), so the bench measures whatever
 * install writes: command hooks, or HTTP hooks and a forwarder that start a resident endpoint.
 * Any process left with the world directory in its environment or command line (such an endpoint)
 * is killed at the end, on error and on SIGINT/SIGTERM.
 *
 * One JSON object on stdout; progress on stderr. Exit 1 when a check failed, 2 on bad usage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WardenClient } from '../src/client/index.js';
import { freePort } from '../src/devserver/ports.js';
import { startDevServer, type DevServer } from '../src/devserver/server.js';
import { projectPart, sessionAgentId } from '../src/hooks/session.js';
import { startAnthropicServer, text, toolResults, toolUse, type AnthropicServer } from '../test/fixtures/anthropic-server.js';
import { functionCallOutputs, message, shellCall, startModelServer, type ModelServer } from '../test/fixtures/model-server.js';
import { exitWith, loopbackAddress, type Proc, round, startWorkerMain, waitReady, wholeArg } from './common.js';
import { parseStat, readCpuMs } from './proc-cpu.js';

const USAGE = `usage: node dist/bench/session.js [--calls N] [--runs N] [--agents claude,codex] [--warmup N] [--main PATH] [--address HOST:PORT] [--namespace NS] [--timeout-ms MS] [--model-ms MS]
  --calls N      tool calls per session (default 50, max 1000)
  --runs N       measured sessions per side (without hooks, with hooks) and CLI, interleaved (default 3, max 50)
  --agents LIST  the CLIs to run: claude, codex or both (default claude,codex)
  --warmup N     tool calls of one unmeasured session per side first (default 3; 0: none)
  --main PATH    the warden CLI whose install writes the hooks (default: this build's dist/src/cli/main.js)
  --address      a running Temporal server (loopback) instead of a dev server of its own
  --namespace    its namespace (default: default)
  --timeout-ms   the longest one session may take (default 600000)
  --model-ms MS  each scripted model reply waits this long first, as a real model's turn does (default 0: none)`;

const say = (msg: string) => process.stderr.write(`[session ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

type Cli = 'claude' | 'codex';
type Side = 'bare' | 'hooks';
const TARGET_RATIO = 1.05;
const PROMPT = 'Run the numbered steps one by one with the shell, then say done.';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Options {
  calls: number;
  runs: number;
  agents: Cli[];
  warmup: number;
  main: string;
  address: string | null;
  namespace: string;
  timeoutMs: number;
  /** How long each scripted model reply takes (a real model's turn takes seconds; the scripted one none). */
  modelMs: number;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    calls: 50,
    runs: 3,
    agents: ['claude', 'codex'],
    warmup: 3,
    modelMs: 0,
    main: fileURLToPath(new URL('../src/cli/main.js', import.meta.url)),
    address: null,
    namespace: 'default',
    timeoutMs: 600_000,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    if (a === '--calls') o.calls = wholeArg(a, v, 1, 1000);
    else if (a === '--runs') o.runs = wholeArg(a, v, 1, 50);
    else if (a === '--warmup') o.warmup = wholeArg(a, v, 0, 100);
    else if (a === '--model-ms') o.modelMs = wholeArg(a, v, 0, 60_000);
    else if (a === '--timeout-ms') o.timeoutMs = wholeArg(a, v, 1000, 3_600_000);
    else if (a === '--address') o.address = loopbackAddress(v);
    else if (a === '--namespace' && v) o.namespace = v;
    else if (a === '--main' && v) {
      o.main = resolve(v);
      if (!existsSync(o.main)) throw new Error(`--main: no such file: ${o.main}`);
    } else if (a === '--agents' && v) {
      const list = v.split(',').map((s) => s.trim());
      if (!list.length || list.some((s) => s !== 'claude' && s !== 'codex') || new Set(list).size !== list.length)
        throw new Error('--agents needs claude, codex or claude,codex');
      o.agents = list as Cli[];
    } else throw new Error(`unknown or incomplete option ${a}`);
    i++;
  }
  return o;
}

// ---------- the CLIs ----------

/** The native `claude` of the platform package (as test/helpers/claude.ts finds it), or WARDEN_TEST_CLAUDE. */
function claudeBinary(): string {
  if (process.env.WARDEN_TEST_CLAUDE) return process.env.WARDEN_TEST_CLAUDE;
  const scope = join(ROOT, 'node_modules/@anthropic-ai');
  const platform = `claude-code-${process.platform}-${process.arch}`;
  const candidates = [join(scope, platform, 'claude'), join(scope, `${platform}-musl`, 'claude'), join(scope, 'claude-code/bin/claude.exe')];
  const found = candidates.find((p) => existsSync(p) && statSync(p).size > 1_000_000);
  if (!found) throw new Error(`no native claude binary (looked at ${candidates.join(', ')}); set WARDEN_TEST_CLAUDE`);
  return found;
}

const codexBinary = () => process.env.WARDEN_TEST_CODEX ?? join(ROOT, 'node_modules/.bin/codex');

/** Claude Code offline (as test/helpers/claude.ts's offlineClaudeEnv): no update checks, telemetry, error reports or retries. */
const offlineClaude = (baseUrl: string, configDir: string) => ({
  CLAUDE_CONFIG_DIR: configDir,
  ANTHROPIC_BASE_URL: baseUrl,
  ANTHROPIC_API_KEY: 'test',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  CLAUDE_CODE_MAX_RETRIES: '0',
});

/** `codex exec --json` offline against the scripted server (as test/helpers/codex.ts's codexExecArgs); hook trust bypassed, as automation does. */
function codexArgs(model: ModelServer, work: string): string[] {
  const overrides = [
    ...model.codexOverrides(),
    'analytics.enabled=false',
    'otel.metrics_exporter="none"',
    'check_for_update_on_startup=false',
    'web_search="disabled"',
  ];
  return [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '--sandbox',
    'workspace-write',
    '--color',
    'never',
    '-m',
    'warden-test-model',
    '-C',
    work,
    '--dangerously-bypass-hook-trust',
    ...overrides.flatMap((x) => ['-c', x]),
    PROMPT,
  ];
}

// ---------- processes ----------

interface Exit {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

let running: ChildProcess | null = null;

/** Run a program to its end (wall time spawn → exit); killed after `timeoutMs`. */
function run(file: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Exit> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const child = spawn(file, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    running = child;
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      running = null;
      rej(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      running = null;
      res({ code, signal, stdout, stderr, wallMs: performance.now() - t0 });
    });
  });
}

/** CPU ms of this process's reaped children: a finished CLI session counts here with every hook process it ran and waited for. */
function reapedChildrenCpuMs(): number {
  const s = parseStat(readFileSync('/proc/self/stat', 'utf8'));
  return s ? s.reapedChildTicks * 10 : 0;
}

/** Live processes (not this one) whose command line or environment mentions `marker`: what the world's sessions left running. */
function processesMentioning(marker: string): number[] {
  const pids: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    for (const f of ['cmdline', 'environ']) {
      try {
        if (readFileSync(`/proc/${e}/${f}`).includes(marker)) {
          pids.push(Number(e));
          break;
        }
      } catch {
        // gone, or not ours to read
      }
    }
  }
  return pids;
}

/** Own + reaped-children CPU ms of each pid that is still there. */
function cpuByPid(pids: number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const pid of pids) {
    try {
      const s = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      if (s) m.set(pid, (s.ownTicks + s.reapedChildTicks) * 10);
    } catch {
      // exited
    }
  }
  return m;
}

async function killAll(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + 5000;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids.filter(alive)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

// ---------- statistics ----------

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Session {
  side: Side;
  run: number;
  wallMs: number;
  /** CPU of the CLI's process tree: the CLI, its tool commands and its hook processes. */
  cliCpuMs: number;
  workerCpuMs: number | null;
  serverCpuMs: number | null;
  /** CPU of processes the hooks left running (a resident endpoint), during this session. */
  endpointCpuMs: number;
  toolResults: number;
  agentId: string | null;
  turnsReported: number | null;
  state: string | null;
  evaluations: { total: number; ok: number; flagged: number; skipped: number } | null;
  problems: string[];
}

function sideSummary(sessions: Session[]) {
  const m = (f: (s: Session) => number | null) => {
    const xs = sessions.map(f).filter((x): x is number => x !== null);
    return xs.length ? round(median(xs)) : null;
  };
  const walls = sessions.map((s) => s.wallMs);
  return {
    wallMs: { median: round(median(walls)), min: round(Math.min(...walls)), max: round(Math.max(...walls)), runs: walls.map((w) => round(w)) },
    cpuMsMedian: { cli: m((s) => s.cliCpuMs), worker: m((s) => s.workerCpuMs), server: m((s) => s.serverCpuMs), endpoint: m((s) => s.endpointCpuMs) },
  };
}

/** What install wrote: how many handlers of each type, and the distinct commands / URLs (the URL without its query string). */
function hookSummary(file: string): { events: number; handlerTypes: Record<string, number>; targets: string[] } {
  const out = { events: 0, handlerTypes: {} as Record<string, number>, targets: [] as string[] };
  let hooks: Record<string, Array<{ hooks?: Array<{ type?: string; command?: string; url?: string }> }>>;
  try {
    hooks = (JSON.parse(readFileSync(file, 'utf8')) as { hooks?: typeof hooks }).hooks ?? {};
  } catch {
    return out;
  }
  const targets = new Set<string>();
  for (const groups of Object.values(hooks)) {
    out.events++;
    for (const g of groups ?? [])
      for (const h of g.hooks ?? []) {
        const type = String(h.type ?? '?');
        out.handlerTypes[type] = (out.handlerTypes[type] ?? 0) + 1;
        if (h.command) targets.add(h.command);
        if (h.url) targets.add(h.url.split('?')[0]!);
      }
  }
  out.targets = [...targets];
  return out;
}

// ---------- main ----------

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const load0 = loadavg();
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const taskQueue = `warden-sessionbench-${tag}`;
  const tmp = mkdtempSync(join(tmpdir(), 'warden-session-'));
  const world = join(tmp, 'world');
  let server: DevServer | null = null;
  let worker: Proc | null = null;
  let client: WardenClient | null = null;
  let anthropic: AnthropicServer | null = null;
  let responses: ModelServer | null = null;
  let leftovers = 0;

  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    (cleaning ??= (async () => {
      if (running?.pid) running.kill('SIGKILL');
      const left = processesMentioning(world);
      leftovers = left.length;
      if (left.length) say(`killing ${left.length} process(es) the sessions left running: ${left.join(', ')}`);
      await killAll(left);
      await client?.close().catch(() => undefined);
      await anthropic?.close().catch(() => undefined);
      await responses?.close().catch(() => undefined);
      await worker?.stop();
      await server?.stop().catch(() => undefined);
      rmSync(tmp, { recursive: true, force: true });
    })());
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    say(`${sig}: tearing down`);
    void cleanup().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    let address = o.address;
    if (!address) {
      const port = await freePort();
      say(`starting a dev server on 127.0.0.1:${port}`);
      mkdirSync(join(tmp, 'server'));
      server = await startDevServer({ port, uiPort: false, dbFile: join(tmp, 'server', 'temporal.db'), namespace: o.namespace, say });
      address = server.address;
    }
    say(`starting the worker on task queue ${taskQueue}`);
    // The bench aborts each session's agent when it is done with it: an aborted agent is a failed workflow, not news.
    worker = startWorkerMain(address, o.namespace, taskQueue, {}, { sampleRss: false, quiet: (line) => line.includes('"msg":"Workflow failed"') });
    await waitReady(worker);
    client = await WardenClient.connect({ address, namespace: o.namespace, taskQueue });

    // The sessions' world: the same for both sides, apart from the CLI's config dir.
    const home = join(world, 'home');
    for (const d of ['home', 'warden-home', 'config', 'cache', 'state', 'data', 'warden-cache', 'projects']) mkdirSync(join(world, d), { recursive: true });
    const baseEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      WARDEN_HOME: join(world, 'warden-home'),
      XDG_CONFIG_HOME: join(world, 'config'),
      XDG_CACHE_HOME: join(world, 'cache'),
      XDG_STATE_HOME: join(world, 'state'),
      XDG_DATA_HOME: join(world, 'data'),
      WARDEN_CACHE_DIR: join(world, 'warden-cache'),
    };
    const configDir = (cli: Cli, side: Side) => join(world, `${cli}-${side}`);

    // The hooked side's config, as `warden install <agent> --user` writes it.
    const help = await run(process.execPath, [o.main, 'install', '--help'], { cwd: world, env: baseEnv, timeoutMs: 60_000 });
    const endpointFlag = help.stdout.includes('--endpoint') ? ['--endpoint', `127.0.0.1:${await freePort()}`] : [];
    const installed: Record<string, { file: string; actions: string[] }> = {};
    for (const cli of o.agents) {
      mkdirSync(configDir(cli, 'bare'), { recursive: true });
      mkdirSync(configDir(cli, 'hooks'), { recursive: true });
      const env = { ...baseEnv, CLAUDE_CONFIG_DIR: configDir('claude', 'hooks'), CODEX_HOME: configDir('codex', 'hooks') };
      const args = [o.main, 'install', cli, '--user', '--address', address, '--namespace', o.namespace, '--task-queue', taskQueue, ...endpointFlag, '--json'];
      const r = await run(process.execPath, args, { cwd: world, env, timeoutMs: 60_000 });
      if (r.code !== 0) throw new Error(`warden install ${cli} failed (exit ${r.code}): ${r.stderr.trim()}`);
      const j = JSON.parse(r.stdout) as { file: string; actions: string[] };
      installed[cli] = { file: j.file, actions: j.actions };
      say(`${cli}: install wrote ${j.file}`);
    }

    anthropic = o.agents.includes('claude') ? await startAnthropicServer() : null;
    responses = o.agents.includes('codex') ? await startModelServer() : null;
    let target = 0; // tool calls the current session is to make
    const thinking = () => (o.modelMs ? new Promise((r) => setTimeout(r, o.modelMs)) : Promise.resolve());
    anthropic?.setScript(async (req) => {
      await thinking();
      const done = toolResults(req.body).length;
      return done < target ? toolUse('Bash', { command: `echo step-${done + 1}`, description: `Step ${done + 1}` }) : text('done');
    });
    responses?.setScript(async (req) => {
      await thinking();
      const done = functionCallOutputs(req.body).length;
      return done < target ? shellCall(`echo step-${done + 1}`, { extra: { login: false } }) : message('done');
    });

    let endpointCpu = new Map<number, number>();
    const claude = o.agents.includes('claude') ? claudeBinary() : '';

    /** One session of `cli` on `side` making `calls` tool calls; label names its project directory. */
    async function session(cli: Cli, side: Side, runNo: number, calls: number, label: string): Promise<Session> {
      target = calls;
      const project = join(world, 'projects', `${cli}-${side}-${label}`);
      mkdirSync(project, { recursive: true });
      const problems: string[] = [];
      const sessionId = randomUUID();
      const before = { cli: reapedChildrenCpuMs(), worker: readCpuMs(worker?.child.pid), server: readCpuMs(server?.process.pid) };
      const seenBefore = cli === 'claude' ? anthropic!.agentRequests().length : responses!.responsesRequests().length;
      let exit: Exit;
      if (cli === 'claude') {
        const env = { ...baseEnv, ...offlineClaude(anthropic!.url, configDir('claude', side)) };
        const args = ['-p', PROMPT, '--output-format', 'json', '--allowedTools', 'Bash', '--session-id', sessionId];
        exit = await run(claude, args, { cwd: project, env, timeoutMs: o.timeoutMs });
      } else {
        const env = { ...baseEnv, CODEX_HOME: configDir('codex', side), OPENAI_API_KEY: 'test' };
        exit = await run(codexBinary(), codexArgs(responses!, project), { cwd: project, env, timeoutMs: o.timeoutMs });
      }
      const cliCpuMs = reapedChildrenCpuMs() - before.cli;
      const after = { worker: readCpuMs(worker?.child.pid), server: readCpuMs(server?.process.pid) };
      const nowEndpoint = cpuByPid(processesMentioning(world));
      let endpointCpuMs = 0;
      for (const [pid, ms] of nowEndpoint) endpointCpuMs += ms - (endpointCpu.get(pid) ?? 0);
      endpointCpu = nowEndpoint;

      // The CLI ran every call and finished with the scripted answer.
      const tail = `${exit.stderr}\n${exit.stdout}`.trim().slice(-600);
      if (exit.code !== 0) problems.push(`exit ${exit.code ?? exit.signal}: ${tail}`);
      let threadId: string | null = null;
      if (cli === 'claude') {
        let result: { result?: string; is_error?: boolean } | null = null;
        try {
          result = JSON.parse(exit.stdout.trim().split('\n').at(-1) ?? '');
        } catch {
          result = null;
        }
        if (result?.result !== 'done' || result.is_error) problems.push(`claude did not finish with "done": ${tail}`);
      } else {
        const events = exit.stdout.split('\n').flatMap((l) => {
          try {
            return [JSON.parse(l) as { type?: string; thread_id?: string; item?: { type?: string; text?: string } }];
          } catch {
            return [];
          }
        });
        threadId = events.find((e) => e.type === 'thread.started')?.thread_id ?? null;
        const said = events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').map((e) => e.item?.text);
        if (said.at(-1) !== 'done') problems.push(`codex did not finish with "done": ${tail}`);
      }
      const reqs = cli === 'claude' ? anthropic!.agentRequests().slice(seenBefore) : responses!.responsesRequests().slice(seenBefore);
      const last = reqs.at(-1)?.body;
      const results = last === undefined ? 0 : cli === 'claude' ? toolResults(last).length : functionCallOutputs(last).length;
      if (results !== calls) problems.push(`the model saw ${results} tool results, not ${calls}`);

      // With hooks: warden's agent for the session recorded every tool call as a turn.
      let agentId: string | null = null;
      let status: Awaited<ReturnType<WardenClient['status']>> | null = null;
      if (side === 'hooks') {
        const sid = cli === 'claude' ? sessionId : threadId;
        const derived = sid ? sessionAgentId(project, sid) : null;
        try {
          status = derived ? await client!.status(derived) : null;
          agentId = derived;
        } catch {
          status = null;
        }
        if (!status) {
          // Another build may name its agents otherwise: the newest agent of this project.
          const found = (await client!.list({ limit: 1000 })).find((a) => a.agentId.startsWith(`${projectPart(project)}-`));
          if (found) {
            agentId = found.agentId;
            status = await client!.status(found.agentId).catch(() => null);
          }
        }
        if (!status) problems.push('no warden agent for the session: the hooks did not report');
        else if (status.turns < calls) problems.push(`warden recorded ${status.turns} turns for ${calls} tool calls`);
        if (agentId) await client!.signal(agentId, 'abort', { reason: 'benchmark session over' }).catch(() => undefined);
      }
      const s: Session = {
        side,
        run: runNo,
        wallMs: exit.wallMs,
        cliCpuMs,
        workerCpuMs: before.worker !== null && after.worker !== null ? after.worker - before.worker : null,
        serverCpuMs: before.server !== null && after.server !== null ? after.server - before.server : null,
        endpointCpuMs,
        toolResults: results,
        agentId,
        turnsReported: status?.turns ?? null,
        state: status?.state ?? null,
        evaluations: status?.evaluations ?? null,
        problems,
      };
      say(
        `${cli} ${side} ${label}: ${round(exit.wallMs / 1000, 2)} s, cli cpu ${cliCpuMs} ms` +
          (status ? `, ${status.turns} turns reported (${status.state})` : '') +
          (problems.length ? `; PROBLEMS: ${problems.join(' | ')}` : ''),
      );
      return s;
    }

    const result: Record<string, unknown> = {};
    let ok = true;
    for (const cli of o.agents) {
      if (o.warmup > 0) for (const side of ['bare', 'hooks'] as const) await session(cli, side, 0, o.warmup, 'warmup');
      const sessions: Session[] = [];
      for (let r = 1; r <= o.runs; r++) {
        // ABAB… would favour whichever side runs second on a warming machine: alternate who goes first.
        const order: Side[] = r % 2 ? ['bare', 'hooks'] : ['hooks', 'bare'];
        for (const side of order) sessions.push(await session(cli, side, r, o.calls, `run${r}`));
      }
      const bare = sessions.filter((s) => s.side === 'bare');
      const hooks = sessions.filter((s) => s.side === 'hooks');
      const problems = sessions.flatMap((s) => s.problems.map((p) => `${s.side} run ${s.run}: ${p}`));
      // Without hooks, no agent may exist for those projects (proof the bare side really ran bare).
      const bareAgents = (await client.list({ limit: 1000 })).filter((a) => a.agentId.startsWith(`${cli}-bare-`));
      if (bareAgents.length) problems.push(`agents without hooks: ${bareAgents.map((a) => a.agentId).join(', ')}`);
      if (problems.length) ok = false;
      const sb = sideSummary(bare);
      const sh = sideSummary(hooks);
      const ratio = round(sh.wallMs.median / sb.wallMs.median, 3);
      const perCall = (a: number | null, b: number | null) => (a !== null && b !== null ? round((a - b) / o.calls, 2) : null);
      result[cli] = {
        binary: cli === 'claude' ? claude : codexBinary(),
        hooks: { file: installed[cli]!.file, actions: installed[cli]!.actions, ...hookSummary(installed[cli]!.file) },
        withoutHooks: sb,
        withHooks: sh,
        ratio,
        targetRatio: TARGET_RATIO,
        withinTarget: ratio <= TARGET_RATIO,
        addedWallMsPerCall: perCall(sh.wallMs.median, sb.wallMs.median),
        addedCpuMsPerCall: {
          cliAndHooks: perCall(sh.cpuMsMedian.cli, sb.cpuMsMedian.cli),
          worker: perCall(sh.cpuMsMedian.worker, sb.cpuMsMedian.worker),
          server: perCall(sh.cpuMsMedian.server, sb.cpuMsMedian.server),
          endpoint: perCall(sh.cpuMsMedian.endpoint, sb.cpuMsMedian.endpoint),
        },
        turnsReported: hooks.map((s) => s.turnsReported),
        agents: hooks.map((s) => ({ agentId: s.agentId, turns: s.turnsReported, state: s.state, evaluations: s.evaluations })),
        problems,
      };
    }
    const endpointProcesses = processesMentioning(world).length;
    process.stdout.write(
      `${JSON.stringify({
        bench: 'session',
        calls: o.calls,
        modelMs: o.modelMs,
        runs: o.runs,
        warmup: o.warmup,
        main: o.main,
        ...(endpointFlag.length && { endpoint: endpointFlag[1] }),
        ...result,
        processesLeftByHooks: endpointProcesses,
        server: o.address ? 'external' : 'dev-server',
        node: process.version,
        cpus: cpus().length,
        loadavgBefore: load0.map((x) => round(x, 2)),
        loadavgAfter: loadavg().map((x) => round(x, 2)),
      })}\n`,
    );
    return ok ? 0 : 1;
  } finally {
    await cleanup();
    if (leftovers) say(`killed ${leftovers} leftover process(es)`);
  }
}

exitWith(main, 'session: ');
