/**
 * listGroupAgents: one poll of a group's counter (workflows/group.ts). Lists the group's agents
 * in visibility — running, or closed since the last poll — with the spend they publish
 * (`WardenCostUsd`, `WardenTokens`, and supervision's `WardenEvaluatorCostUsd` where it is published) and their epoch (the first run of their chain). Reads only:
 * a retry or a second poll returns the same or newer figures, which the counter turns into deltas.
 */
import { Context } from '@temporalio/activity';
import { WardenCostUsd, WardenEvaluatorCostUsd, WardenPaused, WardenTokens } from '../src/domain/contract/search-attributes.js';
import type { Sighting } from '../src/domain/group/budget.js';
import { groupAgentsQuery, type ListGroupAgentsInput, type ListGroupAgentsOutput } from '../src/domain/group/activity-types.js';

/** Listing more than this many runs of one group in one poll is refused (the result must fit an activity's payload). */
export const GROUP_LIST_MAX = 5_000;

export async function listGroupAgents(input: ListGroupAgentsInput): Promise<ListGroupAgentsOutput> {
  const { client } = Context.current();
  const agents: Sighting[] = [];
  for await (const wf of client.workflow.list({ query: groupAgentsQuery(input.group, input.closedSince) })) {
    const sa = wf.typedSearchAttributes;
    const running = wf.status.name === 'RUNNING';
    const memo = (wf.memo ?? {}) as { wardenEpoch?: unknown; wardenStartedAt?: unknown };
    agents.push({
      workflowId: wf.workflowId,
      // The chain's epoch (src/domain/group/budget.ts): the same across continue-as-new, new when an id is used again.
      epoch: typeof memo.wardenEpoch === 'string' && memo.wardenEpoch ? memo.wardenEpoch : (wf.raw as { firstRunId?: string }).firstRunId || wf.runId,
      startedAt: typeof memo.wardenStartedAt === 'number' ? memo.wardenStartedAt : wf.startTime.getTime(),
      running,
      paused: (sa.get(WardenPaused as never) as boolean | undefined) ?? false,
      costUsd: (sa.get(WardenCostUsd as never) as number | undefined) ?? 0,
      tokens: (sa.get(WardenTokens as never) as number | undefined) ?? 0,
      // A later attribute: absent on a run that does not publish it (then supervision counts nothing of it).
      evaluatorCostUsd: (sa.get(WardenEvaluatorCostUsd as never) as number | undefined) ?? null,
      closedAt: running ? null : (wf.closeTime?.getTime() ?? null),
    });
    if (agents.length >= GROUP_LIST_MAX) break;
  }
  return { agents };
}
