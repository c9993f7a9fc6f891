/**
 * What a driven codex agent's sub-agents spent. codex (0.169) runs a sub-agent (its `spawn_agent`
 * tool) in a thread of its own with a rollout of its own, `$CODEX_HOME/sessions/YYYY/MM/DD/
 * rollout-<time>-<thread id>.jsonl`, and the `turn.completed` usage of `codex exec --json` counts
 * only the session's own thread: none of a sub-agent's calls.
 *
 * - Which sub-agents: the thread ids codex names in the turn's `collab_tool_call` items
 *   (`receiver_thread_ids` and the keys of `agents_states`, for `spawn_agent`, `wait`,
 *   `send_input`, …) — what codex printed, never text the model wrote — each shaped like a thread
 *   id and not the session's own.
 * - Where: the rollout named after that thread id under the agent's own `$CODEX_HOME/sessions`,
 *   read only when it is inside that folder, also once every symlink is resolved, and no symbolic
 *   link itself (readCodexRolloutSpend, the checks and the tail read of the hook's
 *   readCodexSubagentSpend).
 * - How much: its last `token_count`'s running totals (input tokens, cached included; output
 *   tokens, reasoning included), as the hook counts a hooked session's sub-agent. Each sub-agent
 *   counts once: the totals counted of each are carried in the driver's session (SUBAGENT_TOTALS_KEY,
 *   the newest MAX_CARRIED_SUBAGENTS), and a turn adds only their growth — a sub-agent named again
 *   in a later turn (codex names a previous process's sub-agents when the model addresses them,
 *   though they are gone) adds nothing. Totals that went down count whole (a new count).
 * - A rollout that cannot be found or read, or is refused, counts nothing; the reason is logged.
 * - Cost: the driven path prices nothing (codex reports no cost), so a sub-agent adds tokens only.
 */
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { DriverSession } from '../../src/domain/contract/activity-types.js';
import { MAX_TURN_TOKENS } from '../../src/domain/contract/limits.js';
import { readCodexRolloutSpend } from '../../src/hooks/subagent-spend.js';

/** The driver session's key that carries the totals counted of each sub-agent (a JSON object). */
export const SUBAGENT_TOTALS_KEY = 'subagentTotals';
/** At most this many sub-agents' totals are carried (the newest): an older one named again counts whole. */
export const MAX_CARRIED_SUBAGENTS = 100;
/** The most sub-agents counted in one turn. */
export const MAX_SUBAGENTS_PER_TURN = 100;
/** A codex thread id (a UUID). */
export const THREAD_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SubagentCount {
  input: number;
  output: number;
}

/** The thread ids a `collab_tool_call` item names (its receivers and the agents it reports on). */
export function collabThreadIds(item: Record<string, unknown>): string[] {
  const ids: unknown[] = [];
  if (Array.isArray(item.receiver_thread_ids)) ids.push(...item.receiver_thread_ids);
  const states = item.agents_states;
  if (states && typeof states === 'object' && !Array.isArray(states)) ids.push(...Object.keys(states));
  return ids.filter((id): id is string => typeof id === 'string' && THREAD_ID_RE.test(id));
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The totals counted of each sub-agent, as the session carries them; anything malformed is dropped. */
export function carriedSubagentTotals(session: DriverSession | null): Map<string, SubagentCount> {
  const out = new Map<string, SubagentCount>();
  const raw = session?.[SUBAGENT_TOTALS_KEY];
  if (typeof raw !== 'string') return out;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return out;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return out;
  for (const [id, t] of Object.entries(v as Record<string, unknown>)) {
    const c = t as { i?: unknown; o?: unknown } | null;
    if (THREAD_ID_RE.test(id) && c && isCount(c.i) && isCount(c.o)) out.set(id, { input: c.i, output: c.o });
  }
  return out;
}

/** The session value that carries `totals`: the newest MAX_CARRIED_SUBAGENTS (the Map's last). */
export function carryForm(totals: Map<string, SubagentCount>): string {
  const kept = [...totals].slice(-MAX_CARRIED_SUBAGENTS);
  return JSON.stringify(Object.fromEntries(kept.map(([id, t]) => [id, { i: t.input, o: t.output }])));
}

/**
 * What `now` (a sub-agent's running totals) spent past `before` (what was counted of it): the
 * growth, or the whole when a total went down or nothing was counted.
 */
export function subagentGrowth(before: SubagentCount | undefined, now: SubagentCount): SubagentCount {
  if (before && now.input >= before.input && now.output >= before.output) return { input: now.input - before.input, output: now.output - before.output };
  return now;
}

/** The rollout of each thread in `ids`, found by name under `sessionsRoot` (`rollout-…-<id>.jsonl`). */
async function findRollouts(sessionsRoot: string, ids: ReadonlySet<string>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let names: string[];
  try {
    names = (await readdir(sessionsRoot, { recursive: true })) as string[];
  } catch {
    return found;
  }
  for (const rel of names.sort()) {
    const m = /(?:^|\/)rollout-[^/]*-([0-9a-fA-F-]{36})\.jsonl$/.exec(rel);
    if (m && ids.has(m[1]!) && !found.has(m[1]!)) found.set(m[1]!, join(sessionsRoot, rel));
  }
  return found;
}

export interface SubagentsSpent {
  tokensIn: number;
  tokensOut: number;
  /** The totals counted of each sub-agent after this turn (to carry). */
  totals: Map<string, SubagentCount>;
  /** Each sub-agent counted this turn, with what it added. */
  counted: Array<{ id: string; tokensIn: number; tokensOut: number }>;
}

/**
 * Count the sub-agents `ids` (the session's own thread `sessionId` left out) from their rollouts
 * under `<codexHome>/sessions`, past the `carried` totals. Never throws: a sub-agent that cannot be
 * counted is logged and counts nothing.
 */
export async function countSubagents(
  codexHome: string,
  ids: Iterable<string>,
  sessionId: string | null,
  carried: Map<string, SubagentCount>,
  log?: Logger,
): Promise<SubagentsSpent> {
  const totals = new Map(carried);
  const want = new Set([...ids].filter((id) => THREAD_ID_RE.test(id) && id !== sessionId).slice(0, MAX_SUBAGENTS_PER_TURN));
  const out: SubagentsSpent = { tokensIn: 0, tokensOut: 0, totals, counted: [] };
  if (want.size === 0) return out;
  const root = resolve(codexHome, 'sessions');
  const rollouts = await findRollouts(root, want);
  for (const id of want) {
    const path = rollouts.get(id);
    if (!path) {
      log?.debug({ subagent: id }, 'codex sub-agent has no rollout: its spend is not counted');
      continue;
    }
    try {
      const spend = await readCodexRolloutSpend(path, root);
      if (spend.messages === 0) continue; // no totals (yet): nothing to count, nothing to carry
      const now = { input: spend.tokensIn, output: spend.tokensOut };
      const g = subagentGrowth(totals.get(id), now);
      totals.delete(id); // re-inserted last: the newest are carried
      totals.set(id, now);
      out.tokensIn = Math.min(MAX_TURN_TOKENS, out.tokensIn + g.input);
      out.tokensOut = Math.min(MAX_TURN_TOKENS, out.tokensOut + g.output);
      out.counted.push({ id, tokensIn: g.input, tokensOut: g.output });
    } catch (err) {
      log?.warn({ subagent: id, path, err: err instanceof Error ? err.message : String(err) }, 'codex sub-agent rollout not read: its spend is not counted');
    }
  }
  return out;
}
