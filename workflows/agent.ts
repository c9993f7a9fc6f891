/**
 * agentWorkflow: one long-lived workflow per supervised agent (externally running mode).
 *
 * The agent runs elsewhere and reports each turn with the `reportTurn` update; the reply carries
 * every whisper queued for it. Every `evalInterval` turns (and once after `idleAfterMs` of silence)
 * the workflow runs one evaluation activity over the window and the task, and feeds the verdict to
 * the escalation ladder (src/domain/ladder.ts). State changes go through the transition table
 * (src/domain/states.ts). All state lives here, so it survives worker and server crashes by replay,
 * and it is carried across continue-as-new.
 *
 * Deterministic code only: @temporalio/workflow, zod and src/domain.
 */
import {
  ActivityCancellationType,
  ParentClosePolicy,
  getExternalWorkflowHandle,
  startChild,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  allHandlersFinished,
} from '@temporalio/workflow';
import type { z } from 'zod';
import {
  AgentSpecSchema,
  DELEGATION_CAPS,
  SIGNAL_SCHEMAS,
  TaskSpecSchema,
  TurnSchema,
  describeZodError,
  type AgentSpec,
  type AgentSpecInput,
  type DriverConfig,
  type SignalName,
  type Turn,
  type Verdict,
  type Whisper,
  type WhisperType,
} from '../src/domain/schemas.js';
import { applyOutcome, effectiveThreshold, initialLadder, resetLadder, type LadderState } from '../src/domain/ladder.js';
import { evaluationDue, pushWindow, rememberId } from '../src/domain/window.js';
import { isTerminal, transition, type AgentEvent, type AgentState } from '../src/domain/states.js';
import type { AgentStatus, RefusalRecord, ReportTurnResult, TransitionRecord } from '../src/domain/status.js';
import type { CheckResultOutput, DriverSession, EvaluateResult, NotificationEvent, TurnResult, WardenActivities } from '../src/domain/activity-types.js';
import { turnInput } from '../src/domain/turn-input.js';
import { budgetReport, exhaustedBudget, recordFailure, type Spend } from '../src/domain/budgets.js';
import { formatVerdict } from '../src/domain/verdict.js';
import { WardenCostUsd, WardenEscalationStep, WardenParent, WardenPaused, WardenState, WardenTokens } from '../src/domain/search-attributes.js';
import * as m from './messages.js';


/** Continue-as-new at the server's suggestion, or at this many events, whichever comes first. */
const MAX_HISTORY_EVENTS = 10_000;
const DEFAULT_DRAIN_MS = 30_000;
const KEEP_RECORDS = 10;
const KEEP_DELIVERIES = 20;
/** Publish spend as search attributes at least every this many turns. */
const SPEND_EVERY = 5;
/** States in which a silent external agent can be declared orphaned. */
const ORPHANABLE: readonly AgentState[] = ['spawning', 'running', 'awaiting-input', 'blocked'];
/** Webhooks retry with exponential backoff: 1 s doubling to 1 min, 8 attempts. */
const WEBHOOK_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '15s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 8 },
} as const;

interface EvalJob {
  reason: 'interval' | 'idle';
  turns: Turn[];
  idleMs?: number;
}

/** Everything the agent's supervision needs, carried verbatim across continue-as-new. */
export interface CarriedState {
  state: AgentState;
  stateReason: string | null;
  pauseReason: string | null;
  /** Why the agent is awaiting input: the ladder escalated, or a human interrupted it. */
  awaitingCause: 'escalation' | 'interrupt' | null;
  ladder: LadderState;
  window: Turn[];
  recentIds: string[];
  deliveries: { turnId: string; whispers: Whisper[] }[];
  turns: number;
  turnsSinceEval: number;
  evaluations: AgentStatus['evaluations'];
  lastVerdict: AgentStatus['lastVerdict'];
  lastSkipReason: string | null;
  pendingWhispers: Whisper[];
  whispersDelivered: number;
  whisperSeq: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  evalQueue: EvalJob[];
  stopDeadline: number | null;
  stopReason: string | null;
  drained: boolean;
  interruptPending: boolean;
  lastTurnAt: number | null;
  lastHeartbeatAt: number | null;
  idleChecked: boolean;
  transitions: TransitionRecord[];
  refused: RefusalRecord[];
  invalidSignals: number;
  runs: number;
  /** Driven mode: the driver's session (e.g. a codex session id), carried from turn to turn. */
  session: DriverSession | null;
  /** Driven mode: the stop's drain timeout passed and the running turn was cancelled. */
  drainTimedOut: boolean;
  /** When supervision started (wall-clock budget). */
  startedAt: number;
  /** Times of recent failed turns (restart intensity). */
  failures: number[];
  /** The newest agent generation seen; older reports are stale. */
  generation: number;
  /** Driven mode: the whispers of a failed turn, delivered again with its retry. */
  retryWhispers: Whisper[] | null;
  /** Delegation (parent side): the children and what each has spent. */
  children: ChildRecord[];
  childSpend: Record<string, { tokens: number; costUsd: number; turns: number }>;
  /** Delegation (child side): the parent has admitted this queued child. */
  admitted: boolean;
  /** A finished child's checked result: inline, or a content-addressed reference. */
  result: AgentStatus['result'];
}

