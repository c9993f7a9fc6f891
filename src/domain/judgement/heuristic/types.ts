/** Shared types of the heuristic detectors (pure, no @temporalio). */
import type { Pattern, Turn, VerdictKind } from '../../contract/schemas.js';
import type { ProtectedChange } from './protected.js';

export interface HeuristicInput {
  task: string;
  turns: readonly Turn[];
  reason?: 'interval' | 'idle';
  /** Index of the first turn that may serve as evidence; earlier turns are context only. Absent = 0. */
  evidenceFrom?: number;
  /** Turn number of `turns[0]` (verdict evidence is cited by turn number). Absent = 1. */
  firstTurnNumber?: number;
  /** Changes to protected paths in the working tree since the agent started (AgentSpec.protect), where warden read them. */
  protectedChanges?: readonly ProtectedChange[];
  /**
   * What counts as tampering with protected paths: any change but a new file (the rule), or, for a
   * workflow that checked a done-claim before that rule, only a deletion or lost assertions.
   */
  tampering?: 'any-change' | 'deleted-or-weakened';
}

/** What one detector found: the verdict, and the indices (into `turns`) of the evidence turns. */
export interface Finding {
  kind: VerdictKind;
  pattern: Pattern;
  message: string;
  /** Indices into `turns`, all at or after `evidenceFrom` (an idle finding may have none). */
  turns: number[];
  /**
   * The whole evidence the finding rests on, counts left out (the full failing command as the
   * detector groups it, the path, the repeated text): hashed with the detector's id into the
   * verdict's `finding` key, which is what a dismissal silences. Absent: the message, normalised
   * (digits folded), for detectors whose message is a fixed template.
   */
  key?: string;
}

export interface DetectorContext {
  task: string;
  turns: readonly Turn[];
  reason: 'interval' | 'idle';
  /** Index of the first evidence turn. */
  from: number;
}

export type Detector = (ctx: DetectorContext) => Finding | null;

export type Call = NonNullable<Turn['toolCalls']>[number];

/** Every tool call of the window with the index of its turn, in order. */
export function callsOf(turns: readonly Turn[], from = 0): Array<{ turn: number; call: Call }> {
  const out: Array<{ turn: number; call: Call }> = [];
  turns.forEach((t, i) => {
    if (i >= from) for (const call of t.toolCalls ?? []) out.push({ turn: i, call });
  });
  return out;
}

export const uniq = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b);

/**
 * A tool call's arguments as JSON, when they can be a JSON object, array or string; else
 * undefined. Plain text (a shell command, a diff) is not handed to JSON.parse: it would throw, and
 * building that error costs more than everything else the heuristic does with the call.
 */
export function jsonArgs(raw: string): unknown {
  const first = raw.trimStart()[0];
  if (first !== '{' && first !== '[' && first !== '"') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
