/**
 * What a hooked Claude Code session's own turns spent, read from its transcript (`transcript_path`)
 * when the hook reports a turn (Stop), incrementally (transcript-increment.ts: the state file, the
 * offset, a replaced or rewritten transcript, a retried turn).
 *
 * Each assistant message's `usage` counts (transcript-read.ts: input, cache-write and cache-read
 * tokens in, output tokens out, the `costUSD` an entry carries). A turn carries the API message ids
 * of the newest counted messages to the next: a message Claude Code writes as several entries, one
 * per content block, may straddle the offset, and its later entries count nothing again; nor do
 * the messages of a transcript read again from its start up to the newest remembered one (the API
 * makes the ids unique): a resumed session's copy of its history is not counted twice.
 *
 * Sub-agents' side-chain entries (`isSidechain`) are skipped: a sub-agent's spend is counted at its
 * own stop, from its own transcript (subagent-spend.ts).
 */
import { SESSION_READ_MAX_BYTES, type SessionSpend, type SpendCounter, spendAtTurn } from './transcript-increment.js';
import { type PriceTable, priceMessages } from './prices.js';
import { sumUsage, usageByMessage } from './transcript-read.js';

export { SESSION_READ_MAX_BYTES, spendStateFile, type SessionSpend } from './transcript-increment.js';

/** How many of the newest counted message ids are kept for the boundary. */
export const BOUNDARY_IDS_KEPT = 64;

/**
 * Claude Code's transcript: usage per API message, the newest counted message ids carried;
 * messages without a cost of their own priced from `prices` (the user's `prices:`, prices.ts).
 */
export const claudeCounter = (prices?: PriceTable): SpendCounter<{ ids: string[] }> => ({
  carried(raw) {
    const ids = (raw as { ids?: unknown } | null)?.ids;
    return Array.isArray(ids) ? { ids: ids.filter((i): i is string => typeof i === 'string').slice(-BOUNDARY_IDS_KEPT) } : undefined;
  },
  count(lines, prior, read) {
    const counted = usageByMessage(lines, { sidechains: false });
    const known = new Set(prior?.ids ?? []);
    // A transcript read again from its start (a resumed session's copy of its history, say) holds
    // what was counted before: everything up to the newest remembered message counts nothing again.
    const entries = [...counted];
    let after = 0;
    if (prior && !read.continues) for (let i = 0; i < entries.length; i++) if (known.has(entries[i]![0])) after = i + 1;
    const fresh = entries.slice(after).filter(([id]) => !known.has(id));
    const models = [...new Set(fresh.map(([, u]) => u.model).filter((m): m is string => !!m))].slice(0, 5);
    const named = [...counted.keys()].filter((id) => !id.startsWith('#'));
    const ids = [...(prior?.ids ?? []).filter((id) => !named.includes(id)), ...named].slice(-BOUNDARY_IDS_KEPT);
    const { priced, unpriced } = priceMessages(
      fresh.map(([, u]) => u),
      prices,
    );
    return { spend: { ...sumUsage(priced), models, unpriced }, carry: { ids } };
  },
});

/**
 * What the Claude Code session spent since its last counted turn, for the turn `turnId`, from the
 * transcript `transcriptPath`, with its state in `dir` (transcript-increment.ts), priced from `prices`.
 */
export const sessionSpendAtTurn = (
  dir: string,
  agentId: string,
  transcriptPath: string,
  turnId: string,
  maxBytes = SESSION_READ_MAX_BYTES,
  prices?: PriceTable,
): Promise<SessionSpend> => spendAtTurn(claudeCounter(prices), dir, agentId, transcriptPath, turnId, maxBytes);
