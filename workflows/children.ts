/** Delegation's Temporal side: a planned child becomes a child workflow; its end is reported to the core. */
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { AgentContext } from '../src/domain/agent/context.js';
import { childEnded } from '../src/domain/agent/delegation.js';
import { planChild } from '../src/domain/agent/delegation-spec.js';
import { commit } from '../src/domain/agent/visibility.js';
import { WardenEvaluatorCostUsd } from '../src/domain/contract/search-attributes.js';
import type { AgentStatus } from '../src/domain/contract/status.js';
import type { agentWorkflow } from './agent.js';

export async function delegate(ctx: AgentContext, input: unknown): Promise<{ childAgentId: string; workflowId: string; queued: boolean }> {
  const child = planChild(ctx, input);
  const handle = await startChild<typeof agentWorkflow>('agentWorkflow', {
    workflowId: child.rec.workflowId,
    args: [child.spec],
    // The parent stops its subtree itself, with a drain; an abandoned child still finishes cleanly.
    parentClosePolicy: ParentClosePolicy.ABANDON,
    staticSummary: child.summary,
    // The search attributes added later go to the child as they came to this run (search-attributes.ts).
    ...(ctx.core.run.laterAttributes.includes(WardenEvaluatorCostUsd.name) && { typedSearchAttributes: [{ key: WardenEvaluatorCostUsd, value: 0 }] }),
  });
  // The child's end is a handler of its own: the core records it, the shell commits.
  const ended = (outcome: { state: 'done' | 'failed'; reason: string | null }) => {
    childEnded(ctx, child.rec, outcome);
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