interface ChildRecord {
  agentId: string;
  workflowId: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  reason: string | null;
  /** A stop was already sent (once is enough; a second could overtake the first's reason). */
  stopSent?: boolean;
}

function freshState(): CarriedState {
  return {
    state: 'spawning',
    stateReason: 'workflow started',
    pauseReason: null,
    awaitingCause: null,
    ladder: initialLadder(),
    window: [],
    recentIds: [],
    deliveries: [],
    turns: 0,
    turnsSinceEval: 0,
    evaluations: { total: 0, ok: 0, flagged: 0, skipped: 0 },
    lastVerdict: null,
    lastSkipReason: null,
    pendingWhispers: [],
    whispersDelivered: 0,
    whisperSeq: 0,
    tokensIn: 0,
    tokensOut: 0,
    costUsd: 0,
    evalQueue: [],
    stopDeadline: null,
    stopReason: null,
    drained: false,
    interruptPending: false,
    lastTurnAt: null,
    lastHeartbeatAt: null,
    idleChecked: false,
    transitions: [],
    refused: [],
    invalidSignals: 0,
    runs: 1,
    session: null,
    drainTimedOut: false,
    startedAt: Date.now(),
    failures: [],
    generation: 0,
    retryWhispers: null,
    children: [],
    childSpend: {},
    admitted: false,
    result: null,
  };
}

const keepLast = <T>(list: T[], item: T, n = KEEP_RECORDS): T[] => [...list, item].slice(-n);
const iso = (ms: number) => new Date(ms).toISOString();

