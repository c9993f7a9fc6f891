/**
 * What a hooked Codex session's own turns spent, read from its rollout (the JSONL Codex names in
 * every hook's `transcript_path`, `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`)
 * when the hook reports a turn (Stop), incrementally (transcript-increment.ts: the state file, the
 * offset, a replaced or rewritten rollout, a retried turn).
 *
 * Codex (0.169) writes, after each model response, an `event_msg` of type `token_count` whose
 * `info.total_token_usage` holds the thread's cumulative totals (`input_tokens`, of which
 * `cached_input_tokens`; `output_tokens`, of which `reasoning_output_tokens`; `total_tokens`), and
 * `info.last_token_usage` the response's own. It has written the turn's last one when its Stop
 * hook runs. A turn carries the totals counted up to to the next, and spends their growth:
 *
 *  - tokens in are the input tokens, cached ones included; tokens out the output tokens, reasoning
 *    included: as the codex driver counts a turn (its `turn.completed` usage, the same totals);
 *  - a total that goes down is a new count (a new or replaced rollout): it counts from zero, never
 *    negative; a rollout that is another file (another path, device or inode) counts from zero too;
 *  - cost: Codex writes none and warden keeps no prices, so 0.
 *
 * A sub-agent (`spawn_agent`) runs in a thread and rollout of its own: its calls are not in the
 * session's totals.
 */
import { MAX_SPEND_TOKENS } from './transcript-read.js';
import { SESSION_READ_MAX_BYTES, type SessionSpend, type SpendCounter, isCount, spendAtTurn } from './transcript-increment.js';

/** A thread's cumulative token totals, as a `token_count` carries them. */
export interface CodexTotals {
  input: number;
  output: number;
}

const ZERO: CodexTotals = { input: 0, output: 0 };

/**
 * The cumulative totals of each `token_count` event in rollout lines, in order. Lines that are not
 * JSON, not a `token_count`, or whose totals are not whole counts are skipped.
 */
export function codexTotals(lines: Iterable<string>): CodexTotals[] {
  const out: CodexTotals[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (!line.startsWith('{') || !line.includes('"token_count"')) continue;
    let entry: { type?: unknown; payload?: { type?: unknown; info?: { total_token_usage?: { input_tokens?: unknown; output_tokens?: unknown } } | null } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry?.type !== 'event_msg' || entry.payload?.type !== 'token_count') continue;
    const t = entry.payload.info?.total_token_usage;
    if (!t || !isCount(t.input_tokens) || !isCount(t.output_tokens)) continue; // info is null when only rate limits changed
    out.push({ input: t.input_tokens, output: t.output_tokens });
  }
  return out;
}

/**
 * What a sequence of cumulative totals spent past `baseline` (the totals counted up to): each
 * total's growth over the one before it; a total that goes down (in or out) starts a new count and
 * spends itself. Never negative; each figure capped at the spend bound.
 */
export function codexGrowth(baseline: CodexTotals, totals: readonly CodexTotals[]): { tokensIn: number; tokensOut: number; last: CodexTotals } {
  let tokensIn = 0;
  let tokensOut = 0;
  let last = baseline;
  for (const t of totals) {
    const grew = t.input >= last.input && t.output >= last.output;
    tokensIn += grew ? t.input - last.input : t.input;
    tokensOut += grew ? t.output - last.output : t.output;
    last = t;
  }
  return { tokensIn: Math.min(MAX_SPEND_TOKENS, tokensIn), tokensOut: Math.min(MAX_SPEND_TOKENS, tokensOut), last };
}

/** Codex's rollout: the growth of its cumulative totals, the totals counted up to carried. */
export const codexCounter: SpendCounter<{ totals: CodexTotals }> = {
  carried(raw) {
    const t = (raw as { totals?: { input?: unknown; output?: unknown } } | null)?.totals;
    return t && isCount(t.input) && isCount(t.output) ? { totals: { input: t.input, output: t.output } } : undefined;
  },
  count(lines, prior, read) {
    // The same file (continued, or rewritten and read again from its start): growth over what was
    // counted; another file: a rollout of its own, counted from its start.
    const baseline = prior && read.sameFile ? prior.totals : ZERO;
    const seen = codexTotals(lines);
    const g = codexGrowth(baseline, seen);
    return { spend: { tokensIn: g.tokensIn, tokensOut: g.tokensOut, costUsd: 0, messages: seen.length, models: [] }, carry: { totals: g.last } };
  },
};

/**
 * What the Codex session spent since its last counted turn, for the turn `turnId`, from the
 * rollout `rolloutPath`, with its state in `dir` (transcript-increment.ts).
 */
export const codexSpendAtTurn = (dir: string, agentId: string, rolloutPath: string, turnId: string, maxBytes = SESSION_READ_MAX_BYTES): Promise<SessionSpend> =>
  spendAtTurn(codexCounter, dir, agentId, rolloutPath, turnId, maxBytes);
