/**
 * What the world sees of an agent: the status query, the Web UI's current-details text, and the
 * search attribute values. `commit` sends only what changed: details on every change, search
 * attributes on a state/step/pause change and, for spend, every SPEND_EVERY turns but at most once
 * per SPEND_INTERVAL_MS (five minutes); an agent with labels, at any turn but at most once per
 * safety.groupReportIntervalMs (30 s), for its groups' counters (spendCadence).
 */
import { budgetReport, effectiveBudgets } from './budgets.js';
import {
  LATER_SEARCH_ATTRIBUTES,
  WardenCostUsd,
  WardenEscalationStep,
  WardenEvaluatorCostUsd,
  WardenParent,
  WardenPaused,
  WardenState,
  WardenTokens,
} from '../contract/search-attributes.js';
import type { AgentStatus } from '../contract/status.js';
import { GROUP_REPORT_INTERVAL_MS, type AgentSpec } from '../contract/schemas.js';
import { formatVerdict } from '../judgement/verdict-text.js';
import { formatEvaluatorSpend, supervisionRate } from '../judgement/tiered.js';
import { treeStreak, treeView } from '../judgement/tree.js';
import type { AgentContext, SearchAttributeUpdate } from './context.js';
import { sessionEndDeadline } from './session-end-state.js';
import { holdDeadline } from './hold-state.js';
import { SPEND_BUCKET_MS, isPaused, iso, spendOf, type AgentCore, type CarriedView } from './state.js';
import { flushTelemetry } from './telemetry.js';

/** Publish spend as search attributes at most every this many turns (bounded history). */
export const SPEND_EVERY = 5;
/**
 * And no more often than this. Each upsert is an
 * event and a visibility write: at every 5 turns a busy fleet spent ~1.5 ms of server CPU per turn
 * on them, and at one turn per 20 s the minute never held one back, so every evaluation turn carried
 * one (docs/operating/capacity.md). Spend in visibility (fleet lists, `warden top`'s rows off screen) is then
 * at most five minutes or 5 turns old; a state change publishes it at once, and the status query
 * and the budgets always use the exact figures.
 */
export const SPEND_INTERVAL_MS = 5 * 60_000;

/**
 * How often spend is published: every `every` turns, at most once per `intervalMs` (and at once
 * with a state change). An agent with labels is read by its groups' counters, which poll
 * visibility: every turn, at most once per safety.groupReportIntervalMs (default 30 s), so a
 * group's cap holds within about one publication plus one poll. Without labels: unchanged.
 */
export function spendCadence(spec: Pick<AgentSpec, 'labels' | 'safety'>): { every: number; intervalMs: number; grouped: boolean } {
  if (!spec.labels || Object.keys(spec.labels).length === 0) return { every: SPEND_EVERY, intervalMs: SPEND_INTERVAL_MS, grouped: false };
  return { every: 1, intervalMs: spec.safety.groupReportIntervalMs ?? GROUP_REPORT_INTERVAL_MS, grouped: true };
}

/** The Web UI's "current details" of the agent (markdown). */
export function detailsText(core: AgentCore): string {
  const { s, threshold } = core;
  return [
    `**state** ${s.state}${s.stateReason ? ` (${s.stateReason})` : ''}`,
    `**escalation step** ${s.ladder.step}/${threshold}`,
    `**last verdict** ${s.lastVerdict ? formatVerdict(s.lastVerdict) : '—'}`,
    `**turns** ${s.turns} · **evaluations** ${s.evaluations.total} (${s.evaluations.flagged} flagged, ${s.evaluations.skipped} skipped)`,
    `**whispers pending** ${s.pendingWhispers.length} · delivered ${s.whispersDelivered}`,
    `**tokens** ${s.tokensIn + s.tokensOut} · **cost** $${s.costUsd.toFixed(4)}`,
    ...(s.dismissals > 0 ? [`**dismissed as false alarms** ${s.dismissals} (${s.suppressed} repeat${s.suppressed === 1 ? '' : 's'} not counted)`] : []),
    // The evaluator's own model spend, apart from the agent's (only for evaluators that call a model).
    ...(core.spec.evaluator.kind !== 'heuristic' || s.evaluatorSpend.calls > 0 ? [`**evaluator spend** ${formatEvaluatorSpend(s.evaluatorSpend)}`] : []),
  ].join('\n');
}

/** The status's `tree`: the working tree as the window's newest fingerprint shows it (nothing when no turn carries one). */
function treeStatus(window: AgentCore['s']['window']): Pick<AgentStatus, 'tree'> {
  const t = treeStreak(window);
  return t ? { tree: treeView(t) } : {};
}

