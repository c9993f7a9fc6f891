/**
 * Auto-start: a hook event of a session warden has not seen starts supervising it (after
 * `warden install`, whose hooks name no agent). The agent id and task come from the session
 * (session.ts), the rest of the spec from the config (src/config/trust.ts): the project's
 * `warden.yaml` when the user trusts it as it is (`warden trust`), else the user's own config with
 * only the project file's stricter thresholds; the session hears once which keys were ignored.
 *
 * Starting is lazy and idempotent: the hook talks to the agent as usual, and only when warden says
 * there is no such agent does it start one — with the workflow id as the lock (conflict policy
 * USE_EXISTING), so hooks of one session racing each other all succeed and one workflow runs —
 * and then makes its call again.
 *
 * When supervision cannot happen (Temporal unreachable, a bad config file, auto-start switched
 * off), the hook says so once per session on stderr: a marker file per agent id under warden's
 * cache directory, created exclusively, so of several racing hooks exactly one speaks.
 */
import { closeSync, mkdirSync, openSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { AgentNotFoundError } from '../client/index.js';
import { specFromConfig } from '../config/file.js';
import { sessionConfig } from '../config/trust.js';
import type { AgentSpecInput, TurnInput } from '../domain/contract/schemas.js';
import type { CodexHookInput, HookAgent, HookClient } from './protocol.js';
import { autoStartOffByEnv, sessionAgentId, sessionTask } from './session.js';

/** The client an auto-starting hook needs: the hook's own calls, and a start that may find the agent there. */
export type AutoStartClient = HookClient & { ensureStarted(input: AgentSpecInput): Promise<{ ended: boolean }> };

export interface SessionPlan {
  agentId: string;
  /** Why this session is not supervised (auto-start off), or undefined. */
  off?: string;
  /** The project's warden.yaml is not trusted and set more than it may: what to say once, or undefined. */
  untrusted?: string;
  spec: AgentSpecInput;
}

/**
 * The session's project directory: for Claude Code the project it was started in
 * (CLAUDE_PROJECT_DIR, which Claude sets for its hooks; the event's `cwd` follows a `cd` in the
 * session, and the agent id must not), else the event's `cwd`, else the hook's own.
 */
export function sessionProjectDir(agent: HookAgent, input: CodexHookInput, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  return (agent === 'claude' && env.CLAUDE_PROJECT_DIR) || input.cwd || cwd;
}

/**
 * What an auto-starting hook does for this event's session: its agent id, and the spec it starts
 * with. Throws a plain Error (a ConfigError) when the config file is bad or there is no session id.
 */
export function planSession(
  agent: HookAgent,
  input: CodexHookInput,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
  projectDir = sessionProjectDir(agent, input, env, cwd),
): SessionPlan {
  const sessionId = input.session_id;
  if (sessionId !== undefined && typeof sessionId !== 'string') throw new Error(`the hook event's session_id must be a string, not ${describeType(sessionId)}`);
  if (!sessionId) throw new Error('the hook event has no session_id, so there is no session to supervise; pass --agent <id> or set WARDEN_AGENT_ID');
  const agentId = sessionAgentId(projectDir, sessionId);
  const { cfg, source: configPath, untrusted } = sessionConfig(projectDir, env);
  const fromFile = cfg ? specFromConfig(cfg) : {};
  const spec: AgentSpecInput = { ...fromFile, agentId, task: sessionTask(agent, input.prompt, projectDir, sessionId) };
  // A check of "done" runs where the agent works, unless the file says where.
  if (spec.verify && !spec.verify.cwd) spec.verify = { ...spec.verify, cwd: projectDir };
  const off = autoStartOffByEnv(env)
    ? 'auto-start is off (WARDEN_AUTO_START)'
    : cfg?.hooks?.auto_start === false
      ? `auto-start is off (hooks.auto_start: false in ${configPath})`
      : undefined;
  const said = untrusted
    ? `${untrusted.file} is not trusted, so warden ignored ${untrusted.ignored.join(', ')}; to use the whole file, review it and run: ${untrusted.trust}`
    : undefined;
  return { agentId, spec, ...(off && { off }), ...(said && { untrusted: said }) };
}

/** A JSON value's type in words, for an error naming a field of the wrong type. */
export function describeType(v: unknown): string {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * Whether warden answered "no such workflow". Besides AgentNotFoundError this is the SDK's own
 * NOT_FOUND, which the client passes on as it is when the workflow exists by the time it looks
 * again: exactly what another hook of the same session starting it a moment earlier looks like.
 */
export function notFound(err: unknown): boolean {
  if (err instanceof AgentNotFoundError || err instanceof WorkflowNotFoundError) return true;
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 5 || (typeof e?.message === 'string' && /^workflow not found\b/i.test(e.message));
}

/**
 * The hook's client for an auto-started session: each call goes to the agent as usual, and a
 * "no such agent" answer starts the agent (once per hook process) and makes the call again.
 */
export function autoStarting(client: () => Promise<AutoStartClient>, spec: AgentSpecInput): () => Promise<HookClient> {
  let started: Promise<unknown> | null = null;
  const again = async <T>(call: (c: HookClient) => Promise<T>): Promise<T> => {
    const c = await client();
    try {
      return await call(c);
    } catch (err) {
      if (!notFound(err)) throw err;
      await (started ??= c.ensureStarted(spec));
      return call(c);
    }
  };
  const wrapped: HookClient = {
    status: (agentId) => again((c) => c.status(agentId)),
    reportTurn: (agentId, turn: TurnInput) => again((c) => c.reportTurn(agentId, turn)),
    signal: (agentId, name, payload) => again((c) => c.signal(agentId, name, payload)),
  };
  return async () => wrapped;
}

/** Where the once-per-session markers live: $WARDEN_CACHE_DIR, else $XDG_CACHE_HOME/warden or ~/.cache/warden, then `sessions/`. */
export function sessionMarkerDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.WARDEN_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(env.HOME || homedir(), '.cache'), 'warden');
  return join(cache, 'sessions');
}

