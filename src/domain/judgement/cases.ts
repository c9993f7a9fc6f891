/**
 * What humans teach warden: every flagged verdict is remembered with the window it judged (a
 * *case*), and a human's decision on it becomes its label. `warden cases export` writes them in
 * the JSONL format `warden evaluate --cases` scores (src/domain/judgement/scoring.ts), so an evaluator can
 * be measured on the decisions people actually made about it.
 *
 * Labels: a finding a human dismissed as a false alarm is `OK`; an escalation a human resumed
 * without dismissing it, or aborted, is the verdict's pattern (they agreed something was wrong).
 * A flagged window with no human decision is not exported: the only label it has is the
 * evaluator's own, and scoring an evaluator on its own answers would measure nothing.
 *
 * Pure: the workflow keeps the records (bounded: MAX_CASES, each window within
 * CASE_WINDOW_MAX_BYTES), the CLI exports them (case-export.ts: kept apart so that this module, which the
 * workflow bundle preloads, holds no zod schema).
 */
import { CASE_WINDOW_MAX_BYTES, MAX_CASES } from '../contract/limits.js';
import type { CaseLabel } from './scoring.js';
import type { Turn, Verdict } from '../contract/schemas.js';
import { capWindow } from '../contract/window-budget.js';

export type CaseDecision = 'dismissed' | 'resumed' | 'aborted';

/** One flagged verdict and the window it judged, as the workflow remembers it. */
export interface CaseRecord {
  /** 1-based: the how-manieth flagged verdict of the agent this was. */
  seq: number;
  /** When the verdict was applied (ISO). */
  at: string;
  verdict: Verdict;
  /** The finding's signature (src/domain/judgement/finding.ts). */
  signature: string;
  reason: 'interval' | 'idle';
  /** The window the evaluator judged (cut to CASE_WINDOW_MAX_BYTES, older detail first). */
  turns: Turn[];
  /** Index into `turns` of the first evidence turn (earlier turns were context). */
  evidenceFrom: number;
  /** The agent's turn number of `turns[0]`, when known. */
  firstTurnNumber?: number;
  /** This verdict escalated the agent to humans. */
  escalated: boolean;
  /** What a human decided about it, if anyone did yet. */
  decision: { kind: CaseDecision; at: string; note: string | null } | null;
}

/** What the `cases` query answers. */
export interface AgentCases {
  agentId: string;
  task: string;
  cases: CaseRecord[];
}

/** A record's window cut to `maxBytes`; when whole turns had to go, the numbering moves with them. */
export function capCase(c: CaseRecord, maxBytes = CASE_WINDOW_MAX_BYTES): CaseRecord {
  const capped = capWindow(c.turns, maxBytes).turns;
  if (capped === c.turns) return c;
  const cut = c.turns.length - capped.length;
  return {
    ...c,
    turns: capped,
    evidenceFrom: Math.max(0, c.evidenceFrom - cut),
    ...(c.firstTurnNumber === undefined ? {} : { firstTurnNumber: c.firstTurnNumber + cut }),
  };
}

/** Remember one more flagged window: the newest MAX_CASES are kept, each within its byte budget. */
export function rememberCase(cases: readonly CaseRecord[], c: CaseRecord, max = MAX_CASES): CaseRecord[] {
  return [...cases, capCase(c)].slice(-max);
}

/** The label a human's decision gives a case, or null when no human has decided. */
export function labelOf(c: CaseRecord): CaseLabel | null {
  if (!c.decision) return null;
  if (c.decision.kind === 'dismissed') return 'OK';
  return c.verdict.pattern;
}