/** The search attribute values. */
export function searchAttributeValues(core: AgentCore): SearchAttributeUpdate[] {
  const { s, spec } = core;
  return [
    { key: WardenState, value: s.state },
    { key: WardenEscalationStep, value: s.ladder.step },
    { key: WardenPaused, value: isPaused(s) },
    ...(spec.parent ? [{ key: WardenParent, value: spec.parent.agentId }] : []),
    // Its own turns and what its CLI's sub-agents spent (a delegated child publishes its own).
    { key: WardenCostUsd, value: Math.round((s.costUsd + s.subagentSpend.costUsd) * 1e6) / 1e6 },
    { key: WardenTokens, value: s.tokensIn + s.tokensOut + s.subagentSpend.tokensIn + s.subagentSpend.tokensOut },
    { key: WardenEvaluatorCostUsd, value: Math.round(s.evaluatorSpend.costUsd * 1e6) / 1e6 },
  ].filter((a) => !LATER_SEARCH_ATTRIBUTES.includes(a.key.name) || core.run.laterAttributes.includes(a.key.name));
}

/**
 * The one commit point: send what changed since the last commit. Only the workflow shell calls it
 * (workflows/agent.ts at the end of every signal and update handler, workflows/loop.ts once per
 * main-loop step and before every wait inside a step); the core's rules change state and never
 * publish (test/unit/commit-point.test.ts).
 */
export function commit(ctx: AgentContext): void {
  const { core, ports } = ctx;
  const { s, spec, run } = core;
  const details = detailsText(core);
  if (details !== run.published.details) ports.setDetails(details);
  const cadence = spendCadence(spec);
  const spendBucket = Math.floor(s.turns / cadence.every);
  const paused = isPaused(s);
  const changed = run.published.state !== s.state || run.published.step !== s.ladder.step || run.published.paused !== paused;
  const now = ports.now();
  let { spendBucket: publishedBucket, spendAt } = run.published;
  if (spec.searchAttributes && (changed || spendDue(ctx, spendBucket, now, cadence.intervalMs))) {
    // A labelled agent's frequent spend-only upsert carries only the spend (the rest did not change);
    // every other upsert carries them all, as the recorded histories do.
    const values = searchAttributeValues(core);
    ports.upsertSearchAttributes(changed || !cadence.grouped ? values : values.filter((v) => SPEND_ATTRIBUTES.includes(v.key.name)));
    publishedBucket = spendBucket;
    spendAt = now;
  }
  run.published = { state: s.state, step: s.ladder.step, paused, details, spendBucket: publishedBucket, spendAt };
  flushTelemetry(ctx);
}

/** The attributes a spend-only upsert of a labelled agent carries. */
const SPEND_ATTRIBUTES: readonly string[] = [WardenCostUsd.name, WardenTokens.name, WardenEvaluatorCostUsd.name];

/** Spend moved on by the cadence's turns since it was last published, and its interval has passed. */
function spendDue(ctx: AgentContext, spendBucket: number, now: number, intervalMs: number): boolean {
  const { published } = ctx.core.run;
  return published.spendBucket !== spendBucket && now - published.spendAt >= intervalMs;
}

/** The sub-agents' spend as status shows it. */
function subagentSpendStatus(x: CarriedView['subagentSpend']): NonNullable<NonNullable<AgentStatus['subagents']>['spend']> {
  return { tokens: { in: x.tokensIn, out: x.tokensOut, total: x.tokensIn + x.tokensOut }, costUsd: x.costUsd, counted: x.counted };
}

