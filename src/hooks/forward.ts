#!/usr/bin/env node
/**
 * `warden-hook claude|codex`: the hook command of a supervised session. It does nothing but pass
 * the event on stdin to this user's resident hook endpoint (`warden serve`, src/serve/hooks.ts)
 * and print the answer, so a hook costs a small Node process and a loopback request: no CLI module
 * graph, no Temporal client. It imports only Node's own modules (a unit test keeps it so).
 *
 * When the endpoint is not listening, the forwarder starts it (`warden serve --listen <its
 * address>`, detached, logging to $WARDEN_HOME/serve.log; a lock file keeps racing hooks from
 * starting several, and the port itself lets only one listen), waits for it briefly, and posts
 * again. It is never in the agent's way: whatever fails, it answers nothing, says why on stderr
 * once per session, and exits 0 (unless --strict).
 */
import type * as Crypto from 'node:crypto';
import type * as Fs from 'node:fs';
import type * as Os from 'node:os';
import type * as Path from 'node:path';
import type * as Url from 'node:url';
import { visible } from '../text/sanitize.js';
import { builtin } from './builtin.js';
import { HOOK_ROUTE, endpointFile, endpointLog, readEndpoint, wardenHome, type HookEndpoint } from './endpoint-file.js';

const { closeSync, mkdirSync, openSync, statSync, unlinkSync } = await builtin<typeof Fs>('node:fs');
const { homedir } = await builtin<typeof Os>('node:os');
const { join } = await builtin<typeof Path>('node:path');

const USAGE = 'usage: warden-hook claude|codex [--agent ID] [--timeout MS] [--strict] [--address HOST:PORT] [--namespace NS] [--task-queue QUEUE]';
const DEFAULT_TIMEOUT_MS = 10_000;
/** How long a hook waits for an endpoint it started (or another hook is starting) to listen. */
const START_WAIT_MS = 5_000;
/** After a start that failed, hooks do not try again (nor wait for it) for this long. */
const FAILED_START_BACKOFF_MS = 60_000;
/** A lock older than this belongs to a start that died: take it over. */
const STALE_LOCK_MS = 15_000;
const STDIN_MAX_BYTES = 32 * 1024 * 1024;

interface Args {
  agent: 'claude' | 'codex';
  named?: string;
  timeoutMs: number;
  strict: boolean;
  query: URLSearchParams;
}

class Usage extends Error {}

function parseArgs(argv: string[]): Args {
  const [agent, ...rest] = argv;
  if (agent !== 'claude' && agent !== 'codex') throw new Usage(`the agent must be claude or codex, not ${JSON.stringify(agent ?? '')}\n${USAGE}`);
  const a: Args = { agent, timeoutMs: DEFAULT_TIMEOUT_MS, strict: false, query: new URLSearchParams() };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i]!;
    const [name, inline] = flag.includes('=') ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)] : [flag, undefined];
    const value = () => {
      const v = inline ?? rest[++i];
      if (v === undefined || v === '') throw new Usage(`${name} needs a value\n${USAGE}`);
      return v;
    };
    if (name === '--strict') a.strict = true;
    else if (name === '--agent') a.named = value();
    else if (name === '--timeout') {
      const v = value();
      a.timeoutMs = Number(v);
      if (!/^\d+$/.test(v) || a.timeoutMs < 1 || a.timeoutMs > 600_000)
        throw new Usage(`--timeout must be a whole number of milliseconds from 1 to 600000, not ${v}`);
    } else if (name === '--address') a.query.set('address', value());
    else if (name === '--namespace') a.query.set('namespace', value());
    else if (name === '--task-queue') a.query.set('task_queue', value());
    else throw new Usage(`unknown option ${name}\n${USAGE}`);
  }
  return a;
}

// Terminal controls in a line from the endpoint (it may echo agent text) are shown as text.
const warnLine = (line: string) => process.stderr.write(`warden hook: ${visible(line)}\n`);

function readStdin(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    process.stdin.on('data', (c: Buffer) => {
      size += c.length;
      if (size > STDIN_MAX_BYTES) {
        reject(new Error(`the hook input on stdin is larger than ${STDIN_MAX_BYTES} bytes`));
        process.stdin.destroy();
      } else chunks.push(c);
    });
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', reject);
  });
}

/** The session id of the event, when it has one (for saying things once per session). */
function sessionOf(body: Buffer): string | null {
  try {
    const id = (JSON.parse(body.toString('utf8')) as { session_id?: unknown }).session_id;
    return typeof id === 'string' && id ? id : null;
  } catch {
    return null;
  }
}