/**
 * Say `line` unless it was said for this agent before (on this `topic`: each topic is said once,
 * apart from the others): true when this call said it. The marker is
 * created with O_EXCL, so of hooks racing each other exactly one speaks. If the marker cannot be
 * written at all, the line is said (better twice than never).
 */
export function sayOnce(dir: string, agentId: string, line: string, say: (line: string) => void, topic = 'off'): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    closeSync(openSync(join(dir, `${agentId}.${topic}`), 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
  }
  say(line);
  return true;
}

/**
 * After a hook of this session could not reach Temporal, the session's hooks skip warden for this
 * long instead of each waiting for a connection to fail (seconds per tool call); then one tries again.
 */
export const UNREACHABLE_BACKOFF_MS = 60_000;

const unreachableFile = (dir: string, agentId: string) => join(dir, `${agentId}.unreachable`);

/** Note that a hook of this session could not reach Temporal just now. */
export function markUnreachable(dir: string, agentId: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(unreachableFile(dir, agentId), '', { mode: 0o600 });
  } catch {
    // best effort: without the note the next hook tries to connect again
  }
}

/** Whether a hook of this session found Temporal unreachable less than UNREACHABLE_BACKOFF_MS ago. */
export function unreachableRecently(dir: string, agentId: string, now = Date.now()): boolean {
  try {
    // mtimeMs has sub-millisecond digits that Date.now() lacks: a note written "now" may look a
    // fraction of a millisecond younger than that. A note from well in the future is not trusted.
    const age = now - statSync(unreachableFile(dir, agentId)).mtimeMs;
    return age > -1_000 && age < UNREACHABLE_BACKOFF_MS;
  } catch {
    return false;
  }
}
