/**
 * The primitives every concern of the agent uses: state transitions through the table (refused
 * events are recorded, never applied), the refusal log, the whisper queue and spend.
 */
import type { Whisper, WhisperType } from '../contract/schemas.js';
import { transition, type AgentEvent } from '../contract/states.js';
import type { AgentContext } from './context.js';
import { enterState, recordRefusal } from './slices/lifecycle.js';
import { markDelivered, recordWhisperQueued } from './slices/whispers.js';
import { evidenceFromAtLeast } from './slices/judgement.js';
import { recordStateChange, recordWhisper } from './telemetry.js';

/** Apply `event` through the state table. An illegal event is recorded as refused and changes nothing. */
export function fire(ctx: AgentContext, event: AgentEvent, cause: string): boolean {
  const { s, spec } = ctx.core;
  const r = transition(s.state, event);
  if (!r.ok) {
    recordRefusal(s, event, r.reason, ctx.ports.now());
    ctx.ports.log.warn('refused event', { agentId: spec.agentId, event, state: s.state, reason: r.reason });
    return false;
  }
  const from = s.state;
  enterState(s, r.to, event, cause, ctx.ports.now());
  if (from !== r.to) recordStateChange(ctx, from, r.to, event, cause);
  return true;
}

/** Record a refused signal or request (status.refused) and log it. */
export function refuse(ctx: AgentContext, what: string, reason: string): void {
  const { s, spec } = ctx.core;
  recordRefusal(s, what, reason, ctx.ports.now());
  ctx.ports.log.warn('refused signal', { agentId: spec.agentId, signal: what, reason });
}

/** Queue a whisper for the agent's next turn boundary. */
export function queueWhisper(ctx: AgentContext, type: WhisperType, text: string): Whisper {
  const { s, spec } = ctx.core;
  const w = recordWhisperQueued(s, spec.agentId, type, text, ctx.ports.now());
  recordWhisper(ctx, 'queued', w);
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
  const beforeTurn = s.turns + 1;
  const whispers = markDelivered(s, beforeTurn, spec.supervisor.windowSize, KEEP_DELIVERED_AT, ctx.ports.now());
  if (whispers.some((w) => LADDER_WHISPERS.includes(w.type))) evidenceFromAtLeast(s, beforeTurn);
  for (const w of whispers) recordWhisper(ctx, 'delivered', w);
  return whispers;
}
