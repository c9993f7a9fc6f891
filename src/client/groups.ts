/**
 * Group budgets from the client's side: set a group's cap (signal-with-start of its counter,
 * `groupBudgetWorkflow`), and read the counter. The counter's rules: src/domain/group/budget.ts.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { groupWorkflowId, parseLabel } from '../domain/contract/labels.js';
import type { GroupBudget, GroupView } from '../domain/group/budget.js';
import { GroupBudgetSchema, GroupInputSchema } from '../domain/group/schemas.js';
import { describeZodError } from '../domain/contract/schemas.js';
import { GROUP_WORKFLOW_TYPE, groupBudgetSignal, groupStatusQuery } from '../messages/group.js';
import { InvalidInputError, type WardenClient } from './index.js';

/** `key=value` checked as a label, or InvalidInputError naming what is wrong. */
export function checkGroup(group: string): string {
  const l = parseLabel(group);
  if ('error' in l) throw new InvalidInputError(`group: ${l.error}`);
  return `${l.key}=${l.value}`;
}

export class GroupNotFoundError extends Error {
  override name = 'GroupNotFoundError';
  constructor(readonly group: string) {
    super(`no group ${group}: no budget was set for it (warden group budget ${group} --cost-usd N)`);
  }
}

/**
 * Set a group's budget (cost and/or tokens per day or month, and where its alert goes). Starts
 * the group's counter if there is none (`pollIntervalMs` applies then: how often it lists the
 * group's agents); a raise above the spend resumes the agents it paused at its next poll.
 */
export async function setGroupBudget(
  warden: WardenClient,
  group: string,
  budget: GroupBudget,
  opts: { pollIntervalMs?: number } = {},
): Promise<{ workflowId: string; budget: GroupBudget }> {
  const g = checkGroup(group);
  const parsed = GroupBudgetSchema.safeParse(budget);
  if (!parsed.success) throw new InvalidInputError(`invalid group budget: ${describeZodError(parsed.error)}`);
  const input = GroupInputSchema.safeParse({ group: g, ...(opts.pollIntervalMs !== undefined && { pollIntervalMs: opts.pollIntervalMs }) });
  if (!input.success) throw new InvalidInputError(`invalid group counter input: ${describeZodError(input.error)}`);
  const workflowId = groupWorkflowId(g);
  await warden.client.workflow.signalWithStart(GROUP_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: warden.taskQueue,
    args: [input.data],
    signal: groupBudgetSignal,
    signalArgs: [parsed.data],
    staticSummary: `Spend counter of the agents labelled ${g}`,
  });
  return { workflowId, budget: parsed.data };
}

/** The group's counter: its budget, the period's spend, its agents and the ones it paused. */
export async function groupStatus(warden: WardenClient, group: string): Promise<GroupView> {
  const g = checkGroup(group);
  try {
    return await warden.client.workflow.getHandle(groupWorkflowId(g)).query(groupStatusQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) throw new GroupNotFoundError(g);
    throw err;
  }
}
