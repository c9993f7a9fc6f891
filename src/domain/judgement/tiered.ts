/**
 * The `tiered` evaluator's rules (pure): the heuristic judges every window; a model is asked only
 * where it pays — (a) the heuristic flags (non-OK), (b) the heuristic is unsure (a near miss,
 * src/domain/judgement/heuristic/unsure.ts, or a triage signal, triage-signals.ts), (c) a sampled
 * fraction of the OK windows. A flag that
 * rests on the working tree (a protected test weakened or deleted, read from `git diff`) is a fact,
 * not a reading of the transcript: no model is asked to overrule it. Where the model is asked its
 * verdict decides; where it fails (error, timeout, unparseable answer) the heuristic's
 * verdict stands and the failure is counted. Also the spend an evaluator's model reports, and how
 * it adds up per agent.
 */
import type { AskReason, EvaluationSpend, EvaluatorSpend, Tier } from '../contract/evaluation.js';
import type { Verdict } from '../contract/schemas.js';

export type { AskReason, EvaluationSpend, EvaluatorSpend, Tier };

export interface Route {
  ask: boolean;
  /** Why the model is asked; null when it is not. */
  why: AskReason | null;
}

/**
 * Ask the model or not: flagged first, then unsure, then sampled; an OK that is neither stands, and
 * so does a flag from the working tree (`tampered`: the protected paths' changes show tampering).
 */
export function routeTiered(o: { heuristic: Pick<Verdict, 'kind'>; unsure: boolean; sampled: boolean; tampered?: boolean }): Route {
  if (o.heuristic.kind !== 'OK' && o.tampered) return { ask: false, why: null };
  if (o.heuristic.kind !== 'OK') return { ask: true, why: 'flagged' };
  if (o.unsure) return { ask: true, why: 'unsure' };
  if (o.sampled) return { ask: true, why: 'sampled' };
  return { ask: false, why: null };
}

/** FNV-1a, 32 bits: a small stable hash (not for security; for sampling that replays identically). */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * Whether this OK window is one of the sampled fraction sent to the model anyway. Deterministic: a
 * hash of the agent id and the window's first and last turn numbers, so a rerun, a replay or
 * `warden evaluate` over the same window decides the same. `fraction` 0 never samples, 1 always.
 */
export function sampledOk(agentId: string, firstTurn: number, lastTurn: number, fraction: number): boolean {
  if (!(fraction > 0)) return false;
  if (fraction >= 1) return true;
  return fnv1a(`${agentId}\u0000${firstTurn}\u0000${lastTurn}`) / 0x1_0000_0000 < fraction;
}

export const emptyEvaluatorSpend = (): EvaluatorSpend => ({
  calls: 0,
  failed: 0,
  tokens: { in: 0, out: 0, total: 0 },
  costUsd: 0,
  decided: { heuristic: 0, model: 0 },
});

const nonNeg = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) && x > 0 ? x : 0);

/** Add one evaluation's spend and deciding tier to the agent's totals (a new object). Tolerates junk. */
export function addEvaluatorSpend(total: EvaluatorSpend, spend: Partial<EvaluationSpend> | undefined, tier: Tier | undefined): EvaluatorSpend {
  const t = { ...emptyEvaluatorSpend(), ...total };
  const s = spend ?? {};
  const tokensIn = nonNeg(s.tokensIn);
  const tokensOut = nonNeg(s.tokensOut);
  return {
    calls: t.calls + nonNeg(s.calls),
    failed: t.failed + nonNeg(s.failed),
    tokens: { in: t.tokens.in + tokensIn, out: t.tokens.out + tokensOut, total: t.tokens.total + Math.max(nonNeg(s.tokens), tokensIn + tokensOut) },
    costUsd: t.costUsd + nonNeg(s.costUsd),
    decided: { heuristic: t.decided.heuristic + (tier === 'heuristic' ? 1 : 0), model: t.decided.model + (tier === 'model' ? 1 : 0) },
  };
}

/** One line for `warden status`, the Web UI details and `warden top`'s focus pane. */
export function formatEvaluatorSpend(s: EvaluatorSpend): string {
  const failed = s.failed ? `, ${s.failed} failed` : '';
  return `${s.calls} model call${s.calls === 1 ? '' : 's'}${failed}, ${s.tokens.total} tokens, $${s.costUsd.toFixed(4)} (decided: heuristic ${s.decided.heuristic}, model ${s.decided.model})`;
}

/** What supervision costs per agent-hour: the evaluator's dollars and tokens over the hours the agent has been supervised (null before a minute has passed). */
export function supervisionRate(s: EvaluatorSpend, supervisedMs: number): { hours: number; costUsdPerHour: number | null; tokensPerHour: number | null } {
  const hours = Math.max(0, supervisedMs) / 3_600_000;
  if (supervisedMs < 60_000) return { hours, costUsdPerHour: null, tokensPerHour: null };
  return { hours, costUsdPerHour: s.costUsd / hours, tokensPerHour: s.tokens.total / hours };
}
