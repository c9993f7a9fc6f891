/**
 * Human controls: steer, interrupt, stop, pause, resume, abort, dismiss (a false
 * alarm: dismissal.ts), and the agent's heartbeat. Every signal payload is validated; an invalid one is recorded and ignored (a throwing
 * handler would wedge the workflow). Every kind of stop goes through `requestStop` (stop.ts).
 * Each control's rule returns actions (actions.ts); a handler yields them step by step (steps.ts)
 * and the shell carries each step out (`run`) before the next rule decides. A steer is three rules
 * in turn (its whisper, the hold it ends, the interrupt it answers), each deciding on the state the
 * one before left.
 */
import type { z } from 'zod';
import { SIGNAL_SCHEMAS, describeZodError, type SignalName } from '../contract/schemas.js';
import { isTerminal } from '../contract/states.js';
import { isUndecodable, undecodableReason } from '../contract/undecodable.js';
import { transitionThen, type AgentAction, type RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { fire, ruleInput, withdrawable } from './effects.js';
import { endChildrenWaitActions } from './delegation.js';
import { dismissProblem, lastFlagged } from './dismissal.js';
import { receiveChildSpend, receiveSubagentSpend } from './rails.js';
import { stopActions } from './stop.js';
import { pendingCompaction } from './compaction.js';
import { humanWait } from './human-wait.js';
import { blockActions, endHoldActions } from './held.js';
import { sessionSignal } from './session-end.js';
import { subagentSignal } from './subagent-state.js';
import { markAdmitted } from './slices/delegation.js';
import { CONTROLS, controlEvent } from './telemetry.js';
import type { Steps } from './steps.js';

/** A stop signal without `drainTimeoutMs` lets the current turn finish for this long. */
export const DEFAULT_DRAIN_MS = 30_000;

/** The drain is over (reached a turn boundary, or timed out): the agent ends `done`. */
export function finishStop(ctx: AgentContext, reachedBoundary: boolean): void {
  const { s } = ctx.core;
  if (isTerminal(s.state)) return;
  fire(ctx, 'drained', reachedBoundary ? `stopped: ${s.stopReason}` : `stopped after drain timeout: ${s.stopReason}`);
}

/** The `resume` transition and what it means: the ladder starts over on what the agent does next. */
export function resumeActions({ s, now }: RuleInput, cause: string): AgentAction[] {
  return transitionThen(
    s.state,
    'resume',
    cause,
    { kind: 'newEpoch' },
    { kind: 'restartLadder' },
    // The human has judged what came before: later evaluations look only at turns after this,
    // and the time spent paused is not idleness.
    { kind: 'judgedBefore', turn: s.turns + 1 },
    { kind: 'idleFrom', at: now },
    { kind: 'clearAwaiting' },
    { kind: 'releaseWaits' }, // a human took over from the wait
    { kind: 'dropEvaluations', recount: true },
    { kind: 'budgetPauseOver' }, // a budget still reached pauses it again before its next turn
  );
}

type Payload<N extends SignalName> = z.output<(typeof SIGNAL_SCHEMAS)[N]>;

const refuse = (what: string, reason: string): AgentAction[] => [{ kind: 'refuse', what, reason }];

/** What a steer does before a hold it ends (held.ts). */
function steerActions(r: RuleInput, text: string): AgentAction[] {
  const { s } = r;
  if (isTerminal(s.state)) return refuse('steer', `agent is ${s.state}`);
  if (!text) return refuse('steer', 'text: steering needs text');
  return [
    { kind: 'whisper', type: 'STEERING', text },
    // A driven turn waits to be retried (rate limit, failure backoff, an interrupt meanwhile): the
    // steer joins the retry's input instead of waiting one more turn.
    ...(s.retryWhispers ? [{ kind: 'deliverForRetry' } as const] : []),
    ...endChildrenWaitActions(r, 'steered by a human while waiting on its children'),
  ];
}

/** A steer after an interrupt is the input the agent awaited. */
function steeredAfterInterrupt({ s }: RuleInput): AgentAction[] {
  if (s.state !== 'awaiting-input' || s.awaitingCause !== 'interrupt') return [];
  return [{ kind: 'newEpoch' }, { kind: 'clearAwaiting' }, { kind: 'transition', event: 'input', cause: 'steered after an interrupt' }];
}

/** A human resumed or aborted an escalation without dismissing it: they agree something was wrong. */
const decided = (s: RuleInput['s'], decision: 'resumed' | 'aborted', note: string | undefined): AgentAction[] =>
  s.awaitingCause === 'escalation' ? [{ kind: 'decideEscalation', decision, note: note ?? null }] : [];

/**
 * The steps of each control (a signal that another module owns is handed to it). Each reads the
 * state as the steps before it left it: `ruleInput` is the live state, and `now` does not move
 * within a handler.
 */
const controls: { [N in SignalName]: (ctx: AgentContext, p: Payload<N>) => Steps<void> } = {
  *steer(ctx, p) {
    const r = ruleInput(ctx);
    const actions = steerActions(r, p.text);
    yield actions;
    if (actions[0]?.kind === 'refuse') return;
    // New input ends a hold (held.ts): a mesh's rebase request is the input its worker waited for.
    const { heldBy } = r.s;
    if (heldBy !== undefined) yield endHoldActions(r, `steered while blocked (${heldBy}): it runs with the new input`);
    yield steeredAfterInterrupt(r);
  },
  *interrupt(ctx, p) {
    const { s } = ctx.core;
    yield transitionThen(
      s.state,
      'interrupt',
      p.reason ?? 'interrupted by a human',
      { kind: 'releaseWaits' }, // a human took over from a wait on delegated children, or a hold
      { kind: 'newEpoch' },
      { kind: 'cancelTurn' }, // driven: abandon the running turn; the session is kept
      { kind: 'interruptPending' },
      { kind: 'awaitFor', cause: 'interrupt', reason: p.reason ?? 'interrupted: waiting for input' },
    );
  },
  *stop(ctx, p) {
    yield stopActions(ruleInput(ctx), { reason: p.reason ?? 'stop requested', drainMs: p.drainTimeoutMs ?? DEFAULT_DRAIN_MS });
  },
  *pause(ctx, p) {
    const reason = p.reason ?? 'paused by a human';
    yield transitionThen(ctx.core.s.state, 'pause', reason, { kind: 'newEpoch' }, { kind: 'pausedFor', reason });
  },
  *resume(ctx, p) {
    const r = ruleInput(ctx);
    const resumed = resumeActions(r, p.note ? `resumed: ${p.note}` : 'resumed by a human');
    yield resumed.length > 1 ? [...resumed, ...decided(r.s, 'resumed', p.note)] : resumed;
  },
  *abort(ctx, p) {
    const { s } = ctx.core;
    // driven: the running turn ends now (the process still gets its grace period)
    yield transitionThen(
      s.state,
      'abort',
      `aborted: ${p.reason ?? 'by a human'}`,
      { kind: 'newEpoch' },
      { kind: 'cancelTurn' },
      ...decided(s, 'aborted', p.reason),
    );
  },
  *heartbeat(ctx, p) {
    const { s, now } = ruleInput(ctx);
    if (p.generation !== undefined && p.generation < s.generation) {
      yield refuse('heartbeat', `stale generation ${p.generation} < ${s.generation}`);
      return;
    }
    const beat: AgentAction = { kind: 'heartbeat', at: now, generation: p.generation };
    yield s.state === 'spawning' ? [beat, { kind: 'transition', event: 'started', cause: 'first heartbeat' }] : [beat];
  },
  *compaction(ctx, p) {
    yield compactionActions(ruleInput(ctx), p);
  },
  *humanWait(ctx, p) {
    yield* humanWait(ctx, p);
  },
  // Slice writes only: nothing to carry out.
  // biome-ignore lint/correctness/useYield: a control that only records what it heard
  *session(ctx, p) {
    sessionSignal(ctx, p);
  },
  *subagent(ctx, p) {
    subagentSignal(ctx.core.s, p, ctx.ports.now());
    if (p.phase === 'stop' && p.id && p.spend) yield* receiveSubagentSpend(ctx, p.id, p.spend);
  },
  *block(ctx, p) {
    yield blockActions(ruleInput(ctx), p);
  },
  // biome-ignore lint/correctness/useYield: a control that only records what it heard
  *admit(ctx) {
    markAdmitted(ctx.core.s);
  },
  *childSpend(ctx, p) {
    yield* receiveChildSpend(ctx, p);
  },
  *dismiss(ctx, p) {
    yield dismissActions(ruleInput(ctx), p.note);
  },
};

/** The agent's own CLI compacts its context (hooks): shown as `compacting`, so the roster tells summarising from thinking. */
function compactionActions({ s, spec }: RuleInput, p: Payload<'compaction'>): AgentAction[] {
  if (spec.driver) return refuse('compaction', `agent is driven by warden (${spec.driver.kind}); warden compacts it itself`);
  const trigger = p.trigger ? ` (${p.trigger})` : '';
  if (p.phase !== 'end') return [{ kind: 'transition', event: 'compact', cause: `the agent's own CLI is compacting its context${trigger}` }];
  if (s.state !== 'compacting' || pendingCompaction(s)) {
    const warden = pendingCompaction(s) ? ' (warden compacted it: its next turn ends that)' : '';
    return refuse('compaction', `end of a compaction, but the agent is ${s.state}${warden}`);
  }
  return [{ kind: 'transition', event: 'compacted', cause: `the agent's own CLI finished compacting its context${trigger}` }];
}

/** A human calls the newest flagged verdict a false alarm (dismissal.ts). */
function dismissActions(r: RuleInput, note: string | undefined): AgentAction[] {
  const { s, spec } = r;
  if (isTerminal(s.state)) return refuse('dismiss', `agent is ${s.state}`);
  const problem = dismissProblem(s);
  if (problem) return refuse('dismiss', problem);
  const target = lastFlagged(s)!;
  // Dismissing the escalation that paused the agent resumes it (awaiting-input -> running); a
  // human pause or an interrupt stays.
  const cause = `resumed: dismissed as a false alarm${note ? ` (${note})` : ''}`;
  return [
    { kind: 'dismissal', note: note ?? null },
    // The ladder starts over; whispers it queued that the agent has not received are withdrawn.
    { kind: 'restartLadder' },
    { kind: 'withdrawLadderWhispers' },
    {
      kind: 'log',
      level: 'info',
      message: 'a human dismissed a finding as a false alarm',
      meta: { agentId: spec.agentId, pattern: target.verdict.pattern, withdrawnWhispers: s.pendingWhispers.filter(withdrawable).length, note: note ?? null },
    },
    ...(s.state === 'awaiting-input' && s.awaitingCause === 'escalation' ? resumeActions(r, cause) : []),
  ];
}

/** A signal this workflow does not define (a typo, an old client): recorded and refused, visibly. */
export function* unknownSignal(ctx: AgentContext, name: string): Steps<void> {
  const { spec } = ctx.core;
  const reason = `unknown signal ${JSON.stringify(name.slice(0, 100))}: agentWorkflow takes ${Object.keys(controls).join(', ')}`;
  yield [
    { kind: 'invalidSignal', what: name.slice(0, 100), reason },
    { kind: 'log', level: 'warn', message: 'unknown signal refused', meta: { agentId: spec.agentId, signal: name.slice(0, 100) } },
  ];
}

/** Temporal asked to cancel the workflow (`temporal workflow cancel`, the Web UI): a stop with the default drain. */
export function* cancellationRequested(ctx: AgentContext): Steps<void> {
  yield stopActions(ruleInput(ctx), { reason: 'cancellation requested through Temporal', drainMs: DEFAULT_DRAIN_MS });
}

/** A signal arrived: validate it, then its control's steps, then its telemetry. Never throws. */
export function* signal<N extends SignalName>(ctx: AgentContext, name: N, raw?: unknown): Steps<void> {
  const { s, spec } = ctx.core;
  const r = SIGNAL_SCHEMAS[name].safeParse(raw ?? {});
  if (!r.success) {
    const reason = isUndecodable(raw) ? `undecodable ${name} payload: ${undecodableReason(raw)}` : `invalid ${name} payload: ${describeZodError(r.error)}`;
    yield [
      { kind: 'invalidSignal', what: name, reason },
      { kind: 'log', level: 'warn', message: 'invalid signal ignored', meta: { agentId: spec.agentId, signal: name, reason } },
    ];
    return;
  }
  const refusedBefore = s.refused.at(-1);
  yield* controls[name](ctx, r.data as Payload<N>);
  if (isControl(name)) yield [controlEvent(s.state, name, s.refused.at(-1) === refusedBefore, controlNote(r.data as Record<string, unknown>))];
}

const isControl = (name: string): boolean => (CONTROLS as readonly string[]).includes(name);

/** A control's free text: a steer's text, a note, a reason. */
function controlNote(p: Record<string, unknown>): string | undefined {
  const v = p.text ?? p.note ?? p.reason;
  return typeof v === 'string' ? v : undefined;
}
