/**
 * Message definitions of agentWorkflow: signals, the reportTurn update, queries. The one place their
 * names and payload types are written: the workflow sets its handlers with these, and the client,
 * CLI, hooks, `warden serve` and the IRC worker send and ask with these (`handle.signal(steerSignal, …)`).
 * Safe to import outside the workflow sandbox: it imports only the define* functions of
 * @temporalio/workflow, which build plain objects, and types.
 */
import { defineQuery, defineSignal, defineUpdate, type SignalDefinition } from '@temporalio/workflow';
import type { RaiseBudgetInput } from '../domain/contract/budget-schemas.js';
import type { SignalName, SignalPayload, TaskSpecInput, Turn, TurnInput, Whisper } from '../domain/contract/schemas.js';
import type { AgentStatus, RaiseBudgetResult, ReportTurnResult } from '../domain/contract/status.js';
import type { AgentCases } from '../domain/judgement/cases.js';
import type { EscalationView, LinkRequest, LinkResult } from '../domain/agent/links.js';

export const steerSignal = defineSignal<[SignalPayload<'steer'>?]>('steer');
export const interruptSignal = defineSignal<[SignalPayload<'interrupt'>?]>('interrupt');
export const stopSignal = defineSignal<[SignalPayload<'stop'>?]>('stop');
export const pauseSignal = defineSignal<[SignalPayload<'pause'>?]>('pause');
export const resumeSignal = defineSignal<[SignalPayload<'resume'>?]>('resume');
export const abortSignal = defineSignal<[SignalPayload<'abort'>?]>('abort');
/** A human marks the last flagged verdict a false alarm (src/domain/agent/dismissal.ts). */
export const dismissSignal = defineSignal<[SignalPayload<'dismiss'>?]>('dismiss');
export const heartbeatSignal = defineSignal<[SignalPayload<'heartbeat'>?]>('heartbeat');
/** The agent's own CLI compacts its context (from its hooks): `compacting` until it ends. */
export const compactionSignal = defineSignal<[SignalPayload<'compaction'>?]>('compaction');
/** The agent's own CLI waits for its human (from its hooks): `awaiting-input` until it moves again. */
export const humanWaitSignal = defineSignal<[SignalPayload<'humanWait'>?]>('humanWait');
/** The agent's own CLI ended (or resumed) its session (from its hooks): it ends `done` after a grace period. */
export const sessionSignal = defineSignal<[SignalPayload<'session'>?]>('session');
/** The agent's own CLI started or ended a sub-agent (from its hooks): listed under the agent in its status. */
export const subagentSignal = defineSignal<[SignalPayload<'subagent'>?]>('subagent');
/** Something other than a human holds the agent (a mesh, until a worker's rebase turn): `blocked` until `end` or a steer. */
export const blockSignal = defineSignal<[SignalPayload<'block'>?]>('block');
/** Delegation: a parent admits a queued child when a concurrency slot opens. */
export const admitSignal = defineSignal<[SignalPayload<'admit'>?]>('admit');
/** Delegation: a child tells its parent what it has spent (its parent's budget covers the subtree). */
export const childSpendSignal = defineSignal<[SignalPayload<'childSpend'>?]>('childSpend');

/**
 * Every agent signal by its name (the keys of SIGNAL_SCHEMAS), for callers that hold a name: a CLI
 * verb, an IRC command, a hook event. test/unit/messages.test.ts checks each key is its definition's name.
 */
export const agentSignals: { readonly [N in SignalName]: SignalDefinition<[SignalPayload<N>?]> } = {
  steer: steerSignal,
  interrupt: interruptSignal,
  stop: stopSignal,
  pause: pauseSignal,
  resume: resumeSignal,
  abort: abortSignal,
  dismiss: dismissSignal,
  heartbeat: heartbeatSignal,
  compaction: compactionSignal,
  humanWait: humanWaitSignal,
  session: sessionSignal,
  subagent: subagentSignal,
  block: blockSignal,
  admit: admitSignal,
  childSpend: childSpendSignal,
};

export const delegateUpdate = defineUpdate<{ childAgentId: string; workflowId: string; queued: boolean }, [TaskSpecInput]>('delegate');

/** An action link `warden serve` verified (src/domain/agent/links.ts): refused before history when replayed. */
export const linkUpdate = defineUpdate<LinkResult, [LinkRequest]>('link');

export const reportTurnUpdate = defineUpdate<ReportTurnResult, [TurnInput]>('reportTurn');

/** A human sets new budget limits (`warden budget`): an agent paused at a budget runs again (src/domain/agent/budget-raise.ts). */
export const raiseBudgetUpdate = defineUpdate<RaiseBudgetResult, [RaiseBudgetInput]>('raiseBudget');

export const statusQuery = defineQuery<AgentStatus>('status');
export const pendingWhispersQuery = defineQuery<Whisper[]>('pendingWhispers');
export const windowQuery = defineQuery<Turn[]>('window');
/** The flagged windows and the decisions humans took on them (`warden cases export`). */
export const casesQuery = defineQuery<AgentCases>('cases');
/** The agent's newest escalation as action links see it: its number, whether it waits, its finding (`warden serve`'s confirm page). */
export const linkEscalationQuery = defineQuery<EscalationView>('linkEscalation');
