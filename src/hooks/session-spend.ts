/**
 * What a hooked Claude Code session's own turns spent, read from its transcript (`transcript_path`)
 * when the hook reports a turn (Stop), incrementally (transcript-increment.ts: the state file, the
 * offset, a replaced or rewritten transcript, a retried turn).
 *
 * Each assistant message's `usage` counts (transcript-read.ts: input, cache-write and cache-read
 * tokens in, output tokens out, the `costUSD` an entry carries). A turn carries the API message ids
 * of the newest counted messages to the next: a message Claude Code writes as several entries, one
 * per content block, may straddle the offset, and its later entries count nothing again; nor do
 * the remembered messages of a transcript read again from its start (the API makes the ids unique).
 *
 * Sub-agents' side-chain entries (`isSidechain`) are skipped: a sub-agent's spend is counted at its
 * own stop, from its own transcript (subagent-spend.ts).
 */
import { SESSION_READ_MAX_BYTES, type SessionSpend, type SpendCounter, spendAtTurn } from './transcript-increment.js';
import { sumUsage, usageByMessage } from './transcript-read.js';

export { SESSION_READ_MAX_BYTES, spendStateFile, type SessionSpend } from './transcript-increment.js';

/** How many of the newest counted message ids are kept for the boundary. */
export const BOUNDARY_IDS_KEPT = 64;

/** Claude Code's transcript: usage per API message, the newest counted message ids carried. */
export const claudeCounter: SpendCounter<{ ids: string[] }> = {
  carried(raw) {
    const ids = (raw as { ids?: unknown } | null)?.ids;
    return Array.isArray(ids) ? { ids: ids.filter((i): i is string => typeof i === 'string').slice(-BOUNDARY_IDS_KEPT) } : undefined;
  },
  count(lines, prior) {
    const counted = usageByMessage(lines, { sidechains: false });
    const known = new Set(prior?.ids ?? []);
    const fresh = [...counted].filter(([id]) => !known.has(id));
    const models = [...new Set(fresh.map(([, u]) => u.model).filter((m): m is string => !!m))].slice(0, 5);
    const named = [...counted.keys()].filter((id) => !id.startsWith('#'));
    const ids = [...(prior?.ids ?? []).filter((id) => !named.includes(id)), ...named].slice(-BOUNDARY_IDS_KEPT);
    return { spend: { ...sumUsage(fresh.map(([, u]) => u)), models }, carry: { ids } };
  },
};

/**
 * What the Claude Code session spent since its last counted turn, for the turn `turnId`, from the
 * transcript `transcriptPath`, with its state in `dir` (transcript-increment.ts).
 */
export const sessionSpendAtTurn = (
  dir: string,
  agentId: string,
  transcriptPath: string,
  turnId: string,
  maxBytes = SESSION_READ_MAX_BYTES,
): Promise<SessionSpend> => spendAtTurn(claudeCounter, dir, agentId, transcriptPath, turnId, maxBytes);
