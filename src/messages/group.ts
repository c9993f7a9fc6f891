/**
 * Message definitions of groupBudgetWorkflow (workflows/group.ts): the budget a human sets (its
 * counter is started by signal-with-start), the status query. Safe to import outside the sandbox.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { GroupBudget, GroupView } from '../domain/group/budget.js';

export const GROUP_WORKFLOW_TYPE = 'groupBudgetWorkflow';
export const groupBudgetSignal = defineSignal<[GroupBudget]>('groupBudget');
export const groupStatusQuery = defineQuery<GroupView>('groupStatus');
