/**
 * A `delegate` request (delegation.ts): the task spec validated against its schema, and the child
 * it becomes. Apart from delegation.ts because it uses a zod schema (the core itself validates
 * nothing with a schema).
 */
import { DELEGATION_CAPS } from '../contract/limits.js';
import { TaskSpecSchema, describeZodError, type AgentSpecInput, type TaskSpec } from '../contract/schemas.js';
import { isTerminal } from '../contract/states.js';
import type { AgentContext } from './context.js';
import { liveChildren } from './delegation.js';
import type { ChildRecord } from './state.js';
import { addChild } from './slices/delegation.js';

/** The delegate update's validator: throws (rejecting the update before it enters history) with the reason. */
export function validateDelegation(ctx: AgentContext, input: unknown): void {
  const { s, spec } = ctx.core;
  const r = TaskSpecSchema.safeParse(input);
  if (!r.success) throw new Error(`invalid task spec: ${describeZodError(r.error)}`);
  if (isTerminal(s.state) || s.state === 'cancelling') throw new Error(`agent ${spec.agentId} is ${s.state}; it cannot delegate`);
  const depth = spec.parent?.depth ?? 0;
  if (depth >= spec.delegation.maxDepth) {
    throw new Error(`spawn depth: agent ${spec.agentId} runs at depth ${depth} (max ${spec.delegation.maxDepth}); it may not delegate`);
  }
  if (DELEGATION_CAPS[spec.delegation.mode] === 0) throw new Error(`mode solo: agent ${spec.agentId} may not delegate`);
  if (s.children.some((c) => c.agentId === `${spec.agentId}.${r.data.childId}`)) throw new Error(`childId ${r.data.childId} is already used`);
}

export interface PlannedChild {
  rec: ChildRecord;
  spec: AgentSpecInput;
  queued: boolean;
  summary: string;
}

/** A validated delegation: record the child (running, or queued past the cap) and build its spec. */
export function planChild(ctx: AgentContext, input: unknown): PlannedChild {
  const { core } = ctx;
  const { spec } = core;
  const t: TaskSpec = TaskSpecSchema.parse(input);
  const childAgentId = `${spec.agentId}.${t.childId}`;
  const queued = liveChildren(ctx) >= DELEGATION_CAPS[spec.delegation.mode];
  const rec: ChildRecord = { agentId: childAgentId, workflowId: `agent-${childAgentId}`, state: queued ? 'queued' : 'running', reason: null };
  addChild(core.s, rec);
  const marker = t.driven?.doneMarker ?? spec.driven.doneMarker;
  const labelled = Object.keys(spec.labels ?? {}).length > 0;
  const child: AgentSpecInput = {
    agentId: childAgentId,
    task: [
      t.objective,
      `Definition of done: ${t.definitionOfDone}` +
        (t.verify ? `\nwarden checks it by running \`${t.verify.command}\`; your result is accepted only when that passes.` : ''),
      `When you are done, start your final message with "${marker}" followed by your result as JSON matching this schema:\n${JSON.stringify(t.resultSchema)}`,
    ].join('\n\n'),
    driver: t.driver,
    driven: { ...t.driven },
    budgets: t.budgets,
    supervisor: spec.supervisor,
    evaluator: spec.evaluator,
    notify: spec.notify,
    searchAttributes: spec.searchAttributes,
    delegation: spec.delegation,
    parent: { agentId: spec.agentId, workflowId: core.workflowId, depth: (spec.parent?.depth ?? 0) + 1 },
    contract: { resultSchema: t.resultSchema, toolAllowlist: t.toolAllowlist, definitionOfDone: t.definitionOfDone },
    startQueued: queued,
    ...(t.verify ? { verify: t.verify } : {}),
    // The parent's groups, and how often it reports to them: the child's own spend counts in them (a
    // parent publishes only its own turns' spend, never its children's, so nothing is counted twice).
    ...(labelled && { labels: { ...spec.labels } }),
    ...(labelled && spec.safety.groupReportIntervalMs !== undefined && { safety: { groupReportIntervalMs: spec.safety.groupReportIntervalMs } }),
  };
  return { rec, spec: child, queued, summary: `Delegated by ${spec.agentId}: ${t.objective.split('\n')[0]!.slice(0, 160)}` };
}
