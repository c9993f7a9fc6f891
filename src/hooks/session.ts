/**
 * Auto-start, the pure part: which agent a hook event of a session nobody started belongs to, and
 * what that agent is asked to do.
 *
 * The agent id is `<project>-<session>`: the project directory's name (letters, digits, `.`, `_`,
 * `-`; anything else becomes `-`; at most 40 characters) and a short form of the session id (a
 * short plain id as it is; a UUID by its last 12 hex digits, which are random in both v4 and v7
 * ids — codex's are v7, whose first digits are a timestamp; anything else by 12 hex digits of its
 * SHA-256). The same session always gets the same id, and it is a valid agent id (so
 * `agent-<id>` is a valid workflow id) of at most 53 characters.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { MAX_TASK_TEXT, truncate } from '../domain/contract/limits.js';
import { AGENT_ID_RE } from '../domain/contract/schemas.js';
import type { HookAgent } from './protocol.js';

const PROJECT_MAX = 40;
const SESSION_PART = 12;

/** The project directory's name as the readable part of an agent id ('project' when nothing is left). */
export function projectPart(dir: string): string {
  const name = basename(dir.replace(/[\\/]+$/, '')) || 'project';
  const cleaned = name
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, PROJECT_MAX)
    .replace(/[^A-Za-z0-9]+$/, '');
  return cleaned || 'project';
}

/** The session id's short, stable form. */
export function sessionPart(sessionId: string): string {
  if (/^[A-Za-z0-9]{1,16}$/.test(sessionId)) return sessionId;
  const hex = sessionId.replace(/-/g, '');
  if (/^[0-9a-fA-F]{32}$/.test(hex)) return hex.slice(-SESSION_PART).toLowerCase();
  return createHash('sha256').update(sessionId).digest('hex').slice(0, SESSION_PART);
}

/** The agent id of a session: `<project>-<session>` (see above). */
export function sessionAgentId(projectDir: string, sessionId: string): string {
  const id = `${projectPart(projectDir)}-${sessionPart(sessionId)}`;
  if (!AGENT_ID_RE.test(id)) throw new Error(`derived agent id ${JSON.stringify(id)} is not valid`); // cannot happen: both parts are checked
  return id;
}

/** The task of an auto-started agent: the session's first prompt, or what is known without one. */
export function sessionTask(agent: HookAgent, prompt: string | undefined, projectDir: string, sessionId: string): string {
  const text = prompt?.trim();
  if (text) return truncate(text, MAX_TASK_TEXT);
  return `${agent === 'claude' ? 'Claude Code' : 'Codex'} session ${sessionId} in ${projectDir} (started by a hook before its first prompt)`;
}

/** Whether auto-start is switched off by the environment (`WARDEN_AUTO_START=0|false|off|no`). */
export function autoStartOffByEnv(env: NodeJS.ProcessEnv): boolean {
  const v = env.WARDEN_AUTO_START?.trim().toLowerCase();
  return v === '0' || v === 'false' || v === 'off' || v === 'no';
}
