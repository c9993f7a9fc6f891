/**
 * agentWorkflow: one long-lived workflow per supervised agent — the Temporal shell around the pure
 * agent core in src/domain/agent/. This file parses the spec, builds the core with its real ports,
 * registers every handler as a one-line hand-off, and runs the loop (workflows/loop.ts) that
 * executes what the core decides. All state lives in the core, so it survives worker and server
 * crashes by replay, and it is carried across continue-as-new.
 *
 * Deterministic code only: @temporalio/workflow, zod and src/domain.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  currentUpdateInfo,
  setDefaultSignalHandler,
  setHandler,
  workflowInfo,
  type SignalDefinition,
} from '@temporalio/workflow';
import { cancellationRequested, signal, unknownSignal } from '../src/domain/agent/controls.js';
import type { AgentContext } from '../src/domain/agent/context.js';
import { stopChildren } from '../src/domain/agent/delegation.js';
import { validateDelegation } from '../src/domain/agent/delegation-spec.js';
import { applyLink, escalationView } from '../src/domain/agent/links.js';
import { raiseBudget, validateRaiseBudget } from '../src/domain/agent/budget-raise.js';
import { reportTurn, validateReport, validatedTurnSlot } from '../src/domain/agent/reporting.js';
import { run } from '../src/domain/agent/steps.js';
import { createCore, type CarriedState } from '../src/domain/agent/state.js';
import { LATER_SEARCH_ATTRIBUTES } from '../src/domain/contract/search-attributes.js';
import { commit, finalOutcome, status } from '../src/domain/agent/visibility.js';
import { AgentSpecSchema, describeZodError, type AgentSpecInput, type SignalName } from '../src/domain/contract/schemas.js';
import type { AgentStatus } from '../src/domain/contract/status.js';
import { isUndecodable, undecodableReason } from '../src/domain/contract/undecodable.js';
import { delegate } from './children.js';
import { validateLinkUpdate } from './links.js';
import { quiet, runLoop } from './loop.js';
import * as m from '../src/messages/agent.js';
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
  // The search attributes added later that this run started with (search-attributes.ts): the only ones of them it sends.
  const laterAttributes = LATER_SEARCH_ATTRIBUTES.filter((name) => info.typedSearchAttributes.getAll().some((p) => p.key.name === name));
  const core = createCore(spec, { workflowId: info.workflowId, runId: info.runId, laterAttributes }, Date.now(), carried);
  if (info.workflowId !== `agent-${spec.agentId}`) {
    throw ApplicationFailure.nonRetryable(
      `workflow id ${info.workflowId} does not match agentId ${spec.agentId}: an agent runs as agent-<agentId>`,
      'InvalidAgentSpec',
    );
  }
  const shell = createShell(spec);
  const ctx: AgentContext = { core, ports: shell.ports };
  const { s } = core;
  // The one commit point of the handlers: each ends by publishing what it changed (visibility.ts),
  // in the same workflow task as the commands its rules sent through the ports.
  const committed =
    <A extends unknown[], R>(handler: (...args: A) => R) =>
    (...args: A): R => {
      try {
        return handler(...args);
      } finally {
        commit(ctx);
      }
    };

  // Signals: validated, recorded and ignored when invalid; never thrown. Registered in the order of
  // agentSignals (steer, interrupt, stop, …), each a hand-off to the core, then a commit.
  for (const name of Object.keys(m.agentSignals) as SignalName[]) {
    setHandler(
      m.agentSignals[name] as SignalDefinition<[unknown?]>,
      committed((p?: unknown) => run(ctx, signal(ctx, name, p))),
    );
  }
  setDefaultSignalHandler(committed((name: string) => run(ctx, unknownSignal(ctx, name))));
  // Updates: synchronous validators reject bad input before it enters history.
  // A live turn is parsed once: the validator's parse goes to the handler of the same update.
  const validated = validatedTurnSlot();
  const report = committed((turn: unknown) => run(ctx, reportTurn(ctx, turn, validated.take(currentUpdateInfo()?.id))));
  setHandler(m.reportTurnUpdate, report, { validator: (turn) => validated.put(currentUpdateInfo()?.id, validateReport(ctx, turn)) });
  // Committed once the child's start is asked for (its plan is state); its end commits in children.ts.
  setHandler(
    m.delegateUpdate,
    committed((task: unknown) => delegate(ctx, task)),
    { validator: (task) => validateDelegation(ctx, task) },
  );
  setHandler(
    m.linkUpdate,
    committed((req: unknown) => run(ctx, applyLink(ctx, req))),
    { validator: (req) => validateLinkUpdate(ctx, req) },
  );
  setHandler(
    m.raiseBudgetUpdate,
    committed((req: unknown) => run(ctx, raiseBudget(ctx, req))),
    { validator: (req) => validateRaiseBudget(ctx, req) },
  );
  // Queries.
  setHandler(m.statusQuery, () => status(ctx));
  setHandler(m.pendingWhispersQuery, () => [...s.pendingWhispers]);
  setHandler(m.windowQuery, () => [...s.window]);
  setHandler(m.casesQuery, () => ({ agentId: spec.agentId, task: spec.task, cases: [...s.cases] }));
  setHandler(m.linkEscalationQuery, () => escalationView(s));

  // A cancellation request from Temporal is a stop: the loop runs shielded from it, drains, and ends.
  let cancelled: unknown = null;
  CancellationScope.current().cancelRequested.catch(
    committed((err: unknown) => {
      cancelled = err;
      run(ctx, cancellationRequested(ctx));
    }),
  );
  // A promise chain, not an async function: while the agent waits, one promise is pending here
  // instead of an async function's and its await's, and every promise made in the loop carries a
  // shorter async stack (the SDK keeps a captured stack trace for each pending promise made in
  // workflow context). The callbacks run when the awaits they replace resumed: same commands.
  await CancellationScope.nonCancellable(() => {
    return runLoop(ctx, shell, specInput).then(() => {
      run(ctx, stopChildren(ctx, `it ended ${s.state}`));
      return condition(quiet(shell)).then(() => commit(ctx)); // before completion
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
