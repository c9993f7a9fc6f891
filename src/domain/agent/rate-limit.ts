/**
 * A driven turn that failed because the model is rate-limited or overloaded (HTTP 429/529) is not
 * a failure of the agent: the turn waits and is retried, and the agent is `blocked` meanwhile
 * instead of counting against restart intensity. This module recognises such a failure from what a
 * driver reports, and says how long to wait. Pure: no Temporal, no clock, no randomness.
 */

/**
 * The `command` driver's documented exit code for "the model is rate-limited; retry later"
 * (EX_TEMPFAIL from sysexits.h). A stderr line `{"rateLimited": {"retryAfterMs"?: n, "reason"?: s}}`
 * says the same with any non-zero exit, and may add a wait and a reason.
 */
export const RATE_LIMIT_EXIT_CODE = 75;

/** The failure type the turn activity gives a rate-limited turn (details: [RateLimit]). */
export const RATE_LIMITED_FAILURE = 'ModelRateLimited';

export interface RateLimit {
  /** In words, for the agent's state reason: "model rate-limited (429)". */
  reason: string;
  /** How long the model asked us to wait, when it said (Retry-After, "try again in 20s"); else null. */
  retryAfterMs: number | null;
}

export interface TurnFailureReport {
  /** The driver's kind: codex, claude, command, scripted. */
  driver: string;
  /** The process's exit code, when the driver ran one and knows it. */
  exitCode?: number;
  /** The error text the driver produced (its message, with stderr's tail and the model's words). */
  text: string;
}

const MAX_REASON = 200;

/** The command driver's stderr marker, if one of the lines is it. */
function marker(text: string): { retryAfterMs?: unknown; reason?: unknown } | null {
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{') || !t.includes('"rateLimited"')) continue;
    try {
      const v = (JSON.parse(t) as { rateLimited?: unknown }).rateLimited;
      if (v === true) return {};
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as { retryAfterMs?: unknown; reason?: unknown };
    } catch {
      /* not the marker */
    }
  }
  return null;
}

/** "retry-after: 20", "Retry-After: 1500ms", "try again in 2.5s", "retry after 3 seconds" → ms. */
export function retryAfterHint(text: string): number | null {
  const m = /(?:retry[- ]after|try again in)[\s:="]*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?)?\b/i.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = (m[2] ?? 's').toLowerCase();
  const ms = unit.startsWith('ms') || unit.startsWith('milli') ? n : unit.startsWith('m') ? n * 60_000 : n * 1_000;
  return Number.isFinite(ms) && ms >= 0 ? Math.round(ms) : null;
}

/**
 * Is this turn failure a rate limit or an overloaded model? Null when it is any other failure
 * (those count against restart intensity as before).
 *
 * - `command`: exit code 75, or the stderr marker line (any driver's text may carry it).
 * - codex / claude (and any driver): the words the APIs and CLIs use for it — HTTP 429 "Too Many
 *   Requests", `rate_limit_error`, "rate limit exceeded"/"rate-limited", HTTP 529 or
 *   `overloaded_error` ("Overloaded"), and codex's capacity messages: "We're currently
 *   experiencing high demand, which may cause temporary errors." (what codex says when the API
 *   answers 500 after its own retries) and "Selected model is at capacity".
 */
export function classifyTurnFailure(f: TurnFailureReport): RateLimit | null {
  const text = f.text ?? '';
  const hint = retryAfterHint(text);
  const mk = marker(text);
  if (mk) {
    const ms = typeof mk.retryAfterMs === 'number' && Number.isFinite(mk.retryAfterMs) && mk.retryAfterMs >= 0 ? Math.round(mk.retryAfterMs) : hint;
    const said = typeof mk.reason === 'string' && mk.reason.trim() ? mk.reason.trim().slice(0, MAX_REASON) : null;
    return { reason: said ?? 'model rate-limited', retryAfterMs: ms };
  }
  if (f.driver === 'command' && f.exitCode === RATE_LIMIT_EXIT_CODE) {
    return { reason: `model rate-limited (agent command exited ${RATE_LIMIT_EXIT_CODE})`, retryAfterMs: hint };
  }
  if (/(?:status|http|code|error)\W{0,12}529\b|\b529\s+overloaded|overloaded_error/i.test(text))
    return { reason: 'model overloaded (529)', retryAfterMs: hint };
  if (/experiencing high demand|model is at capacity/i.test(text)) return { reason: 'model overloaded (high demand)', retryAfterMs: hint };
  if (/\boverloaded\b/i.test(text)) return { reason: 'model overloaded', retryAfterMs: hint };
  if (/(?:status|http|code|error)\W{0,12}429\b|\b429\s+too many|too many requests|rate[_ -]limit(?:_error|ed|ing| exceeded| reached)/i.test(text)) {
    return { reason: 'model rate-limited (429)', retryAfterMs: hint };
  }
  return null;
}

/** The first wait, the longest wait: the backoff doubles from one to the other. */
export const RATE_LIMIT_BACKOFF = { initialMs: 2_000, maxMs: 5 * 60_000 } as const;

/** A stable number in [0, 1) from a string (FNV-1a): jitter that replays the same. */
export function unitHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 0x1_0000_0000;
}

/**
 * How long to wait before retry number `attempt` (1-based): doubling from 2 s, capped at 5 min,
 * at least what the model asked for (still capped), with up to +25% jitter so many agents limited
 * at once do not all come back together. The jitter comes from `jitterKey` (agent id and attempt),
 * so the same history always waits the same time.
 */
export function rateLimitBackoffMs(attempt: number, retryAfterMs: number | null, jitterKey: string): number {
  const { initialMs, maxMs } = RATE_LIMIT_BACKOFF;
  const exp = initialMs * 2 ** Math.min(Math.max(0, attempt - 1), 20);
  const base = Math.min(maxMs, Math.max(exp, retryAfterMs ?? 0));
  return Math.min(maxMs, Math.round(base * (1 + 0.25 * unitHash(jitterKey))));
}
