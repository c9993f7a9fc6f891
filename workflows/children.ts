/** Delegation's Temporal side: a planned child becomes a child workflow; its end is reported to the core. */
import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import type { AgentContext } from '../src/domain/agent/context.js';
import { childEnded } from '../src/domain/agent/delegation.js';
import { run } from '../src/domain/agent/steps.js';
import { planChild } from '../src/domain/agent/delegation-spec.js';
import { commit } from '../src/domain/agent/visibility.js';
import { groupsOf } from '../src/domain/contract/labels.js';
import { WardenEvaluatorCostUsd, WardenLabels } from '../src/domain/contract/search-attributes.js';
import type { AgentStatus } from '../src/domain/contract/status.js';
import type { agentWorkflow } from './agent.js';

export async function delegate(ctx: AgentContext, input: unknown): Promise<{ childAgentId: string; workflowId: string; queued: boolean }> {
  const child = planChild(ctx, input);
  const info = workflowInfo();
  // The parent's labels (child.spec.labels) are the child's: published as the client does for an agent it
  // starts, when this run has WardenLabels itself (the namespace has it), with an epoch of the child's own.
  const groups = groupsOf(child.spec.labels);
  const labelled = groups.length > 0 && info.typedSearchAttributes.getAll().some((p) => p.key.name === WardenLabels.name);
  const now = Date.now();
  const typedSearchAttributes = [
    // The search attributes added later go to the child as they came to this run (search-attributes.ts).
    ...(ctx.core.run.laterAttributes.includes(WardenEvaluatorCostUsd.name) ? [{ key: WardenEvaluatorCostUsd, value: 0 }] : []),
    ...(labelled ? [{ key: WardenLabels, value: groups }] : []),
  ];
  const handle = await startChild<typeof agentWorkflow>('agentWorkflow', {
    workflowId: child.rec.workflowId,
    args: [child.spec],
    // The parent stops its subtree itself, with a drain; an abandoned child still finishes cleanly.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    staticSummary: child.summary,
    ...(typedSearchAttributes.length > 0 && { typedSearchAttributes }),
    // The child's epoch for its groups' counters (src/domain/group/budget.ts): deterministic, one per start.
    ...(groups.length > 0 && { memo: { wardenEpoch: `${info.runId}/${child.rec.workflowId}/${now}`, wardenStartedAt: now } }),
  });
  // The child's end is a handler of its own: the core records it, the shell commits.
  const ended = (outcome: { state: 'done' | 'failed'; reason: string | null }) => {
    run(ctx, childEnded(ctx, child.rec, outcome));
    commit(ctx);
  };
  handle.result().then(
    (st: AgentStatus) => ended({ state: st.state === 'done' ? 'done' : 'failed', reason: st.stateReason }),
    // A failed child is a failed workflow: its own reason is the failure's cause.
    (err: unknown) => ended({ state: 'failed', reason: failureReason(err) }),
  );
  return { childAgentId: child.rec.agentId, workflowId: child.rec.workflowId, queued: child.queued };
}

function failureReason(err: unknown): string {
  const cause = (err as { cause?: { message?: string } }).cause;
  return cause?.message ?? (err instanceof Error ? err.message : String(err));
}
