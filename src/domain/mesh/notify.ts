/**
 * The mesh's alerts (awaiting input, ready, failed) as the agent's are sent: one notifyWorkflow
 * child per alert, to every channel the mesh was given (webhooks in their format, the IRC channel
 * through the `warden irc` bot), with the notify workflow's own retries. Pure.
 */
import type { MeshEvent } from '../contract/activity-types.js';
import type { NotifyWorkflowInput } from '../notify/notify.js';
import type { NotifyConfig } from '../contract/schemas.js';

/**
 * `kind` is the mesh's own event (`mesh-ready`, `mesh-failed`, `mesh-awaiting-input`: titled and
 * answered as a mesh); without it the alert is an `escalation`, as meshes started before sent.
 */
export function meshAlert(args: {
  runId: string;
  workflowId: string;
  temporalRunId: string;
  reason: string;
  at: number;
  notify: NotifyConfig;
  kind?: MeshEvent;
}): NotifyWorkflowInput | null {
  const { notify } = args;
  if (!notify.webhooks.length && !notify.irc) return null; // nobody to tell: no child at all
  return {
    event: {
      event: args.kind ?? 'escalation',
      agentId: `mesh-${args.runId}`,
      workflowId: args.workflowId,
      runId: args.temporalRunId,
      task: `mesh ${args.runId}`,
      step: 0,
      reason: args.reason,
      at: new Date(args.at).toISOString(),
    },
    webhooks: notify.webhooks,
    ...(notify.irc ? { irc: notify.irc } : {}),
  };
}
