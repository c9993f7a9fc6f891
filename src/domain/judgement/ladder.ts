/**
 * The escalation ladder, as a pure function.
 *
 * `step` counts consecutive non-OK verdicts. Skipped evaluations neither advance nor reset it.
 * Steps 1 .. threshold-1 whisper (step 1 the verdict's own words, later steps stronger);
 * step `threshold` (>= 3) sends an ESCALATION whisper, notifies every channel and pauses the agent.
 * An OK verdict resets to 0. A first observation never escalates, whatever the evaluator says.
 * While escalated (awaiting a human) further verdicts change nothing; `resume` resets.
 *
 * Last resort (`supervisor.lastResort: "compact"`): the first time a streak reaches the threshold,
 * the agent is compacted instead of escalated — it goes on in a fresh context holding a handoff
 * (src/domain/judgement/handoff.ts). The next flagged verdict decides: the same finding (the same pattern)
 * escalates as before; a different finding starts a new streak at step 1 with no second compaction
 * until an OK verdict (or a human's resume) has reset the ladder.
 */
import type { Pattern, Verdict, WhisperType } from '../contract/schemas.js';

export interface LadderState {
  step: number;
  escalations: number;
  /**
   * The streak was compacted for this finding (`pattern`); `open` until the first flagged verdict
   * after the compaction has been judged. Absent or null: not compacted since the last reset.
   */
  compacted?: { pattern: Pattern | null; open: boolean } | null;
  /** How many times this agent was compacted (absent: never). */
  compactions?: number;
}

/** What happens at the threshold the first time: escalate to humans, or compact the agent first. */
export type LastResort = 'compact' | 'none';

export type LadderAction =
  | { kind: 'none' }
  | { kind: 'reset' }
  | { kind: 'whisper'; type: Exclude<WhisperType, 'STEERING'>; text: string; step: number }
  | { kind: 'escalate'; text: string; step: number }
  /** Compact the agent (last resort before escalation); `text` is what it must do next. */
  | { kind: 'compact'; text: string; step: number };

export type EvaluationOutcome = { kind: 'verdict'; verdict: Verdict } | { kind: 'skipped'; reason: string };

export const MIN_ESCALATION_THRESHOLD = 3;

export function initialLadder(): LadderState {
  return { step: 0, escalations: 0 };
}

export function effectiveThreshold(threshold: number): number {
  return Math.max(MIN_ESCALATION_THRESHOLD, Math.floor(threshold));
}

function label(v: Verdict): string {
  return v.pattern ? `${v.pattern.toLowerCase().replace('_', ' ')}` : 'this problem';
}

/** The text of the whisper at a given step (1-based), for the verdict that caused it. */
export function whisperText(v: Verdict, step: number, threshold: number, afterCompaction = false): string {
  if (step >= threshold && afterCompaction) {
    return `Still no progress after ${threshold - 1} warnings and a fresh context (${label(v)}: ${v.message}). Escalating to a human; you are paused until a human resumes or aborts you.`;
  }
  if (step >= threshold) {
    return `Still no progress after ${threshold - 1} warnings (${label(v)}: ${v.message}). Escalating to a human; you are paused until a human resumes or aborts you.`;
  }
  if (step === 1) return v.message;
  return `Warning ${step} of ${threshold - 1}: ${v.message} You were already told this and the problem persists (${label(v)}). Stop and change your approach now; if it persists, a human will be called in and you will be paused.`;
}

export function applyOutcome(
  state: LadderState,
  outcome: EvaluationOutcome,
  threshold: number,
  lastResort: LastResort = 'none',
): { state: LadderState; action: LadderAction } {
  const t = effectiveThreshold(threshold);
  if (outcome.kind === 'skipped') return { state, action: { kind: 'none' } };
  const v = outcome.verdict;
  const compacted = state.compacted ?? null;
  // Already escalated: a human decides. (A compacted streak sits at the threshold, open.)
  if (state.step >= t && !compacted?.open) return { state, action: { kind: 'none' } };
  if (v.kind === 'OK') {
    return state.step === 0 && compacted === null
      ? { state, action: { kind: 'none' } }
      : { state: { ...uncompacted(state), step: 0 }, action: { kind: 'reset' } };
  }
  if (compacted?.open) {
    // The first flagged verdict after the compaction: the same finding persists, so escalate.
    if (compacted.pattern === v.pattern) {
      return {
        state: { ...state, step: t, escalations: state.escalations + 1, compacted: { ...compacted, open: false } },
        action: { kind: 'escalate', text: whisperText(v, t, t, true), step: t },
      };
    }
    // Another finding: a new streak, whispered from step 1 (no second compaction before a reset).
    const type = v.kind === 'THINK_DEEPER' ? 'THINK_DEEPER' : 'CORRECTION';
    return { state: { ...state, step: 1, compacted: { ...compacted, open: false } }, action: { kind: 'whisper', type, text: whisperText(v, 1, t), step: 1 } };
  }
  const step = state.step + 1;
  if (step >= t && lastResort === 'compact' && compacted === null) {
    return {
      state: { ...state, step: t, compacted: { pattern: v.pattern, open: true }, compactions: (state.compactions ?? 0) + 1 },
      action: { kind: 'compact', text: compactText(v, t), step: t },
    };
  }
  if (step >= t) {
    return {
      state: { ...state, step, escalations: state.escalations + 1 },
      action: { kind: 'escalate', text: whisperText(v, step, t), step },
    };
  }
  // Below the threshold an ESCALATION verdict is a correction: never escalate early.
  const type = v.kind === 'THINK_DEEPER' ? 'THINK_DEEPER' : 'CORRECTION';
  return { state: { ...state, step }, action: { kind: 'whisper', type, text: whisperText(v, step, t), step } };
}

/** What a compacted agent must do next (the handoff's last part). */
export function compactText(v: Verdict, threshold: number): string {
  return `${v.message} You were told this ${threshold - 1} times and did not change course (${label(v)}). Do not repeat what the progress above shows failing: change your approach now. If the problem persists, a human will be called in and you will be paused.`;
}

/** A human resumed: the ladder starts over. */
export function resetLadder(state: LadderState): LadderState {
  return { ...uncompacted(state), step: 0 };
}

/** The state without its compaction mark (the key dropped, so ladders that never compacted keep their shape). */
function uncompacted(state: LadderState): LadderState {
  const { compacted: _compacted, ...rest } = state;
  return rest;
}
