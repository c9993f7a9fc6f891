/** A duration like "30s", "10m", "1h" or "500ms" in milliseconds. Pure, no dependencies (the CLI parses flags with it before loading zod). */
export function parseDuration(s: string): number {
  const m = /^(\d+)(ms|s|m|h)$/.exec(s);
  if (!m) throw new Error(`not a duration: ${s}`);
  const n = Number(m[1]);
  const unit = m[2] as 'ms' | 's' | 'm' | 'h';
  return n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit];
}
