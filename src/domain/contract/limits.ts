/** Bounds that keep workflow history small. Text past a bound is cut and marked. */
export const MAX_TURN_TEXT = 8_000;
export const MAX_TOOL_FIELD = 4_000;
export const MAX_WHISPER_TEXT = 2_000;
export const MAX_TASK_TEXT = 8_000;
export const MAX_REASON_TEXT = 1_000;
export const MAX_TOOL_CALLS = 50;
export const TRUNCATION_MARKER = '…[truncated by warden]';

/** Cut `text` to at most `max` characters, ending with a visible marker when cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = Math.max(0, max - TRUNCATION_MARKER.length);
  return text.slice(0, keep) + TRUNCATION_MARKER;
}

// ---------------------------------------------------------------------------------------------
// Byte budgets. Everything below counts bytes of the JSON encoding (UTF-8), which is
// what a payload weighs in history and at the server's limits.
//
// The server refuses any single payload over 2 MiB (BlobSizeLimitError: a workflow input, a
// continue-as-new input, an activity input or result, an update argument) and fails the workflow
// task that produced it — which retries hot, forever: the agent is wedged. Every payload built from
// agent-supplied data must therefore stay *well* under 2 MiB by construction, not by luck:
//
//   continue-as-new input = AgentSpec            ≤ SPEC_MAX_BYTES        256 KiB
//                         + window (capWindow)   ≤ WINDOW_MAX_BYTES      512 KiB
//                         + the rest of the carried state (ladder, whispers, ids, records, and at
//                           most one queued evaluation's window, itself capped)   ≤ 1 MiB in all
//                         → CARRIED_STATE_MAX_BYTES 1 MiB + spec 256 KiB ≈ 1.25 MiB < 2 MiB.
//   evaluate input        = task (≤ 8,000 chars) + window ≤ 512 KiB + config   ≈ 0.55 MiB.
//   reportTurn argument   ≤ TURN_MAX_BYTES 64 KiB (the update's accepted event holds it whole).
//
// Why 64 KiB a turn: a turn is one model message plus its tool calls. 64 KiB holds the full 8,000
// character text plus a dozen 4,000-character tool results, which is more than an evaluator can use;
// a window of the default 20 such turns is 1.25 MiB, so capWindow (512 KiB) drops the detail of the
// oldest ones first. History grows by at most ~64 KiB + the reply per reported turn, so a 100-turn
// run of maximal turns is ~6.5 MiB spread over several continue-as-new runs (the server suggests
// continuing at 4 MiB of history, far below its 50 MiB hard limit).
// ---------------------------------------------------------------------------------------------

/** The whole JSON encoding of one reported or driven turn. */
export const TURN_MAX_BYTES = 64 * 1024;
/** A turn's `text` (8,000 characters take at most 24 KB in UTF-8; JSON escapes can double that). */
export const TURN_TEXT_MAX_BYTES = 32 * 1024;
/** One tool call's `args` or `result`, as JSON (4,000 characters, escaped). */
export const TOOL_FIELD_MAX_BYTES = 16 * 1024;
/** The rolling window the workflow keeps and carries across continue-as-new. */
export const WINDOW_MAX_BYTES = 512 * 1024;
/** An AgentSpec (the workflow input, carried across every continue-as-new). */
export const SPEC_MAX_BYTES = 256 * 1024;
/**
 * The window as one evaluation activity gets it (its input is stored in history every
 * `evalInterval` turns): at most this many bytes, older detail dropped first.
 */
export const EVAL_INPUT_MAX_BYTES = 128 * 1024;
/** Everything the workflow carries across continue-as-new besides the spec (window included). */
export const CARRIED_STATE_MAX_BYTES = 1024 * 1024;
/**
 * Flagged windows the workflow remembers for `warden cases export` (the newest ones), each cut to
 * CASE_WINDOW_MAX_BYTES: at most 8 × 24 KiB = 192 KiB of the carried state. A spiraling turn is a
 * few hundred bytes, so a whole window of 20 usually fits untouched.
 */
export const MAX_CASES = 8;
export const CASE_WINDOW_MAX_BYTES = 24 * 1024;
/** Findings a human dismissed, remembered per agent (newest kept); each signature at most MAX_SIGNATURE_CHARS. */
export const MAX_DISMISSED = 50;
export const MAX_SIGNATURE_CHARS = 300;
/** The server's own limit on one payload; nothing warden builds may come near it. */
/** A verification's output kept (its tail) in status and history; the whisper quotes at most VERIFY_WHISPER_TAIL_CHARS of it. */
export const VERIFY_OUTPUT_TAIL_BYTES = 4 * 1024;
export const VERIFY_WHISPER_TAIL_CHARS = 1_200;
/** Protected paths' changes reported per verification (the first ones, by path). */
export const MAX_PROTECTED_CHANGES = 50;
export const SERVER_PAYLOAD_LIMIT_BYTES = 2 * 1024 * 1024;
/**
 * Files a mesh worker writes are untrusted: warden reads at most this many bytes of a patch draft
 * (a larger one fails gate D, it is never read whole) ...
 */
