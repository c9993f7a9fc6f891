/**
 * The primitives every concern of the agent uses: state transitions through the table (refused
 * events are recorded, never applied), the refusal log, the whisper queue and spend.
 */
import type { Whisper, WhisperType } from '../contract/schemas.js';
import { transition, type AgentEvent } from '../contract/states.js';
import type { AgentContext } from './context.js';
import { iso, keepLast } from './state.js';
import { publish } from './visibility.js';

/** Apply `event` through the state table. An illegal event is recorded as refused and changes nothing. */
export function fire(ctx: AgentContext, event: AgentEvent, cause: string): boolean {
  const { s, spec } = ctx.core;
  const r = transition(s.state, event);
  if (!r.ok) {
    s.refused = keepLast(s.refused, { what: event, reason: r.reason, at: iso(ctx.ports.now()) });
    ctx.ports.log.warn('refused event', { agentId: spec.agentId, event, state: s.state, reason: r.reason });
    return false;
  }
  if (r.to !== s.state) {
    s.transitions = keepLast(s.transitions, { from: s.state, to: r.to, event, cause, at: iso(ctx.ports.now()) });
  }
  s.state = r.to;
  s.stateReason = cause;
  publish(ctx);
  return true;
}

/** Record a refused signal or request (status.refused) and log it. */
export function refuse(ctx: AgentContext, what: string, reason: string): void {
  const { s, spec } = ctx.core;
  s.refused = keepLast(s.refused, { what, reason, at: iso(ctx.ports.now()) });
  ctx.ports.log.warn('refused signal', { agentId: spec.agentId, signal: what, reason });
}

/** Queue a whisper for the agent's next turn boundary. */
export function queueWhisper(ctx: AgentContext, type: WhisperType, text: string): Whisper {
  const { s, spec } = ctx.core;
  s.whisperSeq += 1;
  const w: Whisper = { id: `${spec.agentId}-w${s.whisperSeq}`, type, text, createdAt: iso(ctx.ports.now()) };
  s.pendingWhispers.push(w);
  publish(ctx);
  return w;
}

/** Whispers of the ladder: once one reaches the agent, only its later turns can show the problem persists. */
export const LADDER_WHISPERS: readonly WhisperType[] = ['CORRECTION', 'THINK_DEEPER', 'ESCALATION', 'VERIFY'];
/** At most this many deliveries are remembered for the evaluator (older ones have left the window anyway). */
export const KEEP_DELIVERED_AT = 40;

/**
 * Take every queued whisper for delivery now, before the agent's next turn (counted as delivered).
 * Where they landed is remembered; after a ladder whisper, only later turns are evidence.
 */
export function takeWhispers(ctx: AgentContext): Whisper[] {
  const { s, spec } = ctx.core;
  const whispers = s.pendingWhispers;
  s.pendingWhispers = [];
  s.whispersDelivered += whispers.length;
  if (whispers.length > 0) {
    const beforeTurn = s.turns + 1;
    const oldest = beforeTurn - spec.supervisor.windowSize;
    s.deliveredAt = [...s.deliveredAt.filter((d) => d.beforeTurn >= oldest), ...whispers.map((w) => ({ beforeTurn, type: w.type, text: w.text }))].slice(
      -KEEP_DELIVERED_AT,
    );
    if (whispers.some((w) => LADDER_WHISPERS.includes(w.type))) s.evidenceFrom = Math.max(s.evidenceFrom, beforeTurn);
  }
  return whispers;
}