export function status(ctx: AgentContext): AgentStatus {
  const { core } = ctx;
  const { s, spec, threshold } = core;
  const paused = isPaused(s);
  return {
    agentId: spec.agentId,
    state: s.state,
    stateReason: s.stateReason,
    paused,
    pauseReason: paused ? s.pauseReason : null,
    waitingForHuman: s.state === 'awaiting-input' && s.awaitingCause === 'human',
    ...(s.state === 'blocked' && s.cliBlocked !== undefined ? { blockedByCli: true } : {}),
    ...sessionEndsAt(core),
    ...heldUntil(core),
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
    evaluatorSpend: { ...s.evaluatorSpend, tokens: { ...s.evaluatorSpend.tokens }, decided: { ...s.evaluatorSpend.decided } },
    ...treeStatus(s.window),
    ...(s.subagentsSeen > 0
      ? {
          subagents: {
            running: s.subagents.filter((r) => r.stoppedAt === null).length,
            seen: s.subagentsSeen,
            list: s.subagents.map((r) => ({ id: r.id, type: r.type, startedAt: iso(r.startedAt), stoppedAt: r.stoppedAt === null ? null : iso(r.stoppedAt) })),
            spend: subagentSpendStatus(s.subagentSpend),
          },
        }
      : {}),
    lastTurnAt: s.lastTurnAt === null ? null : iso(s.lastTurnAt),
    lastHeartbeatAt: s.lastHeartbeatAt === null ? null : iso(s.lastHeartbeatAt),
    stopRequested: s.stopDeadline !== null,
    transitions: s.transitions,
    refused: s.refused,
    invalidSignals: s.invalidSignals,
    runs: s.runs,
    driver: spec.driver?.kind ?? null,
    turnRunning: core.run.turnRunning,
    budgets: budgetReport(effectiveBudgets(spec.budgets, s.budgetRaised), spendOf(core, ctx.ports.now())),
    budgetWarnings: [...s.budgetWarned],
    ...(spec.labels && Object.keys(spec.labels).length > 0 ? { labels: { ...spec.labels } } : {}),
    budgetPaused: s.budgetPaused && s.state === 'paused-by-user',
    budgetRaises: s.budgetRaises.map((r) => ({ ...r, changes: { ...r.changes } })),
    supervision: supervisionRate(s.evaluatorSpend, ctx.ports.now() - s.startedAt),
    restarts: s.failures.length,
    lastTurnError: s.lastTurnError,
    task: spec.task.slice(0, 500),
    model: spec.driver && 'model' in spec.driver ? (spec.driver.model ?? null) : null,
    currentTool: s.state === 'running' ? (s.window.at(-1)?.toolCalls?.at(-1)?.name ?? null) : null,
    spend: { bucketMs: SPEND_BUCKET_MS, buckets: s.spendHistory.map((b) => ({ at: iso(b.at), tokens: b.tokens, costUsd: b.costUsd })) },
    generation: s.generation,
    parent: spec.parent?.agentId ?? null,
    children: s.children.map((c) => ({ agentId: c.agentId, state: c.state, reason: c.reason })),
    toolAllowlist: spec.contract?.toolAllowlist ?? [],
    result: s.result,
    dismissals: s.dismissals,
    lastDismissal: s.lastDismissal && {
      at: s.lastDismissal.at,
      note: s.lastDismissal.note,
      pattern: s.lastDismissal.pattern,
      message: s.lastDismissal.message,
    },
    suppressed: s.suppressed,
    cases: { kept: s.cases.length, decided: s.cases.filter((c) => c.decision !== null).length },
    lastVerification: s.lastVerification,
    verifying: s.doneClaim !== null,
    checksDone: spec.verify !== undefined || spec.protect.length > 0,
    lastResort: spec.supervisor.lastResort,
    compactions: s.ladder.compactions ?? 0,
    lastCompaction: s.compaction && {
      at: iso(s.compaction.at),
      reason: s.compaction.reason,
      handoff: s.compaction.handoff,
      done: s.compaction.done,
      doneAt: s.compaction.doneAt === undefined ? null : iso(s.compaction.doneAt),
    },
    deliveredWhispers: s.deliveredWhispers.map((w) => ({ ...w })),
    notifications: s.notifications.map((n) => ({ ...n, channels: [...n.channels] })),
  };
}

/**
 * How the run ends for Temporal. A failed agent (aborted by a human, circuit open, a result that
 * breaks its contract, a fatal turn) is a failed workflow, so the Web UI's failure filter, metrics
 * and alerts on failed workflows see it; the final status rides along as the failure's details.
 * A stopped agent — by a human, a budget or max turns — ended as asked: completed.
 */
export function finalOutcome(core: AgentCore): { kind: 'completed' } | { kind: 'failed'; type: 'AgentAborted' | 'AgentFailed'; message: string } {
  const { s, spec } = core;
  if (s.state !== 'failed') return { kind: 'completed' };
  const aborted = s.transitions.at(-1)?.event === 'abort';
  return { kind: 'failed', type: aborted ? 'AgentAborted' : 'AgentFailed', message: `agent ${spec.agentId} ${s.stateReason ?? 'failed'}` };
}

/** The status's `heldUntil`, only while a bounded hold runs (held.ts). */
function heldUntil(core: AgentCore): { heldUntil?: string } {
  const at = holdDeadline(core);
  return at === null ? {} : { heldUntil: iso(at) };
}

/** The status's `sessionEndsAt`, only while an ended session's deadline runs. */
function sessionEndsAt(core: AgentCore): { sessionEndsAt?: string } {
  const at = sessionEndDeadline(core);
  return at === null ? {} : { sessionEndsAt: iso(at) };
}