/** Say `line` once per session (a marker created exclusively in warden's cache); every time without a session. */
async function sayOnce(session: string | null, topic: string, line: string): Promise<void> {
  if (session) {
    const cache = process.env.WARDEN_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME || homedir(), '.cache'), 'warden');
    const dir = join(cache, 'sessions');
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      closeSync(
        openSync(
          join(dir, `forward-${(await builtin<typeof Crypto>('node:crypto')).createHash('sha256').update(session).digest('hex').slice(0, 32)}.${topic}`),
          'wx',
          0o600,
        ),
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    }
  }
  warnLine(line);
}

/** Whether `file` was touched less than `ms` ago. */
function recently(file: string, ms: number): boolean {
  try {
    const age = Date.now() - statSync(file).mtimeMs;
    return age > -1_000 && age < ms;
  } catch {
    return false;
  }
}

function touch(file: string): void {
  try {
    closeSync(openSync(file, 'w', 0o600));
  } catch {
    // best effort: without it the next hook tries to start the endpoint again
  }
}

interface Answer {
  status: number;
  body: string;
  say: string[];
}

/**
 * POST the event to the endpoint: one HTTP/1.1 request on a plain socket, `Connection: close`, the
 * answer read to its end. (node:http would cost this short-lived process ~10 ms more CPU for the
 * same request; the endpoint is warden's own server, which always sends a Content-Length.)
 */
