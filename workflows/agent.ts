/**
 * agentWorkflow: one long-lived workflow per supervised agent — the Temporal shell around the pure
 * agent core in src/domain/agent/. This file parses the spec, builds the core with its real ports,
 * registers every handler as a one-line hand-off, and runs the loop (workflows/loop.ts) that
 * executes what the core decides. All state lives in the core, so it survives worker and server
 * crashes by replay, and it is carried across continue-as-new.
 *
 * Deterministic code only: @temporalio/workflow, zod and src/domain.
 */
import { ApplicationFailure, CancellationScope, condition, currentUpdateInfo, setDefaultSignalHandler, setHandler, workflowInfo } from '@temporalio/workflow';
import { cancellationRequested, signal, unknownSignal } from '../src/domain/agent/controls.js';
import type { AgentContext } from '../src/domain/agent/context.js';
import { stopChildren } from '../src/domain/agent/delegation.js';
import { validateDelegation } from '../src/domain/agent/delegation-spec.js';
import { applyLink, escalationView } from '../src/domain/agent/links.js';
import { reportTurn, validateReport, validatedTurnSlot } from '../src/domain/agent/reporting.js';
import { createCore, type CarriedState } from '../src/domain/agent/state.js';
import { finalOutcome, publish, status } from '../src/domain/agent/visibility.js';
import { AgentSpecSchema, describeZodError, type AgentSpecInput } from '../src/domain/contract/schemas.js';
import type { AgentStatus } from '../src/domain/contract/status.js';
import { isUndecodable, undecodableReason } from '../src/domain/contract/undecodable.js';
import { delegate } from './children.js';
import { validateLinkUpdate } from './links.js';
import { quiet, runLoop } from './loop.js';
import * as m from './messages.js';
import { createShell } from './ports.js';

export type { CarriedState } from '../src/domain/agent/state.js';

export async function agentWorkflow(specInput: AgentSpecInput, carried?: CarriedState): Promise<AgentStatus> {
  const parsed = AgentSpecSchema.safeParse(specInput);
  if (!parsed.success) {
    const why = isUndecodable(specInput) ? `undecodable payload: ${undecodableReason(specInput)}` : describeZodError(parsed.error);
    throw ApplicationFailure.nonRetryable(`invalid AgentSpec: ${why}`, 'InvalidAgentSpec');
  }
  const spec = parsed.data;
  const info = workflowInfo();
  const core = createCore(spec, { workflowId: info.workflowId, runId: info.runId }, Date.now(), carried);
  if (info.workflowId !== `agent-${spec.agentId}`) {
    throw ApplicationFailure.nonRetryable(
      `workflow id ${info.workflowId} does not match agentId ${spec.agentId}: an agent runs as agent-<agentId>`,
      'InvalidAgentSpec',
    );
  }
  const shell = createShell(spec);
  const ctx: AgentContext = { core, ports: shell.ports };
  const { s } = core;

  // Signals: validated, recorded and ignored when invalid; never thrown.
  setHandler(m.steerSignal, (p) => signal(ctx, 'steer', p));
  setHandler(m.interruptSignal, (p) => signal(ctx, 'interrupt', p));
  setHandler(m.stopSignal, (p) => signal(ctx, 'stop', p));
  setHandler(m.pauseSignal, (p) => signal(ctx, 'pause', p));
  setHandler(m.resumeSignal, (p) => signal(ctx, 'resume', p));
  setHandler(m.abortSignal, (p) => signal(ctx, 'abort', p));
  setHandler(m.dismissSignal, (p) => signal(ctx, 'dismiss', p));
  setHandler(m.heartbeatSignal, (p) => signal(ctx, 'heartbeat', p));
  setHandler(m.compactionSignal, (p) => signal(ctx, 'compaction', p));
  setHandler(m.humanWaitSignal, (p) => signal(ctx, 'humanWait', p));
  setHandler(m.sessionSignal, (p) => signal(ctx, 'session', p));
  setHandler(m.blockSignal, (p) => signal(ctx, 'block', p));
  setHandler(m.admitSignal, (p) => signal(ctx, 'admit', p));
  setHandler(m.childSpendSignal, (p) => signal(ctx, 'childSpend', p));
  setDefaultSignalHandler((name) => unknownSignal(ctx, name));
  // Updates: synchronous validators reject bad input before it enters history.
  // A live turn is parsed once: the validator's parse goes to the handler of the same update.
  const validated = validatedTurnSlot();
  setHandler(m.reportTurnUpdate, (turn) => reportTurn(ctx, turn, validated.take(currentUpdateInfo()?.id)), {
    validator: (turn) => validated.put(currentUpdateInfo()?.id, validateReport(ctx, turn)),
  });
  setHandler(m.delegateUpdate, (task) => delegate(ctx, task), { validator: (task) => validateDelegation(ctx, task) });
  setHandler(m.linkUpdate, (req) => applyLink(ctx, req), { validator: (req) => validateLinkUpdate(ctx, req) });
  // Queries.
  setHandler(m.statusQuery, () => status(ctx));
  setHandler(m.pendingWhispersQuery, () => [...s.pendingWhispers]);
  setHandler(m.windowQuery, () => [...s.window]);
  setHandler(m.casesQuery, () => ({ agentId: spec.agentId, task: spec.task, cases: [...s.cases] }));
  setHandler(m.linkEscalationQuery, () => escalationView(s));

  // A cancellation request from Temporal is a stop: the loop runs shielded from it, drains, and ends.
  let cancelled: unknown = null;
  CancellationScope.current().cancelRequested.catch((err: unknown) => {
    cancelled = err;
    cancellationRequested(ctx);
  });
  // A promise chain, not an async function: while the agent waits, one promise is pending here
  // instead of an async function's and its await's, and every promise made in the loop carries a
  // shorter async stack (the SDK keeps a captured stack trace for each pending promise made in
  // workflow context). The callbacks run when the awaits they replace resumed: same commands.
  await CancellationScope.nonCancellable(() => {
    publish(ctx);
    return runLoop(ctx, shell, specInput).then(() => {
      stopChildren(ctx, `it ended ${s.state}`);
      return condition(quiet(shell)).then(() => publish(ctx));
    });
  });
  if (cancelled) throw cancelled; // the run ends CANCELED, with its state (done) visible
  const final = status(ctx);
  const outcome = finalOutcome(ctx.core);
  if (outcome.kind === 'failed') {
    throw ApplicationFailure.create({ type: outcome.type, message: outcome.message, nonRetryable: true, details: [final] });
  }
  return final;
}
