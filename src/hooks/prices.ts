/**
 * Prices for the model calls of a hooked session, whose CLI writes tokens but no cost into its
 * transcript (Claude Code). warden ships no price list: prices change and differ by contract, so
 * the user states them in their own config (`prices:`, USD per million tokens; a project's file
 * never sets them). A message's cost is its tokens at its model's price: input at `input`, prompt
 * cache reads at `cacheRead` and writes at `cacheWrite` (each `input` when not given), output at
 * `output`. A cost the transcript itself carries wins. Pure.
 */
import type { MessageUsage } from './transcript-read.js';

/** One model's price, USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** Model name (exact, or a prefix ending in `*`) → its price. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** The price of `model`: its exact entry, else the longest `prefix*` entry it starts with. */
export function priceFor(model: string | undefined, table: PriceTable | undefined): ModelPrice | undefined {
  if (!model || !table) return undefined;
  if (Object.hasOwn(table, model)) return table[model];
  let best: string | undefined;
  for (const key of Object.keys(table))
    if (key.endsWith('*') && model.startsWith(key.slice(0, -1)) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : table[best];
}

/** The cost of one message at `p`. */
export function messageCost(u: MessageUsage, p: ModelPrice): number {
  const cacheRead = u.cacheRead ?? 0;
  const cacheWrite = u.cacheWrite ?? 0;
  const input = Math.max(0, u.tokensIn - cacheRead - cacheWrite);
  return (input * p.input + cacheRead * (p.cacheRead ?? p.input) + cacheWrite * (p.cacheWrite ?? p.input) + u.tokensOut * p.output) / 1e6;
}

/**
 * The messages with their cost: the one the transcript carries, else at their model's price. Also
 * the models (at most five) of messages that spent tokens and have neither: their cost is unknown.
 */
export function priceMessages(messages: Iterable<MessageUsage>, table: PriceTable | undefined): { priced: MessageUsage[]; unpriced: string[] } {
  const priced: MessageUsage[] = [];
  const unpriced = new Set<string>();
  for (const u of messages) {
    if (u.costUsd > 0) {
      priced.push(u);
      continue;
    }
    const p = priceFor(u.model, table);
    if (p) priced.push({ ...u, costUsd: messageCost(u, p) });
    else {
      priced.push(u);
      if (u.tokensIn + u.tokensOut > 0 && unpriced.size < 5) unpriced.add(u.model ?? 'unknown');
    }
  }
  return { priced, unpriced: [...unpriced] };
}