async function post(endpoint: HookEndpoint, a: Args, body: Buffer, timeoutMs: number): Promise<Answer> {
  const { connect } = await builtin<typeof import('node:net')>('node:net');
  const u = new URL(endpoint.url);
  const query = a.query.toString();
  const enc = (v: string | undefined) => (v ? encodeURIComponent(v) : undefined);
  const headers: Record<string, string | undefined> = {
    Host: u.host,
    Authorization: `Bearer ${endpoint.token}`,
    'Content-Type': 'application/json',
    'Content-Length': String(body.length),
    Connection: 'close',
    'X-Warden-Forwarder': '1',
    'X-Warden-Timeout-Ms': String(a.timeoutMs),
    'X-Warden-Cwd': enc(process.cwd()),
    'X-Warden-Project-Dir': enc(process.env.CLAUDE_PROJECT_DIR),
    'X-Warden-Auto-Start': enc(process.env.WARDEN_AUTO_START),
    'X-Warden-Agent': enc(a.named ?? process.env.WARDEN_AGENT_ID),
  };
  const head = [
    `POST ${HOOK_ROUTE[a.agent]}${query ? `?${query}` : ''} HTTP/1.1`,
    ...Object.entries(headers)
      .filter(([, v]) => v)
      .map(([k, v]) => `${k}: ${v}`),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(
      () => socket.destroy(Object.assign(new Error(`no answer from the hook endpoint within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      timeoutMs,
    );
    // Written, not ended: a half-closed connection would let the server drop it before it answers.
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body])));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const lines = (split < 0 ? '' : all.subarray(0, split).toString('latin1')).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      if (!status) return reject(Object.assign(new Error('the hook endpoint closed the connection without an answer'), { code: 'ECONNRESET' }));
      const header = (name: string) =>
        lines
          .find((l) => l.toLowerCase().startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim();
      const length = Number(header('content-length') ?? Number.NaN);
      const rest = all.subarray(split + 4);
      if (Number.isFinite(length) && rest.length < length)
        return reject(Object.assign(new Error('the hook endpoint closed the connection mid-answer'), { code: 'ECONNRESET' }));
      let say: string[] = [];
      try {
        const raw = header('x-warden-say');
        const parsed: unknown = raw ? JSON.parse(decodeURIComponent(raw)) : [];
        if (Array.isArray(parsed)) say = parsed.filter((l): l is string => typeof l === 'string');
      } catch {
        // a malformed header says nothing
      }
      resolve({ status, body: (Number.isFinite(length) ? rest.subarray(0, length) : rest).toString('utf8'), say });
    });
  });
}

/** Whether something listens at the endpoint's address. */
async function listening(endpoint: HookEndpoint): Promise<boolean> {
  const { connect } = await builtin<typeof import('node:net')>('node:net');
  const u = new URL(endpoint.url);
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Start the endpoint, unless another hook is starting it right now (the lock file), and wait until
 * something listens or `until` passes. True when it listens.
 */
async function startEndpoint(endpoint: HookEndpoint, until: number): Promise<boolean> {
  const home = wardenHome();
  const lock = join(home, 'serve.lock');
  let mine = false;
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      mine = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) {
        unlinkSync(lock);
        closeSync(openSync(lock, 'wx', 0o600));
        mine = true;
      }
    }
  } catch {
    // another hook took the lock first: wait for its endpoint
  }
  let exited = false;
  if (mine) {
    const log = openSync(endpointLog(), 'a', 0o600);
    const env = { ...process.env };
    for (const k of ['CLAUDE_PROJECT_DIR', 'WARDEN_AGENT_ID', 'WARDEN_AUTO_START']) delete env[k];
    const { spawn } = await builtin<typeof import('node:child_process')>('node:child_process');
    const main = (await builtin<typeof Url>('node:url')).fileURLToPath(new URL('../cli/main.js', import.meta.url));
    const child = spawn(process.execPath, [main, 'serve', '--listen', new URL(endpoint.url).host], {
      detached: true,
      stdio: ['ignore', log, log],
      env,
      cwd: home,
    });
    child.once('exit', () => {
      exited = true; // it could not listen (see its log): no use waiting
    });
    child.unref();
    closeSync(log);
  }
  try {
    while (Date.now() < until && !exited) {
      if (await listening(endpoint)) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  } finally {
    if (mine) {
      try {
        unlinkSync(lock);
      } catch {
        // gone already
      }
    }
  }
}

async function run(argv: string[]): Promise<number> {
  const started = Date.now();
  let a: Args;
  try {
    a = parseArgs(argv);
  } catch (err) {
    warnLine((err as Error).message);
    return argv.includes('--strict') ? 2 : 0;
  }
  const fail = (code: number) => (a.strict ? code : 0);
  let body: Buffer;
  try {
    body = await readStdin();
  } catch (err) {
    warnLine(`${(err as Error).message} — continuing without supervision`);
    return fail(2);
  }
  const session = sessionOf(body);
  const endpoint = readEndpoint();
  if (!endpoint) {
    await sayOnce(
      session,
      'endpoint',
      `no hook endpoint is set up (${endpointFile()} is missing or invalid): run \`warden install ${a.agent}\` again; this session is not supervised`,
    );
    return fail(1);
  }
  const left = () => Math.max(1, a.timeoutMs - (Date.now() - started));
  let answer: Answer;
  try {
    try {
      answer = await post(endpoint, a, body, left());
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ECONNREFUSED') throw err;
      const failed = join(wardenHome(), 'serve.failed');
      const off = `the hook endpoint at ${endpoint.url} is not running and did not start (its log: ${endpointLog()}); this session is not supervised until it runs (\`warden serve\`)`;
      // A start failed a moment ago: don't make every tool call wait for another.
      if (recently(failed, FAILED_START_BACKOFF_MS)) {
        await sayOnce(session, 'endpoint', off);
        return fail(1);
      }
      // Nobody listens: start the endpoint (or wait for the hook that is starting it), then post again.
      if (!(await startEndpoint(endpoint, Math.min(Date.now() + START_WAIT_MS, started + a.timeoutMs)))) {
        touch(failed);
        await sayOnce(session, 'endpoint', off);
        return fail(1);
      }
      try {
        unlinkSync(failed); // started after all: a later crash may start it again at once
      } catch {
        // there was none
      }
      answer = await post(endpoint, a, body, left());
    }
  } catch (err) {
    await sayOnce(session, 'endpoint', `the hook endpoint at ${endpoint.url} did not answer (${(err as Error).message}); continuing without supervision`);
    return fail(1);
  }
  for (const line of answer.say) warnLine(line);
  if (answer.status === 401) {
    await sayOnce(session, 'token', `the hook endpoint refused this hook's token (${endpointFile()} changed?); continuing without supervision`);
    return fail(1);
  }
  if (answer.status !== 200) {
    let why = answer.body;
    try {
      why = (JSON.parse(answer.body) as { error?: string }).error ?? why;
    } catch {
      // not JSON: say it as it came
    }
    // A bad event is this event's own problem; any other refusal would repeat at every event: said once.
    const line = `the hook endpoint answered ${answer.status}: ${why.slice(0, 500)}`;
    if (answer.status === 400) {
      if (!answer.say.length) warnLine(line);
    } else await sayOnce(session, `status-${answer.status}`, `${line}; continuing without supervision`);
    return fail(answer.status === 400 ? 2 : 1);
  }
  if (answer.body) await new Promise<void>((resolve) => process.stdout.write(`${answer.body}\n`, () => resolve()));
  return 0;
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    warnLine(`the hook failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(process.argv.includes('--strict') ? 1 : 0);
  },
);
