/**
 * The burn-rate sparkline of `warden top`, and the runaway-cost test that ranks a row second in the
 * default sort. Pure: input is the durable spend history the `status` query exposes
 * (`status.spend = {bucketMs, buckets: [{at, tokens, costUsd}]}`, oldest first, at most 60).
 */

export interface SpendBucket {
  at: string;
  tokens: number;
  costUsd: number;
}
export interface SpendHistory {
  bucketMs: number;
  buckets: SpendBucket[];
}

export const SPARK_BUCKETS = 60;
const BARS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/**
 * Lay the buckets on a fixed time axis of `n` slots ending at the bucket that holds `nowMs`, so a
 * quiet agent's history slides left as time passes and gaps stay gaps. The metric is cost when any
 * bucket has a cost, else tokens (an agent on a local model has tokens but no price).
 */
export function burnSeries(spend: SpendHistory | null | undefined, nowMs: number, n = SPARK_BUCKETS): { values: number[]; metric: 'costUsd' | 'tokens' } {
  const values = new Array<number>(n).fill(0);
  if (!spend || !(spend.bucketMs > 0) || spend.buckets.length === 0) return { values, metric: 'tokens' };
  const metric = spend.buckets.some((b) => b.costUsd > 0) ? 'costUsd' : 'tokens';
  const nowSlot = Math.floor(nowMs / spend.bucketMs);
  for (const b of spend.buckets) {
    const t = Date.parse(b.at);
    if (!Number.isFinite(t)) continue;
    const back = nowSlot - Math.floor(t / spend.bucketMs);
    // A bucket stamped slightly in the future (clock skew between worker and terminal) is "now".
    const idx = n - 1 - Math.max(0, back);
    if (idx < 0) continue;
    values[idx]! += metric === 'costUsd' ? b.costUsd : b.tokens;
  }
  return { values, metric };
}

/** Fold `values` into `width` columns (summing neighbours), oldest first. */
export function downsample(values: number[], width: number): number[] {
  if (width <= 0) return [];
  if (values.length <= width) return [...values];
  const out = new Array<number>(width).fill(0);
  for (let i = 0; i < values.length; i++) out[Math.floor((i * width) / values.length)]! += values[i]!;
  return out;
}

/** One character per value: a space for nothing spent, ▁…█ scaled to the largest value. */
export function sparkline(values: number[], width = values.length): string {
  const v = downsample(values, width);
  const max = Math.max(0, ...v);
  if (max <= 0) return ' '.repeat(v.length);
  return v.map((x) => (x <= 0 ? ' ' : BARS[Math.min(BARS.length - 1, Math.floor((x / max) * (BARS.length - 1) + 0.5))]!)).join('');
}

export interface RunawayOptions {
  /** How many of the newest slots form the "recent" rate. */
  recentSlots: number;
  /** Recent rate at least this many times the earlier rate is a spike. */
  factor: number;
  /** Below this recent spend per slot (in the series' metric) nothing is a runaway. */
  floorCostUsd: number;
  floorTokens: number;
}
export const DEFAULT_RUNAWAY: RunawayOptions = { recentSlots: 3, factor: 3, floorCostUsd: 0.05, floorTokens: 20_000 };

/**
 * A burn-rate spike: the mean spend of the newest `recentSlots` slots is at least `factor` times the
 * mean of the slots before them (over the whole history, so a steady heavy spender is not a spike,
 * but a jump is), and above a floor so that noise on an idle agent is not.
 */
export function isRunaway(series: { values: number[]; metric: 'costUsd' | 'tokens' }, opts: RunawayOptions = DEFAULT_RUNAWAY): boolean {
  const v = series.values;
  const k = Math.min(opts.recentSlots, v.length);
  if (k === 0) return false;
  const recent = v.slice(v.length - k).reduce((a, b) => a + b, 0) / k;
  const floor = series.metric === 'costUsd' ? opts.floorCostUsd : opts.floorTokens;
  if (recent < floor) return false;
  const before = v.slice(0, v.length - k);
  const baseline = before.length ? before.reduce((a, b) => a + b, 0) / before.length : 0;
  return recent >= opts.factor * baseline;
}
