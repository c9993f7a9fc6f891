/**
 * The evidence frame of one evaluation: which turns of the window may serve as evidence, and the
 * turn numbers a verdict cites them by.
 *
 * The window is `turns`; `turns[0]` is the agent's turn number `firstTurnNumber` (1-based, over its
 * whole life). Turns before index `evidenceFrom` are context only: already judged by a flagged
 * evaluation, or taken before the last whisper reached the agent. A non-OK verdict must rest on turns
 * at or after `evidenceFrom`, cited by number.
 */
import type { WhisperType } from '../contract/schemas.js';

export interface EvidenceFrame {
  /** Turn number of `turns[0]`. */
  firstTurnNumber: number;
  /** Index of the first evidence turn, clamped to [0, count]. */
  evidenceFrom: number;
  /** How many turns the window holds. */
  count: number;
}

export function evidenceFrame(count: number, evidenceFrom?: number, firstTurnNumber?: number): EvidenceFrame {
  const from = Math.min(Math.max(0, Math.floor(evidenceFrom ?? 0)), count);
  const first = Math.max(1, Math.floor(firstTurnNumber ?? 1));
  return { firstTurnNumber: first, evidenceFrom: from, count };
}

/** The turn number of `turns[index]`. */
export const turnNumber = (f: EvidenceFrame, index: number): number => f.firstTurnNumber + index;

/** The index in `turns` of a turn number, or -1 when the window does not hold it. */
export function turnIndex(f: EvidenceFrame, number: number): number {
  const i = number - f.firstTurnNumber;
  return Number.isInteger(i) && i >= 0 && i < f.count ? i : -1;
}

/** Turn number of the first evidence turn (one past the last turn when there is none). */
export const firstEvidenceNumber = (f: EvidenceFrame): number => turnNumber(f, f.evidenceFrom);

/** Whether the window holds at least one evidence turn. */
export const hasEvidenceTurns = (f: EvidenceFrame): boolean => f.evidenceFrom < f.count;

/** Whisper deliveries (by turn number) as `EvaluateInput.deliveries` for one window; others dropped. */
export function deliveriesInWindow(
  deliveries: ReadonlyArray<{ beforeTurn: number; type: WhisperType; text: string }>,
  firstTurnNumber: number,
  count: number,
): Array<{ beforeIndex: number; type: WhisperType; text: string }> {
  return deliveries
    .map((d) => ({ beforeIndex: d.beforeTurn - firstTurnNumber, type: d.type, text: d.text }))
    .filter((d) => d.beforeIndex >= 0 && d.beforeIndex <= count);
}
