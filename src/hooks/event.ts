/**
 * One hook event from its raw JSON to warden's answer: the part shared by the `warden hook` command
 * (one process per event) and the resident hook endpoint (`warden serve`, src/serve/hooks.ts).
 * Parse and check the event, find its agent (named, or the session's own: auto-start), talk to
 * warden (handle.ts), and say once per session why supervision is off when it is.
 */
import { Client, Connection } from '@temporalio/client';
import { WardenClient } from '../client/index.js';
import type { ConnectionSettings } from '../config/connection.js';
import { userPrices } from '../config/file.js';
import { jsonTooDeep } from '../json-depth.js';
import { autoStarting, markUnreachable, planSession, sayOnce, sessionMarkerDir, sessionProjectDir, unreachableRecently } from './auto-start.js';
import { join } from 'node:path';
import { wardenHome } from './endpoint-file.js';
import { handleHook, type OwnFiles } from './handle.js';
import { ownGuard } from './own-files.js';
import type { PriceTable } from './prices.js';
import { checkHookInput, type ClaudeHookOutput, type CodexHookInput, type HookAgent } from './protocol.js';
import { sessionAgentId } from './session.js';

export const CONNECT_TIMEOUT_MS = 3_000;
const VERIFY_ANSWER_MARGIN_MS = 2_000;
export const CANNOT_REACH = 'cannot reach Temporal';

/** The hook input is not what a hook event must be: a usage error (exit 2 for `--strict`, 400 for the endpoint). */
export class HookInputError extends Error {
  override name = 'HookInputError';
}

/** A client of warden for a hook: connects within `timeoutMs` (at most CONNECT_TIMEOUT_MS), or says it cannot reach Temporal. */
export async function connectForHook(settings: ConnectionSettings, timeoutMs: number): Promise<WardenClient> {
  let connection: Connection;
  try {
    connection = await Connection.connect({
      ...settings.connectionOptions,
      connectTimeout: Math.min(CONNECT_TIMEOUT_MS, Math.ceil(timeoutMs / 2)), // so its own, clearer error comes first
    } as Parameters<typeof Connection.connect>[0]);
  } catch (err) {
    throw new Error(`${CANNOT_REACH} at ${settings.connectionOptions.address} (${err instanceof Error ? err.message : String(err)})`);
  }
  return new WardenClient(new Client({ connection, namespace: settings.namespace }), settings.taskQueue, connection);
}

export interface HookEvent {
  agent: HookAgent;
  /** The event as its CLI sent it (JSON text). */
  raw: string;
  /** The agent the hook names (`--agent`, WARDEN_AGENT_ID); without it, the session's own. */
  named?: string;
  /** The session's environment as far as warden reads it (CLAUDE_PROJECT_DIR, WARDEN_AUTO_START, config dirs). */
  env: NodeJS.ProcessEnv;
  /** The hook's working directory (the session's, when its event has no `cwd`). */
  cwd: string;
  /** When the hook began, and how long it may take in all. */
  started: number;
  timeoutMs: number;
  client: () => Promise<WardenClient>;
  warn: (line: string) => void;
  /** Where the once-per-session markers live (default sessionMarkerDir(env)). */
  markerDir?: string;
  /** The endpoint's own process id, when the endpoint answers (a `kill` of it is a hit of the tripwire). */
  pids?: number[];
  /** The session's project directory when the caller knows it better than the event (see sessionProjectDir). */
  projectDir?: (input: CodexHookInput) => string;
}

/** The parsed, checked event, or a HookInputError naming what is wrong. */
export function parseHookEvent(raw: string, source = 'the hook input on stdin'): CodexHookInput {
  const deep = jsonTooDeep(raw, source);
  if (deep) throw new HookInputError(deep);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new HookInputError(`${source} is not JSON: ${(err as Error).message}`);
  }
  try {
    return checkHookInput(parsed);
  } catch (err) {
    throw new HookInputError((err as Error).message);
  }
}

/**
 * Answer one event. `session` is set (on the object passed in) as soon as the event's auto-started
 * agent is known, so that a failure is said once for that session (hookFailed). Throws on failure.
 */
export async function answerHookEvent(e: HookEvent, session: { id?: string } = {}): Promise<ClaudeHookOutput | null> {
  const input = parseHookEvent(e.raw);
  const markers = e.markerDir ?? sessionMarkerDir(e.env);
  // A Stop that claims done waits for warden's check, leaving room to answer within the deadline.
  const waitUntil = e.started + e.timeoutMs - Math.min(VERIFY_ANSWER_MARGIN_MS, e.timeoutMs / 4);
  // warden's own files and endpoint as this process has them (its WARDEN_HOME, never the agent's).
  // The session's spend state too lives in this process's home (session-spend.ts).
  // The user's prices are read only when a stop counts a spend (never on a tool call).
  const own: OwnFiles = { guard: () => ownGuard(e.env, e.pids), cwd: e.cwd, spendDir: join(wardenHome(e.env), 'hook-spend'), prices: () => pricesOrSay(e) };
  if (e.named) return handleHook(e.agent, input, e.named, e.client, e.warn, waitUntil, own);
  const projectDir = e.projectDir?.(input) ?? sessionProjectDir(e.agent, input, e.env, e.cwd);
  // Known before the config file is read, so that a bad one is reported once per session too.
  if (input.session_id) session.id = sessionAgentId(projectDir, input.session_id);
  const plan = planSession(e.agent, input, e.env, e.cwd, projectDir);
  if (plan.untrusted) sayOnce(markers, plan.agentId, plan.untrusted, e.warn, 'untrusted');
  if (plan.off) {
    sayOnce(markers, plan.agentId, `${plan.off}; session ${input.session_id} is not supervised`, e.warn);
    return null;
  }
  // Temporal was unreachable a moment ago: don't make every tool call wait for that again.
  if (unreachableRecently(markers, plan.agentId)) return null;
  return handleHook(e.agent, input, plan.agentId, autoStarting(e.client, plan.spec), e.warn, waitUntil, own);
}

/** The user's prices (userPrices); a config that cannot be read prices nothing, and the hook says why. */
function pricesOrSay(e: HookEvent): PriceTable | undefined {
  try {
    return userPrices(e.env);
  } catch (err) {
    e.warn(`model prices are not read: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** Say why an event got no answer: once per auto-started session (and remember an unreachable Temporal), else every time. */
export function hookFailed(err: unknown, session: { id?: string }, warn: (line: string) => void, markerDir = sessionMarkerDir()): void {
  const why = err instanceof Error ? err.message : String(err);
  if (session.id) {
    if (why.startsWith(CANNOT_REACH)) markUnreachable(markerDir, session.id);
    sayOnce(markerDir, session.id, `supervision is off for this session (agent ${session.id}): ${why}`, warn);
  } else warn(`${why} — continuing without supervision`);
}
