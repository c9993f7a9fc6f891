/**
 * `blocked`: the agent waits on something the system resolves, not a human. A driven turn whose
 * model is rate-limited or overloaded (src/domain/agent/rate-limit.ts) does not count against restart
 * intensity: the agent is blocked with the reason and the retry time, a workflow timer waits out a
 * capped, jittered backoff, and the same turn (the same whispers) is retried.
 */
import { rateLimitBackoffMs, RATE_LIMITED_FAILURE, type RateLimit } from './rate-limit.js';
import type { Whisper } from '../contract/schemas.js';
import type { AgentContext } from './context.js';
import { moves, transitionThen, type AgentAction } from './actions.js';
import { ruleInput } from './effects.js';
import { iso } from './state.js';
import type { Steps } from './steps.js';
import { addBlockedTime, recordRateLimited } from './slices/driven.js';

/** The rate limit a failed turn activity reported (its failure type and details), else null. */
export function rateLimitOf(failure: { type?: string; details?: unknown } | undefined): RateLimit | null {
  if (!failure || failure.type !== RATE_LIMITED_FAILURE) return null;
  const d = Array.isArray(failure.details) ? (failure.details[0] as Partial<RateLimit> | undefined) : undefined;
  const reason = typeof d?.reason === 'string' && d.reason ? d.reason : 'model rate-limited';
  const retryAfterMs = typeof d?.retryAfterMs === 'number' && Number.isFinite(d.retryAfterMs) ? d.retryAfterMs : null;
  return { reason, retryAfterMs };
}

/** "45 s", "12 min", "1 h 5 min": a time spent blocked, for a reason a human reads. */
export function spanText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  return min % 60 === 0 ? `${min / 60} h` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

export type BlockDecision = { kind: 'wait'; waitMs: number } | { kind: 'give-up'; reason: string };

/**
 * The bound on a rate-limited streak (`safety.maxBlockedMs`). `blockedMs`: time already spent
 * blocked since the last finished turn; `backoffMs`: what the backoff asks for this retry. The
 * wait never runs past the bound; once the bound is spent, the next rate-limited turn gives up
 * (the circuit opens) instead of waiting again. Pure.
 */
export function blockDecision(a: { blockedMs: number; backoffMs: number; maxBlockedMs: number; attempts: number; reason: string }): BlockDecision {
  const left = a.maxBlockedMs - a.blockedMs;
  if (left <= 0) {
    return {
      kind: 'give-up',
      reason: `circuit open: blocked for ${spanText(a.blockedMs)} (${a.attempts} rate-limited turns in a row; safety.maxBlockedMs is ${spanText(a.maxBlockedMs)}); last: ${a.reason}`,
    };
  }
  return { kind: 'wait', waitMs: Math.max(1, Math.min(a.backoffMs, left)) };
}

/** The blocked wait ended after `ms` (the timer fired, or a human moved the agent): count it toward the bound. */
export function blockedFor(ctx: AgentContext, ms: number): void {
  const { s } = ctx.core;
  addBlockedTime(s, ms);
}

/**
 * A driven turn was rate-limited. The turn will be retried with the same input; when the agent is
 * running it becomes `blocked` ("model rate-limited (429); retrying at 23:41:05 UTC") and the
 * returned wait is how long the workflow's timer waits. Null: no wait (a human paused or stopped
 * the agent meanwhile; the loop handles that state, and a resumed agent retries the turn).
 */
export function* turnRateLimited(ctx: AgentContext, f: { turnNumber: number; whispers: Whisper[]; cause: string; limit: RateLimit }): Steps<number | null> {
  const r = ruleInput(ctx);
  const { s, spec, now } = r;
  yield [{ kind: 'retryWhispers', whispers: f.whispers }]; // the retry gets the same input; nothing queued is lost or doubled
  const attempt = recordRateLimited(ctx.core.s, f.cause);
  if (s.state !== 'running' && s.state !== 'compacting') {
    return null;
  }
  const backoffMs = rateLimitBackoffMs(attempt, f.limit.retryAfterMs, `${spec.agentId}:${f.turnNumber}:${attempt}`);
  const decision = blockDecision({
    blockedMs: s.blockedMs ?? 0,
    backoffMs,
    maxBlockedMs: spec.safety.maxBlockedMs,
    attempts: attempt,
    reason: f.limit.reason,
  });
  if (decision.kind === 'give-up') {
    const meta = { agentId: spec.agentId, turn: f.turnNumber, blockedMs: s.blockedMs, attempts: attempt };
    yield [
      { kind: 'log', level: 'error', message: 'model rate-limited for too long; the circuit opens', meta },
      ...transitionThen(s.state, 'fail', decision.reason, { kind: 'notify', alert: { event: 'circuit-open', reason: decision.reason } }),
    ];
    return null;
  }
  const waitMs = decision.kind === 'wait' ? decision.waitMs : backoffMs;
  const at = iso(now + waitMs).slice(11, 19);
  const waiting: AgentAction = {
    kind: 'log',
    level: 'warn',
    message: 'turn rate-limited; blocked until the retry',
    meta: { agentId: spec.agentId, turn: f.turnNumber, attempt: s.rateLimited, waitMs, reason: f.limit.reason },
  };
  if (s.state === 'compacting') {
    // The compaction turn waits out the backoff and is retried; the agent stays compacting (the table has no compacting -> blocked).
    yield [waiting, { kind: 'stateReason', reason: `compacting; ${f.limit.reason}; retrying at ${at} UTC (attempt ${s.rateLimited})` }];
    return waitMs;
  }
  const blocks = moves(s.state, 'block');
  yield [waiting, { kind: 'transition', event: 'block', cause: `${f.limit.reason}; retrying at ${at} UTC (attempt ${s.rateLimited})` }];
  return blocks ? waitMs : null;
}

/** The backoff timer fired (or something else moved the agent): a still-blocked agent runs again. */
export function* retryAfterBlock(ctx: AgentContext): Steps<void> {
  const { s } = ctx.core;
  if (s.state !== 'blocked' || s.waitingOnChildren) return;
  if (s.heldBy === undefined) {
    yield [{ kind: 'transition', event: 'unblock', cause: `retrying turn ${s.turns + 1} after the rate limit` }];
    return;
  }
  // A `block` signal holds it too (held.ts): blocked on that alone; the turn is retried when it ends.
  yield [{ kind: 'stateReason', reason: s.heldBy }];
}
