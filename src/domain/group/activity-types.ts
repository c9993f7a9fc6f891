/** The group counter's one activity: list the group's agents in visibility (activities/group.ts). Types and the query: pure. */
import type { Sighting } from './budget.js';

export interface ListGroupAgentsInput {
  group: string;
  /** Closed runs are listed from this time on (ms since the epoch); running ones always. */
  closedSince: number;
}

export interface ListGroupAgentsOutput {
  agents: Sighting[];
}

export interface GroupActivities {
  listGroupAgents(input: ListGroupAgentsInput): Promise<ListGroupAgentsOutput>;
}

/**
 * The visibility query of one poll: the group's agent runs (not the runs they continued as new
 * from) that are running or closed since `closedSince`. The group is a checked label (letters,
 * digits, `.`, `_`, `-` and one `=`), so it needs no escaping inside the quotes.
 */
export function groupAgentsQuery(group: string, closedSince: number): string {
  return [
    `WorkflowType = 'agentWorkflow'`,
    `WardenLabels = '${group}'`,
    `ExecutionStatus != 'ContinuedAsNew'`,
    `(ExecutionStatus = 'Running' OR CloseTime >= '${new Date(Math.max(0, closedSince)).toISOString()}')`,
  ].join(' AND ');
}