export const MESH_PATCH_MAX_BYTES = 1024 * 1024;
/** ... and of a checkpoint (a larger one fails gate C). */
export const MESH_CHECKPOINT_MAX_BYTES = 64 * 1024;
/** What a patch's binary hunks inflate to, at most (a small compressed patch may carry a huge file). */
export const MESH_PATCH_BINARY_MAX_BYTES = 16 * 1024 * 1024;
/** The file names one patch may touch, in bytes of names (they travel in the tick's result and the mesh's state). */
export const MESH_PATCH_FILES_MAX_BYTES = 8 * 1024;
/** One turn's `costUsd`: far above any real turn, far below where sums overflow to Infinity. */
export const MAX_TURN_COST_USD = 1_000_000;
/** One turn's `tokensIn`/`tokensOut`. */
export const MAX_TURN_TOKENS = 1_000_000_000;

/** What replaces detail that capWindow dropped to stay within the window's byte budget. */
export const DROPPED_MARKER = '[dropped by warden: window over its byte budget]';
/** What replaces a tool field that had to go for a turn to fit its byte budget. */
export const OVER_BUDGET_MARKER = '[removed by warden: turn over its byte budget]';

/** UTF-8 length of a string, as TextEncoder would encode it (a lone surrogate counts 3, as U+FFFD). */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Bytes of `value`'s JSON encoding (0 for undefined, which JSON leaves out). */
export function jsonBytes(value: unknown): number {
  const s = JSON.stringify(value);
  return s === undefined ? 0 : utf8Bytes(s);
}

/**
 * Cut `text` so that its JSON encoding (quotes included) is at most `maxBytes`, ending with the
 * truncation marker when cut. Never splits a surrogate pair.
 */
export function truncateToBytes(text: string, maxBytes: number): string {
  if (jsonBytes(text) <= maxBytes) return text;
  let lo = 0;
  let hi = text.length;
  const fits = (k: number) => jsonBytes(text.slice(0, k) + TRUNCATION_MARKER) <= maxBytes;
  if (!fits(0)) return '';
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  let k = lo;
  const c = text.charCodeAt(k - 1);
  if (k > 0 && c >= 0xd800 && c <= 0xdbff) k -= 1;
  return text.slice(0, k) + TRUNCATION_MARKER;
}

export type BudgetCheck = { ok: true; bytes: number } | { ok: false; field: string; bytes: number; limit: number };

/** The fields a Turn may have (anything else is refused by name; see unknownTurnFields). */
export const TURN_FIELDS = ['id', 'text', 'toolCalls', 'tokensIn', 'tokensOut', 'costUsd', 'at', 'generation', 'done', 'awaitChildren', 'tree'] as const;
export const TOOL_CALL_FIELDS = ['name', 'args', 'result', 'ok', 'denied'] as const;

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Check a turn *as received* (the raw update argument: that is what lands in history) against the
 * byte budgets. The first field over its budget is named: `text`, `toolCalls.3.result`, or
 * `(turn)` for the whole. Shapes that are not a turn at all pass here; the schema rejects them.
 */
export function checkTurnBudget(turn: unknown): BudgetCheck {
  if (!isRecord(turn)) return { ok: true, bytes: jsonBytes(turn) };
  // The usual turn: measured once. Each field's JSON is part of the turn's, so a turn within the
  // smallest field budget has no field over its own; only a bigger one is measured field by field.
  const whole = jsonBytes(turn);
  if (whole <= Math.min(TOOL_FIELD_MAX_BYTES, TURN_TEXT_MAX_BYTES, TURN_MAX_BYTES)) return { ok: true, bytes: whole };
  const over = (field: string, value: unknown, limit: number): BudgetCheck | null => {
    const bytes = jsonBytes(value);
    return bytes > limit ? { ok: false, field, bytes, limit } : null;
  };
  const text = over('text', turn.text, TURN_TEXT_MAX_BYTES);
  if (text) return text;
  if (Array.isArray(turn.toolCalls)) {
    for (const [i, call] of turn.toolCalls.entries()) {
      if (!isRecord(call)) continue;
      for (const f of ['args', 'result'] as const) {
        const r = over(`toolCalls.${i}.${f}`, call[f], TOOL_FIELD_MAX_BYTES);
        if (r) return r;
      }
    }
  }
  return whole > TURN_MAX_BYTES ? { ok: false, field: '(turn)', bytes: whole, limit: TURN_MAX_BYTES } : { ok: true, bytes: whole };
}

/** One line for a failed budget check, naming the field. */
export function describeBudgetViolation(v: { field: string; bytes: number; limit: number }): string {
  const what = v.field === '(turn)' ? 'the turn as a whole' : `turn field ${v.field}`;
  return `${what} is ${v.bytes} bytes, over its budget of ${v.limit} bytes (warden's client truncates before sending; raw callers must stay within it)`;
}

