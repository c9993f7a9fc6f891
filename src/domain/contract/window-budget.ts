/**
 * Byte budgets of whole windows and of the continue-as-new input (the numbers and why are in
 * limits.ts): the window keeps its newest detail, older detail goes first, a marker says what went.
 */
import { CARRIED_STATE_MAX_BYTES, DROPPED_MARKER, SPEC_MAX_BYTES, WINDOW_MAX_BYTES, jsonBytes, type TurnShape } from './limits.js';

export interface CapWindowResult<T> {
  turns: T[];
  bytes: number;
  /** How many fields of each kind were replaced by DROPPED_MARKER, and how many whole turns left. */
  dropped: { results: number; args: number; texts: number; toolCalls: number; turns: number };
}

/**
 * JSON bytes of each turn already measured, by object. A window's turns are never changed in place
 * (capWindow copies a turn before it cuts it; the agent core only ever replaces the array), so a
 * turn is measured once when it enters the window instead of once per turn for as long as it
 * stays there (the window is re-checked on every turn). Same numbers either way: nothing a
 * workflow decides depends on whether a size came from here.
 */
const turnBytesCache = new WeakMap<object, number>();

/** `jsonBytes(turn)`, measured once per turn object (see turnBytesCache: turns must not be mutated). */
export function turnBytes(turn: object): number {
  let b = turnBytesCache.get(turn);
  if (b === undefined) {
    b = jsonBytes(turn);
    turnBytesCache.set(turn, b);
  }
  return b;
}

/**
 * Keep a window of turns within `maxBytes` (JSON bytes of the array): drop the oldest *detail*
 * first — tool results (oldest turn first), then tool args, then texts (all but the newest turn's),
 * each replaced by DROPPED_MARKER — then whole tool-call lists, and only then whole turns (oldest
 * first; the newest is always kept). Pure and idempotent; never mutates its input; returns the same array when it fits.
 */
export function capWindow<T extends TurnShape>(turns: readonly T[], maxBytes: number = WINDOW_MAX_BYTES): CapWindowResult<T> {
  const dropped = { results: 0, args: 0, texts: 0, toolCalls: 0, turns: 0 };
  const sizes = turns.map((t) => turnBytes(t));
  // The array's JSON: brackets and commas around the turns.
  let total = sizes.reduce((a, b) => a + b, 0) + Math.max(1, turns.length) + 1;
  if (total <= maxBytes) return { turns: turns as T[], bytes: total, dropped };
  const out: T[] = turns.map((t) => ({ ...t, ...(t.toolCalls ? { toolCalls: t.toolCalls.map((c) => ({ ...c })) } : {}) }));
  const resize = (i: number) => {
    const b = jsonBytes(out[i]);
    total += b - sizes[i]!;
    sizes[i] = b;
  };
  const markerBytes = jsonBytes(DROPPED_MARKER);
  for (const f of ['result', 'args'] as const) {
    for (let i = 0; i < out.length && total > maxBytes; i++) {
      const calls = out[i]!.toolCalls;
      if (!calls) continue;
      for (const c of calls) {
        const v = c[f];
        if (v === undefined) continue;
        const before = jsonBytes(v);
        if (before <= markerBytes) continue;
        c[f] = DROPPED_MARKER;
        sizes[i]! += markerBytes - before;
        total += markerBytes - before;
        dropped[f === 'result' ? 'results' : 'args'] += 1;
      }
    }
  }
  // Texts and tool-call lists of every turn but the newest; then whole turns, oldest first.
  for (let i = 0; i < out.length - 1 && total > maxBytes; i++) {
    if (jsonBytes(out[i]!.text) <= markerBytes) continue;
    out[i]!.text = DROPPED_MARKER;
    dropped.texts += 1;
    resize(i);
  }
  for (let i = 0; i < out.length - 1 && total > maxBytes; i++) {
    if (!out[i]!.toolCalls?.length) continue;
    out[i]!.toolCalls = [];
    dropped.toolCalls += 1;
    resize(i);
  }
  while (out.length > 1 && total > maxBytes) {
    out.shift();
    total -= sizes.shift()! + 1;
    dropped.turns += 1;
  }
  return { turns: out, bytes: total, dropped };
}

/** A piece of the continue-as-new input over its budget, or null. For the core to check (and log) before continuing. */
export function checkCarriedBudget(spec: unknown, carried: unknown): { field: 'spec' | 'carried'; bytes: number; limit: number } | null {
  const s = jsonBytes(spec);
  if (s > SPEC_MAX_BYTES) return { field: 'spec', bytes: s, limit: SPEC_MAX_BYTES };
  const c = jsonBytes(carried);
  if (c > CARRIED_STATE_MAX_BYTES) return { field: 'carried', bytes: c, limit: CARRIED_STATE_MAX_BYTES };
  return null;
}
