/**
 * The judgement slice of the carried state: the escalation ladder, the evaluation queue and its
 * counters, the last verdict, and from which turn turns are still evidence. The only functions that
 * assign these fields (docs/developing/architecture.md, "State slices"); the rules are in
 * supervision.ts, verification.ts, controls.ts and compaction.ts.
 */
import type { Turn } from '../../contract/schemas.js';
import type { AgentStatus } from '../../contract/status.js';
import { initialLadder, resetLadder, type LadderState } from '../../judgement/ladder.js';

export interface EvalJob {
  reason: 'interval' | 'idle';
  turns: Turn[];
  idleMs?: number;
  /** The number (1-based, counting every turn of the agent) of `turns[0]`. Absent in jobs carried from older runs. */
  firstTurn?: number;
}

export interface JudgementSlice {
  ladder: LadderState;
  turnsSinceEval: number;
  evaluations: AgentStatus['evaluations'];
  lastVerdict: AgentStatus['lastVerdict'];
  lastSkipReason: string | null;
  evalQueue: EvalJob[];
  /** The first turn (by number) that may serve as evidence for the ladder: turns before it were
   * already judged by a flagged evaluation, or came before the last whisper reached the agent. */
  evidenceFrom: number;
}

export const freshJudgement = (): JudgementSlice => ({
  ladder: initialLadder(),
  turnsSinceEval: 0,
  evaluations: { total: 0, ok: 0, flagged: 0, skipped: 0 },
  lastVerdict: null,
  lastSkipReason: null,
  evalQueue: [],
  evidenceFrom: 1,
});

/** The ladder moved (a verdict, a failed check). */
export function setLadder(s: JudgementSlice, ladder: LadderState): void {
  s.ladder = ladder;
}

/** The ladder starts over (a human resumed or dismissed). */
export function restartLadder(s: JudgementSlice): void {
  s.ladder = resetLadder(s.ladder);
}

/** One more turn towards the next interval evaluation; returns the count. */
export function countTurnTowardsEvaluation(s: JudgementSlice): number {
  s.turnsSinceEval += 1;
  return s.turnsSinceEval;
}

/** The count towards the next interval evaluation starts over. */
export function resetEvaluationCount(s: JudgementSlice): void {
  s.turnsSinceEval = 0;
}

/** Queue an interval evaluation: one still waiting is superseded by it (at most one waits). */
export function queueIntervalEvaluation(s: JudgementSlice, job: EvalJob): void {
  const waiting = s.evalQueue.findIndex((j) => j.reason === 'interval');
  if (waiting >= 0) s.evalQueue[waiting] = job;
  else s.evalQueue.push(job);
}

/** Queue an idle evaluation. */
export function queueIdleJob(s: JudgementSlice, job: EvalJob): void {
  s.evalQueue.push(job);
}

/** Nothing queued may run any more. */
export function dropEvaluations(s: JudgementSlice): void {
  s.evalQueue = [];
}

/** The next queued evaluation leaves the queue to run. */
export function takeEvaluation(s: JudgementSlice): EvalJob | undefined {
  return s.evalQueue.shift();
}

/** An evaluation returned (applied or not). */
export function countEvaluation(s: JudgementSlice): void {
  s.evaluations.total += 1;
}

/** An evaluation was skipped, for this reason. */
export function recordSkip(s: JudgementSlice, reason: string): void {
  s.evaluations.skipped += 1;
  s.lastSkipReason = reason;
}

/** A verdict is applied: the last verdict (an evaluation's also counts as ok or flagged). */
export function recordVerdict(s: JudgementSlice, verdict: NonNullable<AgentStatus['lastVerdict']>, counted: boolean): void {
  s.lastVerdict = verdict;
  if (!counted) return;
  if (verdict.kind === 'OK') s.evaluations.ok += 1;
  else s.evaluations.flagged += 1;
}

/** Turns before `turn` are evidence no more (judged, or before a whisper or a fresh context). */
export function evidenceFromAtLeast(s: JudgementSlice, turn: number): void {
  s.evidenceFrom = Math.max(s.evidenceFrom, turn);
}

/** Only turns from `turn` on are evidence (a human judged what came before). */
export function evidenceFromTurn(s: JudgementSlice, turn: number): void {
  s.evidenceFrom = turn;
}
