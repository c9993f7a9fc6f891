/**
 * The resident hook endpoint: `POST /hooks/claude` and `POST /hooks/codex` on `warden serve`.
 * Claude Code's `type: "http"` hooks post their event here themselves; every other hook runs the
 * forwarder (src/hooks/forward.ts), which posts its stdin here and prints the answer. One process
 * holds the Temporal connection for every session of its user, so a hook costs a loopback request
 * instead of a Node process that loads the CLI and connects to Temporal.
 *
 * The answer is what `warden hook` prints (src/hooks/event.ts does the work for both), sent only
 * after Temporal accepted what the event reported: a crash of this process loses nothing it
 * acknowledged. What the session should hear once (supervision off, an untrusted warden.yaml) goes
 * to the forwarder in `X-Warden-Say` (it writes it on stderr) and to Claude Code's HTTP hooks as
 * the answer's `systemMessage`.
 *
 * Who may post: the request must come from loopback, name a loopback Host (a web page that
 * rebinds its own name to 127.0.0.1 still sends its own Host), carry no Origin (browsers send
 * one), be JSON, and carry the user's token (`Authorization: Bearer …`, from the 0600 endpoint file).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { WardenClient } from '../client/index.js';
import { connectionSettings } from '../config/connection.js';
import { HOOK_STDIN_MAX_BYTES } from '../hooks/bounded-read.js';
import { readEndpoint, tokenMatches } from '../hooks/endpoint-file.js';
import { HookInputError, answerHookEvent, connectForHook, hookFailed } from '../hooks/event.js';
import { markUnreachable, sessionMarkerDir } from '../hooks/auto-start.js';
import type { ClaudeHookOutput, CodexHookInput, HookAgent } from '../hooks/protocol.js';
import { otel } from '../telemetry/otel.js';
import { recordHookLatency } from '../telemetry/record.js';

/** The hook's event name (`PreToolUse`, `Stop` …) for telemetry: a short name, never the payload. */
function hookEventName(raw: string): string {
  const m = /"hook_event_name"\s*:\s*"([A-Za-z]{1,40})"/.exec(raw);
  return m ? m[1]! : 'unknown';
}

/** How long an event may take unless its hook says (`X-Warden-Timeout-Ms`, `?timeout=`): as `warden hook --timeout`. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10_000;
const MAX_HOOK_TIMEOUT_MS = 600_000;
/** After Temporal could not be reached, requests fail at once for this long instead of each waiting to connect. */
const RECONNECT_AFTER_MS = 5_000;

/** The session variables a hook passes as headers; the endpoint's own environment never supplies them. */
const SESSION_ENV = ['CLAUDE_PROJECT_DIR', 'WARDEN_AUTO_START', 'WARDEN_AGENT_ID'] as const;

export interface HookEndpointOptions {
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** The token hook requests must carry (default: the endpoint file's, read at each request, so a rotation takes effect at once). */
  token?: () => string | null;
  connect?: (address: string | undefined, namespace: string | undefined, taskQueue: string | undefined, timeoutMs: number) => Promise<WardenClient>;
}

export interface HookEndpoint {
  /** Answer the request when it is for a hook route: true when it was. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

const isLoopbackAddress = (a: string | undefined) => !!a && (/^127\./.test(a) || a === '::1' || /^::ffff:127\./.test(a));

/** The Host header names this machine's loopback (with any port). */
export function loopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:]+))(?::\d{1,5})?$/.exec(host.trim());
  const name = (m?.[1] ?? m?.[2] ?? '').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/** A header value as text: percent-encoded by the forwarder; raw UTF-8 (read as latin1 by Node) from Claude Code. */