export async function agentWorkflow(specInput: AgentSpecInput, carried?: CarriedState): Promise<AgentStatus> {
  const parsed = AgentSpecSchema.safeParse(specInput);
  if (!parsed.success) {
    throw ApplicationFailure.nonRetryable(`invalid AgentSpec: ${describeZodError(parsed.error)}`, 'InvalidAgentSpec');
  }
  const spec: AgentSpec = parsed.data;
  const threshold = effectiveThreshold(spec.supervisor.escalationThreshold);
  const s: CarriedState = carried ? { ...freshState(), ...carried, runs: carried.runs + 1 } : freshState();
  if (!carried && spec.startQueued) {
    s.state = 'queued';
    s.stateReason = 'waiting for a concurrency slot of its parent';
  }
  const driver: DriverConfig | undefined = spec.driver;
  /** The running driven turn, so interrupt/stop/abort can cancel it. */
  let turnScope: CancellationScope | null = null;
  let evaluating = false;
  let pendingNotifications = 0;
  /** Bumped whenever a human intervenes, so an evaluation that started before it is not applied. */
  let epoch = 0;

  // Options are given per call (with a summary for the Web UI): evaluations never retry, webhooks do.
  const activities = proxyActivities<WardenActivities>({ startToCloseTimeout: spec.supervisor.evalTimeoutMs, retry: { maximumAttempts: 1 } });

  // ---------- state, whispers, visibility ----------

  const now = () => Date.now();
  const paused = () => s.state === 'paused-by-user' || s.state === 'awaiting-input';

  function fire(event: AgentEvent, cause: string): boolean {
    const r = transition(s.state, event);
    if (!r.ok) {
      s.refused = keepLast(s.refused, { what: event, reason: r.reason, at: iso(now()) });
      log.warn('refused event', { agentId: spec.agentId, event, state: s.state, reason: r.reason });
      return false;
    }
    if (r.to !== s.state) {
      s.transitions = keepLast(s.transitions, { from: s.state, to: r.to, event, cause, at: iso(now()) });
    }
    s.state = r.to;
    s.stateReason = cause;
    publish();
    return true;
  }

  function queueWhisper(type: WhisperType, text: string): Whisper {
    s.whisperSeq += 1;
    const w: Whisper = { id: `${spec.agentId}-w${s.whisperSeq}`, type, text, createdAt: iso(now()) };
    s.pendingWhispers.push(w);
    publish();
    return w;
  }

  let published = { state: '', step: -1, paused: false, details: '', spendBucket: 0 };
  function publish(): void {
    const details = [
      `**state** ${s.state}${s.stateReason ? ` (${s.stateReason})` : ''}`,
      `**escalation step** ${s.ladder.step}/${threshold}`,
      `**last verdict** ${s.lastVerdict ? formatVerdict(s.lastVerdict) : '—'}`,
      `**turns** ${s.turns} · **evaluations** ${s.evaluations.total} (${s.evaluations.flagged} flagged, ${s.evaluations.skipped} skipped)`,
      `**whispers pending** ${s.pendingWhispers.length} · delivered ${s.whispersDelivered}`,
      `**tokens** ${s.tokensIn + s.tokensOut} · **cost** $${s.costUsd.toFixed(4)}`,
    ].join('\n');
    if (details !== published.details) setCurrentDetails(details);
    // Spend is published with every state change and every SPEND_EVERY turns (bounded history).
    const spendBucket = Math.floor(s.turns / SPEND_EVERY);
    const changed = published.state !== s.state || published.step !== s.ladder.step || published.paused !== paused();
    if (spec.searchAttributes && (changed || published.spendBucket !== spendBucket)) {
      // Histories from before spend was published keep replaying without these upserts.
      const withSpend = patched('spend-search-attributes');
      if (changed || withSpend) {
        upsertSearchAttributes([
          { key: WardenState, value: s.state },
          { key: WardenEscalationStep, value: s.ladder.step },
          { key: WardenPaused, value: paused() },
          ...(spec.parent ? [{ key: WardenParent, value: spec.parent.agentId }] : []),
          ...(withSpend
            ? [
                { key: WardenCostUsd, value: Math.round(s.costUsd * 1e6) / 1e6 },
                { key: WardenTokens, value: s.tokensIn + s.tokensOut },
              ]
            : []),
        ]);
      }
    }
    published = { state: s.state, step: s.ladder.step, paused: paused(), details, spendBucket };
  }

  function status(): AgentStatus {
    return {
      agentId: spec.agentId,
      state: s.state,
      stateReason: s.stateReason,
      paused: paused(),
      pauseReason: paused() ? s.pauseReason : null,
      escalationStep: s.ladder.step,
      escalationThreshold: threshold,
      escalations: s.ladder.escalations,
      turns: s.turns,
      evaluations: { ...s.evaluations },
      lastVerdict: s.lastVerdict,
      lastSkipReason: s.lastSkipReason,
      pendingWhispers: s.pendingWhispers.length,
      whispersDelivered: s.whispersDelivered,
      tokens: { in: s.tokensIn, out: s.tokensOut, total: s.tokensIn + s.tokensOut },
      costUsd: s.costUsd,
      lastTurnAt: s.lastTurnAt === null ? null : iso(s.lastTurnAt),
      lastHeartbeatAt: s.lastHeartbeatAt === null ? null : iso(s.lastHeartbeatAt),
      stopRequested: s.stopDeadline !== null,
      transitions: s.transitions,
      refused: s.refused,
      invalidSignals: s.invalidSignals,
      runs: s.runs,
      driver: driver?.kind ?? null,
      turnRunning: turnScope !== null,
      budgets: budgetReport(spec.budgets, spend()),
      restarts: s.failures.length,
      generation: s.generation,
      parent: spec.parent?.agentId ?? null,
      children: s.children.map((c) => ({ agentId: c.agentId, state: c.state, reason: c.reason })),
      toolAllowlist: spec.contract?.toolAllowlist ?? [],
      result: s.result,
    };
  }

  // ---------- the supervision cycle ----------

  function escalate(verdict: Verdict, text: string): void {
    queueWhisper('ESCALATION', text);
    s.awaitingCause = 'escalation';
    s.pauseReason = `escalated: ${verdict.pattern ?? verdict.kind} — ${verdict.message}`;
    s.evalQueue = [];
    fire('escalate', s.pauseReason);
    log.warn('agent escalated to humans', {
      event: 'escalation',
      agentId: spec.agentId,
      step: s.ladder.step,
      verdict: formatVerdict(verdict),
      channels: spec.notify.webhooks.length,
    });
    notify({ event: 'escalation', verdict, whisper: text, reason: s.pauseReason });
  }

  /** Every configured channel hears about it: a webhook activity each (retried), and the log line. */
  function notify(e: Pick<NotificationEvent, 'event' | 'verdict' | 'whisper' | 'reason'>): void {
    const info = workflowInfo();
    const event: NotificationEvent = {
      agentId: spec.agentId,
      workflowId: info.workflowId,
      runId: info.runId,
      task: spec.task,
      step: s.ladder.step,
      at: iso(now()),
      ...e,
    };
    if (e.event !== 'escalation') log.warn(`agent ${e.event}`, { event: e.event, agentId: spec.agentId, reason: e.reason, channels: spec.notify.webhooks.length });
    for (const channel of spec.notify.webhooks) {
      pendingNotifications += 1;
      activities.notifyWebhook
        .executeWithOptions(
          {
            ...WEBHOOK_ACTIVITY_OPTIONS,
            summary: `${e.event} webhook → ${channel.url.replace(/^https?:\/\/([^/?#]+).*$/, '$1')}`,
          },
          [{ channel, event }],
        )
        .catch((err: unknown) => {
          log.error('webhook notification failed after retries', { agentId: spec.agentId, url: channel.url, error: String(err) });
        })
        .finally(() => {
          pendingNotifications -= 1;
        });
    }
  }

  /** Budgets are hard ceilings: reaching one stops the agent (the reason says which) and notifies. */
  function enforceBudgets(): boolean {
    if (isTerminal(s.state) || s.state === 'cancelling') return false;
    const hit = exhaustedBudget(spec.budgets, spend());
    if (!hit) return false;
    if (fire('stop', hit.reason)) {
      s.stopReason = hit.reason;
      s.stopDeadline = now();
      s.drained = true; // nothing to wait for: no new turn may start
      s.evalQueue = [];
      turnScope?.cancel();
      stopChildren(hit.reason);
      notify({ event: 'budget-exhausted', reason: hit.reason });
    }
    return true;
  }

  function spend(): Spend {
    // A parent's budget covers its whole subtree.
    const sub = Object.values(s.childSpend);
    return {
      tokens: s.tokensIn + s.tokensOut + sub.reduce((a, c) => a + c.tokens, 0),
      costUsd: s.costUsd + sub.reduce((a, c) => a + c.costUsd, 0),
      turns: s.turns,
      wallClockMs: now() - s.startedAt,
    };
  }

  function applyResult(result: EvaluateResult, startedEpoch: number): void {
    s.evaluations.total += 1;
    if (result.kind === 'skipped' || startedEpoch !== epoch || s.state !== 'running') {
      s.evaluations.skipped += 1;
      s.lastSkipReason = result.kind === 'skipped' ? result.reason : `superseded: the agent became ${s.state} during the evaluation`;
      publish();
      return;
    }
    const verdict = result.verdict;
    s.lastVerdict = { ...verdict, at: iso(now()) };
    if (verdict.kind === 'OK') s.evaluations.ok += 1;
    else s.evaluations.flagged += 1;
    const { state: ladder, action } = applyOutcome(s.ladder, { kind: 'verdict', verdict }, threshold);
    s.ladder = ladder;
    switch (action.kind) {
      case 'whisper':
        queueWhisper(action.type, action.text);
        break;
      case 'escalate':
        escalate(verdict, action.text);
        break;
      default:
        publish();
    }
  }

  async function runEvaluation(job: EvalJob): Promise<void> {
    evaluating = true;
    const startedEpoch = epoch;
    let result: EvaluateResult;
    try {
      result = await activities.evaluate.executeWithOptions(
        {
          startToCloseTimeout: spec.supervisor.evalTimeoutMs,
          retry: { maximumAttempts: 1 },
          summary: `${job.reason} evaluation of ${job.turns.length} turns by ${spec.evaluator.kind}`,
        },
        [
          {
            agentId: spec.agentId,
            task: spec.task,
            turns: job.turns,
            reason: job.reason,
            idleMs: job.idleMs,
            evaluator: spec.evaluator,
            model: spec.supervisor.model,
            timeoutMs: spec.supervisor.evalTimeoutMs,
          },
        ],
      );
    } catch (err) {
      // Timeout, worker crash or activity error: the evaluation is skipped, never a verdict.
      const cause = err instanceof Error ? ((err as { cause?: Error }).cause?.message ?? err.message) : String(err);
      result = { kind: 'skipped', reason: `evaluation activity failed: ${cause}`, evaluator: spec.evaluator.kind, durationMs: 0 };
    } finally {
      evaluating = false;
    }
    applyResult(result, startedEpoch);
  }

  // ---------- handlers ----------

  function onSignal<N extends SignalName>(name: N, apply: (payload: z.output<(typeof SIGNAL_SCHEMAS)[N]>) => void) {
    return (raw?: unknown) => {
      const r = SIGNAL_SCHEMAS[name].safeParse(raw ?? {});
      if (!r.success) {
        // Recorded and ignored: a throwing handler would wedge the workflow.
        s.invalidSignals += 1;
        const reason = `invalid ${name} payload: ${describeZodError(r.error)}`;
        s.refused = keepLast(s.refused, { what: name, reason, at: iso(now()) });
        log.warn('invalid signal ignored', { agentId: spec.agentId, signal: name, reason });
        return;
      }
      apply(r.data as z.output<(typeof SIGNAL_SCHEMAS)[N]>);
    };
  }

  function refuse(what: string, reason: string): void {
    s.refused = keepLast(s.refused, { what, reason, at: iso(now()) });
    log.warn('refused signal', { agentId: spec.agentId, signal: what, reason });
  }

  setHandler(
    m.steerSignal,
    onSignal('steer', (p) => {
      if (isTerminal(s.state)) return refuse('steer', `agent is ${s.state}`);
      if (!p.text) return refuse('steer', 'text: steering needs text');
      queueWhisper('STEERING', p.text);
      if (s.state === 'awaiting-input' && s.awaitingCause === 'interrupt') {
        epoch += 1;
        s.awaitingCause = null;
        s.pauseReason = null;
        fire('input', 'steered after an interrupt');
      }
    }),
  );
  setHandler(
    m.interruptSignal,
    onSignal('interrupt', (p) => {
      if (fire('interrupt', p.reason ?? 'interrupted by a human')) {
        epoch += 1;
        turnScope?.cancel(); // driven: abandon the running turn; the session is kept
        s.interruptPending = true;
        s.awaitingCause = 'interrupt';
        s.pauseReason = p.reason ?? 'interrupted: waiting for input';
        s.evalQueue = [];
        publish();
      }
    }),
  );
  setHandler(
    m.stopSignal,
    onSignal('stop', (p) => {
      if (fire('stop', p.reason ?? 'stop requested')) {
        epoch += 1;
        s.stopReason = p.reason ?? 'stop requested';
        s.stopDeadline = now() + (p.drainTimeoutMs ?? DEFAULT_DRAIN_MS);
        s.evalQueue = [];
      }
    }),
  );
  setHandler(
    m.pauseSignal,
    onSignal('pause', (p) => {
      if (fire('pause', p.reason ?? 'paused by a human')) {
        epoch += 1;
        s.pauseReason = p.reason ?? 'paused by a human';
        s.evalQueue = [];
        publish();
      }
    }),
  );
  setHandler(
    m.resumeSignal,
    onSignal('resume', (p) => {
      if (fire('resume', p.note ? `resumed: ${p.note}` : 'resumed by a human')) {
        epoch += 1;
        s.ladder = resetLadder(s.ladder);
        // The human has judged what came before: later evaluations look only at turns after this.
        s.window = [];
        s.awaitingCause = null;
        s.pauseReason = null;
        s.turnsSinceEval = 0;
        s.evalQueue = [];
        s.idleChecked = false;
        publish();
      }
    }),
  );
  setHandler(
    m.abortSignal,
    onSignal('abort', (p) => {
      if (fire('abort', `aborted: ${p.reason ?? 'by a human'}`)) {
        epoch += 1;
        turnScope?.cancel(); // driven: end the running turn now (the process still gets its grace period)
        s.evalQueue = [];
      }
    }),
  );
  setHandler(
    m.heartbeatSignal,
    onSignal('heartbeat', (p) => {
      if (p.generation !== undefined) {
        if (p.generation < s.generation) return refuse('heartbeat', `stale generation ${p.generation} < ${s.generation}`);
        s.generation = p.generation;
      }
      s.lastHeartbeatAt = now();
      if (s.state === 'spawning') fire('started', 'first heartbeat');
    }),
  );

  setHandler(
    m.reportTurnUpdate,
    (input) => {
      const r = TurnSchema.safeParse(input);
      const turn = r.data as Turn;
      s.lastTurnAt = now();
      s.idleChecked = false;
      if (turn.generation !== undefined) {
        if (turn.generation < s.generation) return { ...reply(false, false, []), stale: true };
        s.generation = turn.generation;
      }
      if (turn.id !== undefined && s.recentIds.includes(turn.id)) {
        const earlier = s.deliveries.find((d) => d.turnId === turn.id);
        return reply(false, true, earlier?.whispers ?? []);
      }
      if (s.state === 'spawning') fire('started', 'first turn reported');
      recordTurn(turn);
      enforceBudgets(); // before the agent's next turn: the reply says stop
      const whispers = s.pendingWhispers;
      s.pendingWhispers = [];
      s.whispersDelivered += whispers.length;
      if (turn.id !== undefined && whispers.length > 0) {
        s.deliveries = keepLast(s.deliveries, { turnId: turn.id, whispers }, KEEP_DELIVERIES);
      }
      publish();
      return reply(true, false, whispers);
    },
    {
      validator: (input) => {
        // Synchronous: throwing here rejects the update before it enters history.
        const r = TurnSchema.safeParse(input);
        if (!r.success) throw new Error(`invalid turn: ${describeZodError(r.error)}`);
        if (isTerminal(s.state)) throw new Error(`agent ${spec.agentId} is ${s.state}; it takes no more turns`);
        if (driver) throw new Error(`agent ${spec.agentId} is driven by warden (driver ${driver.kind}); it takes no reported turns`);
      },
    },
  );

  /** A turn happened (reported, or run by the driver): count it, window it, maybe schedule an evaluation. */
  function recordTurn(turn: Turn): void {
    if (turn.id !== undefined) s.recentIds = rememberId(s.recentIds, turn.id);
    s.turns += 1;
    s.tokensIn += turn.tokensIn ?? 0;
    s.tokensOut += turn.tokensOut ?? 0;
    s.costUsd += turn.costUsd ?? 0;
    s.window = pushWindow(s.window, turn, spec.supervisor.windowSize);
    if (s.state === 'cancelling') s.drained = true;
    if (spec.parent) {
      const total = spend();
      const parentId = spec.parent.workflowId;
      signalAgent(parentId, () =>
        getExternalWorkflowHandle(parentId).signal(m.childSpendSignal, { agentId: spec.agentId, tokens: total.tokens, costUsd: total.costUsd, turns: total.turns }),
      );
    }
    if (s.state === 'running') {
      s.turnsSinceEval += 1;
      if (evaluationDue(s.turnsSinceEval, spec.supervisor.evalInterval)) {
        s.turnsSinceEval = 0;
        s.evalQueue.push({ reason: 'interval', turns: [...s.window] });
      }
    }
  }

  function reply(accepted: boolean, duplicate: boolean, whispers: Whisper[]): ReportTurnResult {
    const interrupt = s.interruptPending;
    if (accepted) s.interruptPending = false;
    return { accepted, duplicate, whispers, paused: paused(), stop: s.state === 'cancelling', interrupt, state: s.state };
  }

  setHandler(m.statusQuery, () => status());
  setHandler(m.pendingWhispersQuery, () => [...s.pendingWhispers]);
  setHandler(m.windowQuery, () => [...s.window]);

  // ---------- delegation (seed 002's parent–child contract) ----------

  const liveChildren = () => s.children.filter((c) => c.state === 'running').length;
  const openChildren = () => s.children.filter((c) => c.state === 'running' || c.state === 'queued').length;

  /** Admit queued children while the mode's concurrency cap allows. */
  function admitNext(): void {
    const cap = DELEGATION_CAPS[spec.delegation.mode];
    for (const c of s.children) {
      if (liveChildren() >= cap) break;
      if (c.state !== 'queued') continue;
      c.state = 'running';
      signalAgent(c.workflowId, () => getExternalWorkflowHandle(c.workflowId).signal(m.admitSignal, {}));
    }
  }

  /** Signals to other agents still in flight; the workflow does not end before they are delivered. */
  let pendingSignals = 0;
  function signalAgent(workflowId: string, send: () => Promise<void>): void {
    pendingSignals += 1;
    void send()
      .catch((err: unknown) => log.warn('signal to another agent failed', { agentId: spec.agentId, to: workflowId, error: String(err) }))
      .finally(() => (pendingSignals -= 1));
  }

  /** The subtree goes with its parent: every open child is asked to stop (it drains with its grace period). */
  function stopChildren(reason: string): void {
    for (const c of s.children) {
      if ((c.state !== 'running' && c.state !== 'queued') || c.stopSent) continue;
      c.stopSent = true;
      signalAgent(c.workflowId, () =>
        getExternalWorkflowHandle(c.workflowId).signal(m.stopSignal, { reason: `parent ${spec.agentId}: ${reason}`, drainTimeoutMs: 0 }),
      );
    }
  }

  setHandler(
    m.delegateUpdate,
    async (input) => {
      const t = TaskSpecSchema.parse(input);
      const childAgentId = `${spec.agentId}.${t.childId}`;
      const queued = liveChildren() >= DELEGATION_CAPS[spec.delegation.mode];
      const rec: ChildRecord = { agentId: childAgentId, workflowId: `agent-${childAgentId}`, state: queued ? 'queued' : 'running', reason: null };
      s.children.push(rec);
      const marker = t.driven?.doneMarker ?? spec.driven.doneMarker;
      const child: AgentSpecInput = {
        agentId: childAgentId,
        task: [
          t.objective,
          `Definition of done: ${t.definitionOfDone}`,
          `When you are done, start your final message with "${marker}" followed by your result as JSON matching this schema:\n${JSON.stringify(t.resultSchema)}`,
        ].join('\n\n'),
        driver: t.driver,
        driven: { ...t.driven },
        budgets: t.budgets,
        supervisor: spec.supervisor,
        evaluator: spec.evaluator,
        notify: spec.notify,
        searchAttributes: spec.searchAttributes,
        delegation: spec.delegation,
        parent: { agentId: spec.agentId, workflowId: workflowInfo().workflowId, depth: (spec.parent?.depth ?? 0) + 1 },
        contract: { resultSchema: t.resultSchema, toolAllowlist: t.toolAllowlist, definitionOfDone: t.definitionOfDone },
        startQueued: queued,
      };
      const handle = await startChild(agentWorkflow, {
        workflowId: rec.workflowId,
        args: [child],
        // The parent stops its subtree itself, with a drain; an abandoned child still finishes cleanly.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        staticSummary: `Delegated by ${spec.agentId}: ${t.objective.split('\n')[0]!.slice(0, 160)}`,
      });
      handle.result().then(
        (st) => {
          rec.state = st.state === 'done' ? 'done' : 'failed';
          rec.reason = st.stateReason;
          admitNext();
          publish();
        },
        (err: unknown) => {
          rec.state = 'failed';
          rec.reason = err instanceof Error ? err.message : String(err);
          admitNext();
          publish();
        },
      );
      publish();
      return { childAgentId, workflowId: rec.workflowId, queued };
    },
    {
      validator: (input) => {
        const r = TaskSpecSchema.safeParse(input);
        if (!r.success) throw new Error(`invalid task spec: ${describeZodError(r.error)}`);
        if (isTerminal(s.state) || s.state === 'cancelling') throw new Error(`agent ${spec.agentId} is ${s.state}; it cannot delegate`);
        const depth = spec.parent?.depth ?? 0;
        if (depth >= spec.delegation.maxDepth) {
          throw new Error(`spawn depth: agent ${spec.agentId} runs at depth ${depth} (max ${spec.delegation.maxDepth}); it may not delegate`);
        }
        if (DELEGATION_CAPS[spec.delegation.mode] === 0) throw new Error(`mode solo: agent ${spec.agentId} may not delegate`);
        if (s.children.some((c) => c.agentId === `${spec.agentId}.${r.data.childId}`)) throw new Error(`childId ${r.data.childId} is already used`);
      },
    },
  );

  setHandler(
    m.admitSignal,
    onSignal('admit', () => {
      s.admitted = true;
    }),
  );
  setHandler(
    m.childSpendSignal,
    onSignal('childSpend', (p) => {
      if (!p.agentId || !s.children.some((c) => c.agentId === p.agentId)) return refuse('childSpend', `unknown child ${p.agentId}`);
      s.childSpend[p.agentId] = { tokens: p.tokens ?? 0, costUsd: p.costUsd ?? 0, turns: p.turns ?? 0 };
      enforceBudgets();
      publish();
    }),
  );

  /**
   * A child's tool allowlist, for tool calls warden only sees after the fact (driven codex/command
   * turns; hooks and the claude driver refuse them before they run): each one is recorded as
   * refused and the agent gets a correction naming the tools it may use.
   */
  function enforceAllowlist(turn: Turn): void {
    const allowed = spec.contract?.toolAllowlist ?? [];
    if (allowed.length === 0) return;
    const outside = [...new Set((turn.toolCalls ?? []).map((c) => c.name).filter((n) => !allowed.includes(n)))];
    if (outside.length === 0) return;
    const reason = `tool call outside the allowlist: ${outside.join(', ')} (allowed: ${allowed.join(', ')})`;
    s.refused = keepLast(s.refused, { what: 'tool', reason, at: iso(now()) });
    queueWhisper('CORRECTION', `Your contract allows only these tools: ${allowed.join(', ')}. Do not use ${outside.join(', ')}.`);
  }

  /** A driven agent says it is done: a child's result is checked against its contract first. */
  async function complete(result: TurnResult): Promise<void> {
    if (spec.contract || result.result !== undefined) {
      let check: CheckResultOutput;
      try {
        check = await activities.checkResult.executeWithOptions(
          { startToCloseTimeout: '30s', retry: { maximumAttempts: 3 }, summary: `check the result of ${spec.agentId}` },
          [{ agentId: spec.agentId, result: result.result, schema: spec.contract?.resultSchema }],
        );
      } catch (err) {
        check = { ok: false, errors: `could not check the result: ${err instanceof Error ? err.message : String(err)}` };
      }
      if (!check.ok) {
        fire('fail', `result does not match its schema: ${check.errors}`);
        return;
      }
      s.result = check.ref ? { ref: check.ref } : { inline: check.inline };
    }
    fire('complete', `the agent reported the task complete after ${s.turns} turns`);
  }

  // ---------- driven mode: warden runs the agent's turns ----------

  async function runDrivenTurn(d: DriverConfig): Promise<void> {
    let whispers: Whisper[];
    if (s.retryWhispers) {
      whispers = s.retryWhispers; // a retried turn: exactly the input of the failed attempt
      s.retryWhispers = null;
    } else {
      whispers = s.pendingWhispers;
      s.pendingWhispers = [];
      s.whispersDelivered += whispers.length;
    }
    const turnNumber = s.turns + 1;
    const scope = new CancellationScope();
    turnScope = scope;
    publish();
    let settled = false;
    // Failed turns are retried by the workflow, which counts them (restart intensity); histories
    // from before this let the activity retry on its own.
    const countRestarts = patched('turn-restart-intensity');
    const running = scope.run(() =>
      activities.runTurn.executeWithOptions(
        {
          startToCloseTimeout: spec.driven.turnTimeoutMs,
          heartbeatTimeout: spec.driven.heartbeatTimeoutMs,
          cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
          retry: countRestarts
            ? { maximumAttempts: 1 }
            : { initialInterval: '1s', maximumAttempts: 3, nonRetryableErrorTypes: ['TurnProtocolError'] },
          summary: `turn ${turnNumber} of ${spec.agentId} (${d.kind})${whispers.length ? `, delivering ${whispers.length} whisper(s)` : ''}`,
        },
        [
          {
            agentId: spec.agentId,
            task: spec.task,
            turnNumber,
            input: turnInput({ task: spec.task, turnNumber, whispers, doneMarker: spec.driven.doneMarker }),
            whispers,
            session: s.session,
            driver: d,
            workDir: spec.driven.workDir,
            killGraceMs: spec.driven.killGraceMs,
            doneMarker: spec.driven.doneMarker,
            ...(spec.contract?.toolAllowlist.length ? { toolAllowlist: spec.contract.toolAllowlist } : {}),
          },
        ],
      ),
    );
    running.then(
      () => (settled = true),
      () => (settled = true),
    );
    // A stop drains: the turn may finish until the drain deadline; after that it is cancelled.
    while (!settled) {
      if (s.state === 'cancelling' && s.stopDeadline !== null) {
        const finished = await condition(() => settled, Math.max(1, s.stopDeadline - now()));
        if (!finished) {
          s.drainTimedOut = true;
          scope.cancel();
        }
        break;
      }
      await condition(() => settled || s.state === 'cancelling');
    }
    let result: TurnResult | null = null;
    try {
      result = await running;
    } catch (err) {
      if (isCancellation(err)) {
        const details = (err as { cause?: { details?: unknown[] } }).cause?.details;
        result = (details?.[0] as TurnResult | undefined) ?? null;
      } else {
        const inner = (err as { cause?: { message?: string; type?: string; nonRetryable?: boolean } }).cause;
        const cause = inner?.message ?? (err instanceof Error ? err.message : String(err));
        turnScope = null;
        if (!countRestarts || (inner?.nonRetryable && inner.type === 'TurnProtocolError')) {
          fire('fail', `turn ${turnNumber} failed: ${cause}`);
          return;
        }
        // Restart intensity (OTP): retry the turn, unless too many failed within the window.
        s.retryWhispers = whispers; // the retry gets the same input; nothing queued is lost or doubled
        const r = recordFailure(s.failures, now(), spec.safety.maxRestarts, spec.safety.restartWindowMs);
        s.failures = r.failures;
        if (r.open) {
          const reason = `circuit open: ${r.failures.length} failed turns within ${Math.round(spec.safety.restartWindowMs / 1000)} s (max ${spec.safety.maxRestarts}); last: ${cause}`;
          if (fire('fail', reason)) notify({ event: 'circuit-open', reason });
        } else {
          log.warn('turn failed; retrying', { agentId: spec.agentId, turn: turnNumber, failures: r.failures.length, cause });
          publish();
          // Back off before the retry (1 s, 2 s, 4 s …), unless a human steps in meanwhile.
          await condition(() => s.state !== 'running', Math.min(30_000, 1_000 * 2 ** (r.failures.length - 1)));
        }
        return;
      }
    } finally {
      turnScope = null;
    }
    if (result) {
      recordTurn({ ...result.turn, id: result.turn.id ?? `${spec.agentId}-turn-${turnNumber}` });
      if (result.session) s.session = result.session;
      enforceAllowlist(result.turn);
    }
    if (s.state !== 'running') {
      publish(); // interrupted, stopped or aborted meanwhile: the signal handlers set the state
      return;
    }
    if (result?.done) await complete(result);
    else if (s.turns >= spec.driven.maxTurns && fire('stop', `max turns (${spec.driven.maxTurns}) reached`)) {
      s.stopReason = `max turns (${spec.driven.maxTurns}) reached`;
      s.drained = true;
    } else publish();
  }

  // ---------- the main loop ----------

  publish();
  const idleAfter = spec.supervisor.idleAfterMs;
  const shouldContinueAsNew = () =>
    // Not while children are open: their results are awaited by this run.
    openChildren() === 0 && (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= MAX_HISTORY_EVENTS);
  const canEvaluate = () => s.state === 'running' && !evaluating;

  while (!isTerminal(s.state)) {
    if (s.state === 'queued') {
      await condition(() => s.admitted || s.state !== 'queued');
      if (s.state === 'queued') fire('slot-granted', 'its parent admitted it');
      continue;
    }
    if (s.state === 'cancelling') {
      if (driver) {
        // No turn is running here: the drain already happened in runDrivenTurn.
        fire('drained', s.drainTimedOut ? `stopped after drain timeout: ${s.stopReason}` : `stopped: ${s.stopReason}`);
        break;
      }
      // Graceful drain: wait for the agent to reach a turn boundary, at most until the deadline.
      const remaining = Math.max(0, (s.stopDeadline ?? now()) - now());
      const reached = await condition(() => s.drained || isTerminal(s.state), remaining);
      if (!isTerminal(s.state)) fire('drained', reached ? `stopped: ${s.stopReason}` : `stopped after drain timeout: ${s.stopReason}`);
      break;
    }
    if (s.evalQueue.length > 0 && canEvaluate()) {
      await runEvaluation(s.evalQueue.shift()!);
      continue;
    }
    if (shouldContinueAsNew()) {
      await condition(() => allHandlersFinished() && pendingNotifications === 0 && pendingSignals === 0);
      log.info('continuing as new', { agentId: spec.agentId, historyLength: workflowInfo().historyLength });
      return await continueAsNew<typeof agentWorkflow>(specInput, { ...s });
    }
    if (driver) {
      if (s.state === 'spawning') fire('started', `driven by warden (${driver.kind})`);
      if (s.state === 'running') {
        if (enforceBudgets()) continue; // hard ceilings, before every turn
        await runDrivenTurn(driver);
        continue;
      }
      // Paused, escalated or interrupted: no new turn starts until a human lets it.
      await condition(() => isTerminal(s.state) || s.state === 'running' || s.state === 'cancelling' || shouldContinueAsNew());
      continue;
    }
    const idleArmed = () => idleAfter > 0 && s.state === 'running' && !s.idleChecked;
    const armedNow = idleArmed();
    // Histories recorded before this patch waited without re-arming the idle timer when the
    // agent started running; they keep replaying that way.
    const rearmIdle = patched('idle-timer-rearms');
    const wake = () =>
      isTerminal(s.state) ||
      s.state === 'cancelling' ||
      (s.evalQueue.length > 0 && canEvaluate()) ||
      shouldContinueAsNew() ||
      (rearmIdle && idleArmed() !== armedNow); // (re)arm or disarm the idle timer
    const hb = spec.safety.heartbeatIntervalMs;
    if (hb !== undefined && ORPHANABLE.includes(s.state)) {
      // Heartbeat-based orphan detection: silence for twice the interval makes the agent orphaned (loud).
      const lastSeen = Math.max(s.lastTurnAt ?? 0, s.lastHeartbeatAt ?? 0, s.startedAt);
      const orphanAt = lastSeen + 2 * hb;
      if (now() >= orphanAt) {
        const reason = `no heartbeat for ${Math.round((now() - lastSeen) / 1000)} s (expected every ${Math.round(hb / 1000)} s)`;
        if (fire('heartbeat-lost', reason)) notify({ event: 'orphaned', reason });
        continue;
      }
      const idleAt = armedNow ? (s.lastTurnAt ?? s.lastHeartbeatAt ?? now()) + idleAfter : Infinity;
      const woke = await condition(wake, Math.max(1, Math.min(orphanAt, idleAt) - now()));
      const idleFor = now() - (s.lastTurnAt ?? s.lastHeartbeatAt ?? now());
      if (!woke && armedNow && s.state === 'running' && !s.idleChecked && idleFor >= idleAfter) {
        s.idleChecked = true;
        s.evalQueue.push({ reason: 'idle', turns: [...s.window], idleMs: idleFor });
      }
      continue;
    }
    if (!armedNow) {
      await condition(wake);
      continue;
    }
    const since = s.lastTurnAt ?? s.lastHeartbeatAt ?? now();
    const woke = await condition(wake, Math.max(1, since + idleAfter - now()));
    const idleFor = now() - (s.lastTurnAt ?? s.lastHeartbeatAt ?? now());
    if (!woke && s.state === 'running' && !s.idleChecked && idleFor >= idleAfter) {
      s.idleChecked = true;
      s.evalQueue.push({ reason: 'idle', turns: [...s.window], idleMs: idleFor });
    }
  }

  stopChildren(`it ended ${s.state}`);
  await condition(() => allHandlersFinished() && pendingNotifications === 0 && pendingSignals === 0);
  publish();
  return status();
}