/** Fields of a raw turn (and of its tool calls) that the Turn contract does not know: `foo`, `toolCalls.2.bar`. */
export function unknownTurnFields(turn: unknown): string[] {
  if (!isRecord(turn)) return [];
  const out = Object.keys(turn).filter((k) => !(TURN_FIELDS as readonly string[]).includes(k));
  if (Array.isArray(turn.toolCalls)) {
    turn.toolCalls.forEach((call, i) => {
      if (isRecord(call)) for (const k of Object.keys(call)) if (!(TOOL_CALL_FIELDS as readonly string[]).includes(k)) out.push(`toolCalls.${i}.${k}`);
    });
  }
  return out;
}

/**
 * Everything the reportTurn validator must refuse before the schema runs, as one message naming the
 * field, or null: unknown fields (a typo such as `toolcalls` would otherwise lose every tool call
 * silently) and byte budgets (the raw argument is what the accepted event stores).
 */
export function turnReportProblem(turn: unknown): string | null {
  const unknown = unknownTurnFields(turn);
  if (unknown.length)
    return `unknown turn field${unknown.length > 1 ? 's' : ''}: ${unknown.slice(0, 5).join(', ')} (a Turn has ${TURN_FIELDS.join(', ')}; a tool call has ${TOOL_CALL_FIELDS.join(', ')})`;
  const b = checkTurnBudget(turn);
  return b.ok ? null : describeBudgetViolation(b);
}

export interface ToolCallShape {
  name: string;
  args?: string;
  result?: string;
  ok?: boolean;
  denied?: boolean;
}
export interface TurnShape {
  text: string;
  toolCalls?: ToolCallShape[];
}

/**
 * Make an already-parsed turn (strings everywhere, as TurnSchema outputs) fit the byte budgets:
 * each field to its own cap, then — while the whole is over TURN_MAX_BYTES — the oldest tool
 * call's result, then its args, then the next call's, are replaced by a marker (the newest calls
 * keep their detail), and finally the text is cut. Returns
 * a new turn and the fields it changed (`text`, `toolCalls.3.result`, …). Pure; the client uses it
 * before sending, the drivers may use it on what an agent produced.
 */
export function fitTurnToBudget<T extends TurnShape>(turn: T): { turn: T; truncated: string[] } {
  const truncated: string[] = [];
  const out: T = { ...turn, ...(turn.toolCalls ? { toolCalls: turn.toolCalls.map((c) => ({ ...c })) } : {}) };
  if (jsonBytes(out.text) > TURN_TEXT_MAX_BYTES) {
    out.text = truncateToBytes(out.text, TURN_TEXT_MAX_BYTES);
    truncated.push('text');
  }
  const calls = out.toolCalls ?? [];
  calls.forEach((c, i) => {
    for (const f of ['args', 'result'] as const) {
      const v = c[f];
      if (v !== undefined && jsonBytes(v) > TOOL_FIELD_MAX_BYTES) {
        c[f] = truncateToBytes(v, TOOL_FIELD_MAX_BYTES);
        truncated.push(`toolCalls.${i}.${f}`);
      }
    }
  });
  let total = jsonBytes(out);
  const markerBytes = jsonBytes(OVER_BUDGET_MARKER);
  // Oldest call first, its result before its args: the newest calls keep their whole detail.
  for (let i = 0; i < calls.length && total > TURN_MAX_BYTES; i++) {
    for (const f of ['result', 'args'] as const) {
      const v = calls[i]![f];
      if (v === undefined || total <= TURN_MAX_BYTES) continue;
      const before = jsonBytes(v);
      if (before <= markerBytes) continue;
      calls[i]![f] = OVER_BUDGET_MARKER;
      if (!truncated.includes(`toolCalls.${i}.${f}`)) truncated.push(`toolCalls.${i}.${f}`);
      total += markerBytes - before; // a string value's encoding is all that changed
    }
  }
  if (total > TURN_MAX_BYTES) {
    const room = TURN_MAX_BYTES - (total - jsonBytes(out.text));
    out.text = truncateToBytes(out.text, Math.max(2, room));
    if (!truncated.includes('text')) truncated.push('text');
    total = jsonBytes(out);
  }
  // Fifty tool calls of names alone cannot exceed the budget (50 × ~250 bytes); drop the oldest if they somehow do.
  while (total > TURN_MAX_BYTES && calls.length > 0) {
    calls.shift();
    if (!truncated.includes('toolCalls')) truncated.push('toolCalls');
    total = jsonBytes(out);
  }
  return { turn: out, truncated };
}

/** How many children an agent may run at once, by delegation mode (the rest wait queued). */
export const DELEGATION_CAPS = { solo: 0, tight: 1, orchestrator: 5 } as const;