function headerText(req: IncomingMessage, name: string, encoded: boolean): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return undefined;
  if (encoded) {
    try {
      return decodeURIComponent(s);
    } catch {
      return undefined;
    }
  }
  return Buffer.from(s, 'latin1').toString('utf8');
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === null ? '' : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > HOOK_STDIN_MAX_BYTES) throw new Refusal(413, `the hook event is larger than ${HOOK_STDIN_MAX_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function createHookEndpoint(opts: HookEndpointOptions): HookEndpoint {
  const env = opts.env ?? process.env;
  const markers = sessionMarkerDir(env);
  const token = opts.token ?? (() => readEndpoint(env)?.token ?? null);
  const connect =
    opts.connect ?? ((address, namespace, taskQueue, timeoutMs) => connectForHook(connectionSettings({ address, namespace, taskQueue }), timeoutMs));

  // One client per Temporal address, namespace and task queue, kept for every later event.
  const clients = new Map<string, { client: Promise<WardenClient>; failedAt?: number }>();
  function clientFor(address?: string, namespace?: string, taskQueue?: string, timeoutMs = DEFAULT_HOOK_TIMEOUT_MS): Promise<WardenClient> {
    const key = JSON.stringify([address ?? null, namespace ?? null, taskQueue ?? null]);
    const had = clients.get(key);
    if (had && (had.failedAt === undefined || Date.now() - had.failedAt < RECONNECT_AFTER_MS)) return had.client;
    const entry: { client: Promise<WardenClient>; failedAt?: number } = { client: connect(address, namespace, taskQueue, timeoutMs) };
    entry.client.catch(() => {
      entry.failedAt = Date.now();
    });
    clients.set(key, entry);
    return entry.client;
  }

  // The project directory of a Claude Code session, as its first hook named it: an HTTP hook of a
  // session whose agent `cd`ed elsewhere still finds the same agent. Kept in memory and in a file
  // per session (a restarted endpoint reads it back).
  const projectDirs = new Map<string, string>();
  const dirFile = (sessionId: string) => join(markers, `${createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}.project`);
  function projectDirOf(sessionId: string | undefined, given: string | undefined, fallback: string): string {
    if (!sessionId) return given ?? fallback;
    if (given) {
      if (!projectDirs.has(sessionId)) {
        projectDirs.set(sessionId, given);
        try {
          mkdirSync(markers, { recursive: true, mode: 0o700 });
          writeFileSync(dirFile(sessionId), given, { mode: 0o600, flag: 'wx' });
        } catch {
          // already recorded by an earlier endpoint, or not writable: memory still has it
        }
      }
      return projectDirs.get(sessionId) ?? given;
    }
    let known = projectDirs.get(sessionId);
    if (known === undefined) {
      try {
        known = readFileSync(dirFile(sessionId), 'utf8');
        projectDirs.set(sessionId, known);
      } catch {
        return fallback;
      }
    }
    if (projectDirs.size > 10_000) projectDirs.delete(projectDirs.keys().next().value!);
    return known;
  }

  async function answer(req: IncomingMessage, res: ServerResponse, agent: HookAgent, url: URL, meta: { event?: string }): Promise<void> {
    if (req.method !== 'POST') throw new Refusal(405, 'hook events are POSTed');
    if (!isLoopbackAddress(req.socket.remoteAddress)) throw new Refusal(403, 'hook events are taken from this machine only');
    if (!loopbackHost(req.headers.host)) throw new Refusal(403, `Host ${JSON.stringify(req.headers.host ?? '')} is not a loopback address`);
    if (req.headers.origin !== undefined) throw new Refusal(403, 'hook events are not taken from web pages');
    const expected = token();
    if (!expected || !(await tokenMatches(req.headers.authorization, expected))) throw new Refusal(401, 'missing or wrong hook token');
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new Refusal(415, 'the hook event must be sent as application/json');
    const raw = await readBody(req);
    if (otel().enabled) meta.event = hookEventName(raw);

    const forwarded = req.headers['x-warden-forwarder'] === '1';
    const h = (name: string) => headerText(req, name, forwarded);
    const timeoutRaw = h('x-warden-timeout-ms') ?? url.searchParams.get('timeout') ?? undefined;
    const timeoutMs = timeoutRaw === undefined ? DEFAULT_HOOK_TIMEOUT_MS : Number(timeoutRaw);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_HOOK_TIMEOUT_MS)
      throw new Refusal(400, `the hook timeout must be a whole number of milliseconds from 1 to ${MAX_HOOK_TIMEOUT_MS}, not ${JSON.stringify(timeoutRaw)}`);
    const sessionEnv: NodeJS.ProcessEnv = { ...env };
    for (const k of SESSION_ENV) delete sessionEnv[k];
    const projectHeader = h('x-warden-project-dir');
    const autoStart = h('x-warden-auto-start');
    if (autoStart) sessionEnv.WARDEN_AUTO_START = autoStart;
    const named = h('x-warden-agent') || undefined;
    const cwd = h('x-warden-cwd') || env.HOME || '/';
    const q = (k: string) => url.searchParams.get(k) || undefined;

    const said: string[] = [];
    const warn = (line: string) => said.push(line);
    const session: { id?: string } = {};
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let out: ClaudeHookOutput | null = null;
    let status = 200;
    try {
      const work = answerHookEvent(
        {
          agent,
          raw,
          named,
          env: sessionEnv,
          cwd,
          started,
          timeoutMs,
          warn,
          markerDir: markers,
          pids: [process.pid],
          client: () => clientFor(q('address'), q('namespace'), q('task_queue'), timeoutMs),
          projectDir: (input: CodexHookInput) => (agent === 'claude' ? projectDirOf(input.session_id, projectHeader, input.cwd || cwd) : input.cwd || cwd),
        },
        session,
      );
      work.catch(() => {}); // the deadline may win
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer from warden within ${timeoutMs} ms (is a worker running?)`)), timeoutMs);
      });
      out = await Promise.race([work, deadline]);
    } catch (err) {
      if (err instanceof HookInputError) {
        status = 400;
        warn(err.message);
      } else {
        // Temporal gone, or too slow to answer: this session skips warden for a while rather than wait at every tool call.
        const why = err instanceof Error ? err.message : String(err);
        if (session.id && /UNAVAILABLE|no answer from warden within/.test(why)) markUnreachable(markers, session.id);
        hookFailed(err, session, warn, markers);
        opts.log.warn({ agent, session: session.id, error: why }, 'hook event not answered');
      }
    } finally {
      clearTimeout(timer);
    }
    if (status !== 200) return reply(res, status, { error: said.join('; ') });
    if (forwarded) return reply(res, 200, out, said.length ? { 'x-warden-say': encodeURIComponent(JSON.stringify(said)) } : {});
    // Claude Code's HTTP hook: what the session should hear goes in the answer itself.
    const message = said.map((l) => `warden: ${l}`).join('\n');
    return reply(res, 200, message ? { ...(out ?? {}), systemMessage: out?.systemMessage ? `${out.systemMessage}\n${message}` : message } : out);
  }

  return {
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const agent = url.pathname === '/hooks/claude' ? 'claude' : url.pathname === '/hooks/codex' ? 'codex' : null;
      if (!agent) return false;
      // Hook latency, when OpenTelemetry is on: from the request to the answer's last byte.
      const meta: { event?: string } = {};
      if (otel().enabled) {
        const t0 = performance.now();
        res.once('finish', () => recordHookLatency((performance.now() - t0) / 1000, { agent, event: meta.event ?? 'unknown', status: res.statusCode }));
      }
      answer(req, res, agent, url, meta).catch((err: unknown) => {
        if (res.headersSent) return res.destroy();
        if (err instanceof Refusal) return reply(res, err.status, { error: err.message }, err.status === 405 ? { allow: 'POST' } : {});
        opts.log.error({ error: err instanceof Error ? err.message : String(err) }, 'hook endpoint failed');
        reply(res, 500, { error: 'the hook endpoint failed' });
      });
      return true;
    },
    async close() {
      const all = [...clients.values()];
      clients.clear();
      await Promise.all(all.map((e) => e.client.then((c) => c.close()).catch(() => {})));
    },
  };
}
