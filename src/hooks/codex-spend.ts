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
 *  - cost: Codex writes none; the user's own `prices:` (prices.ts) price the growth for the model
 *    the hook input names, cached input at the cache-read price; without a price, 0.
 *
 * A sub-agent (`spawn_agent`) runs in a thread and rollout of its own: its calls are not in the
 * session's totals.
 */
import { type PriceTable, messageCost, priceFor } from './prices.js';
import { MAX_SPEND_TOKENS, MAX_SPEND_USD } from './transcript-read.js';
import { SESSION_READ_MAX_BYTES, type SessionSpend, type SpendCounter, isCount, spendAtTurn } from './transcript-increment.js';

/** A thread's cumulative token totals, as a `token_count` carries them (`cached`: of `input`, the prompt cache's). */
export interface CodexTotals {
  input: number;
  output: number;
  cached: number;
}

const ZERO: CodexTotals = { input: 0, output: 0, cached: 0 };

/**
 * The cumulative totals of each `token_count` event in rollout lines, in order. Lines that are not
 * JSON, not a `token_count`, or whose totals are not whole counts are skipped.
 */
export function codexTotals(lines: Iterable<string>): CodexTotals[] {
  const out: CodexTotals[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (!line.startsWith('{') || !line.includes('"token_count"')) continue;
    let entry: {
      type?: unknown;
      payload?: { type?: unknown; info?: { total_token_usage?: { input_tokens?: unknown; output_tokens?: unknown; cached_input_tokens?: unknown } } | null };
    };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry?.type !== 'event_msg' || entry.payload?.type !== 'token_count') continue;
    const t = entry.payload.info?.total_token_usage;
    if (!t || !isCount(t.input_tokens) || !isCount(t.output_tokens)) continue; // info is null when only rate limits changed
    const cached = isCount(t.cached_input_tokens) ? Math.min(t.cached_input_tokens, t.input_tokens) : 0;
    out.push({ input: t.input_tokens, output: t.output_tokens, cached });
  }
  return out;
}

/**
 * What a sequence of cumulative totals spent past `baseline` (the totals counted up to): each
 * total's growth over the one before it; a total that goes down (in or out) starts a new count and
 * spends itself. Never negative; each figure capped at the spend bound.
 */
export function codexGrowth(
  baseline: CodexTotals,
  totals: readonly CodexTotals[],
): { tokensIn: number; tokensOut: number; cachedIn: number; last: CodexTotals } {
  let tokensIn = 0;
  let tokensOut = 0;
  let cachedIn = 0;
  let last = baseline;
  for (const t of totals) {
    const grew = t.input >= last.input && t.output >= last.output;
    tokensIn += grew ? t.input - last.input : t.input;
    tokensOut += grew ? t.output - last.output : t.output;
    cachedIn += grew ? Math.max(0, t.cached - last.cached) : t.cached;
    last = t;
  }
  const cap = (n: number) => Math.min(MAX_SPEND_TOKENS, n);
  return { tokensIn: cap(tokensIn), tokensOut: cap(tokensOut), cachedIn: cap(Math.min(cachedIn, tokensIn)), last };
}

/**
 * The cost of tokens of `model` at the user's `prices` (prices.ts; cached input as cache reads), or
 * 0 with the model named as unpriced when there is no price for it and tokens were spent.
 */
export function codexCost(
  spent: { tokensIn: number; tokensOut: number; cachedIn: number },
  model: string | undefined,
  prices: PriceTable | undefined,
): { costUsd: number; unpriced: string[] } {
  if (spent.tokensIn + spent.tokensOut === 0) return { costUsd: 0, unpriced: [] };
  const p = priceFor(model, prices);
  if (!p) return { costUsd: 0, unpriced: [model ?? 'unknown'] };
  return {
    costUsd: Math.min(MAX_SPEND_USD, messageCost({ tokensIn: spent.tokensIn, tokensOut: spent.tokensOut, costUsd: 0, cacheRead: spent.cachedIn }, p)),
    unpriced: [],
  };
}

/**
 * Codex's rollout: the growth of its cumulative totals, the totals counted up to carried; priced at
 * the user's `prices` for `model` (the hook input's: Codex's totals do not name one).
 */
export const codexCounter = (prices?: PriceTable, model?: string): SpendCounter<{ totals: CodexTotals }> => ({
  carried(raw) {
    const t = (raw as { totals?: { input?: unknown; output?: unknown; cached?: unknown } } | null)?.totals;
    return t && isCount(t.input) && isCount(t.output) ? { totals: { input: t.input, output: t.output, cached: isCount(t.cached) ? t.cached : 0 } } : undefined;
  },
  count(lines, prior, read) {
    // The same file (continued, or rewritten and read again from its start): growth over what was
    // counted; another file: a rollout of its own, counted from its start.
    const baseline = prior && read.sameFile ? prior.totals : ZERO;
    const seen = codexTotals(lines);
    const g = codexGrowth(baseline, seen);
    const { costUsd, unpriced } = codexCost(g, model, prices);
    return {
      spend: { tokensIn: g.tokensIn, tokensOut: g.tokensOut, costUsd, messages: seen.length, models: model ? [model] : [], unpriced },
      carry: { totals: g.last },
    };
  },
});

/**
 * What the Codex session spent since its last counted turn, for the turn `turnId`, from the
 * rollout `rolloutPath`, with its state in `dir` (transcript-increment.ts), priced at `prices` for `model`.
 */
export const codexSpendAtTurn = (
  dir: string,
  agentId: string,
  rolloutPath: string,
  turnId: string,
  maxBytes = SESSION_READ_MAX_BYTES,
  prices?: PriceTable,
  model?: string,
): Promise<SessionSpend> => spendAtTurn(codexCounter(prices, model), dir, agentId, rolloutPath, turnId, maxBytes);
