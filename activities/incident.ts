/**
 * joinIncident: an escalation whose evidence names a failing command joins the incident of its
 * cause (src/domain/notify/cause.ts), so that agents escalating on one cause give one notification
 * (workflows/incident.ts). The activity resolves where the agent works — the repository's root and
 * branch, read with the same hardened git as the checks — fingerprints the cause, and
 * signals-with-start `warden-incident-<fingerprint>` with the agent's own alert.
 *
 * The alert goes out alone, as before grouping existed (a `notifyWorkflow` under the agent's own
 * notify id, started once whatever the retries), when warden does not know where the agent works
 * (an external agent with neither `verify.cwd` nor `driven.workDir`), when that is not a git
 * repository, or when the worker's operator turned grouping off (WARDEN_NOTIFY_GROUP_WINDOW=0).
 * A retried join is dropped by the incident (agent id and escalation number).
 */
import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { groupWindowFromEnv } from '../src/config/worker.js';
import type { VerifyPlace } from '../src/domain/contract/activity-types.js';
import type { JoinIncidentInput, JoinIncidentResult } from '../src/domain/notify/incident-activity.js';
import { causeFingerprint, incidentWorkflowId } from '../src/domain/notify/cause.js';
import { INCIDENT_WORKFLOW_TYPE, JOIN_INCIDENT_SIGNAL, type IncidentStart } from '../src/domain/notify/incident.js';
import { git } from './mesh/git.js';
import { checkDir } from './verify.js';

const GIT_TIMEOUT_MS = 15_000;

/** The repository root and branch where the agent works, or why there is none. */
export async function whereAgentWorks(place: VerifyPlace): Promise<{ repo: string; branch: string } | { reason: string }> {
  if (!place.driven && !place.cwd && !place.workDir) return { reason: 'where the agent works is not known (no verify.cwd, no driven.workDir)' };
  const cwd = checkDir(place);
  if (!existsSync(cwd)) return { reason: `${cwd} does not exist` };
  const top = await git(cwd, ['rev-parse', '--show-toplevel'], { timeoutMs: GIT_TIMEOUT_MS });
  const repo = top.stdout.trim();
  if (!top.ok || !repo) return { reason: `${cwd} is not in a git repository` };
  const head = await git(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { timeoutMs: GIT_TIMEOUT_MS });
  // A detached HEAD is its commit: agents on the same commit share the cause.
  const branch = head.ok && head.stdout.trim() ? head.stdout.trim() : (await git(cwd, ['rev-parse', 'HEAD'], { timeoutMs: GIT_TIMEOUT_MS })).stdout.trim();
  return { repo, branch };
}

export function makeJoinIncident(log: Logger) {
  return async function joinIncident(input: JoinIncidentInput): Promise<JoinIncidentResult> {
    const ctx = Context.current();
    const { client } = ctx;
    const taskQueue = ctx.info.taskQueue;
    const { alert } = input;
    const alog = log.child({ agentId: alert.event.agentId, escalation: alert.event.escalation });
    const windowMs = groupWindowFromEnv();
    const where = windowMs === 0 ? { reason: 'grouping is off (WARDEN_NOTIFY_GROUP_WINDOW=0)' } : await whereAgentWorks(input.place);
    if ('reason' in where) {
      try {
        await client.workflow.start('notifyWorkflow', {
          workflowId: input.fallbackWorkflowId,
          taskQueue,
          args: [alert],
          staticSummary: `${alert.event.event} alert for ${alert.event.agentId}`,
        });
      } catch (err) {
        // A retry of this activity after the start went through: the alert is on its way.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      alog.info({ reason: where.reason, workflowId: input.fallbackWorkflowId }, 'alert sent alone (no incident)');
      return { grouped: false, workflowId: input.fallbackWorkflowId, reason: where.reason };
    }
    const cause = { ...input.cause, ...where };
    const fingerprint = causeFingerprint(cause);
    const workflowId = incidentWorkflowId(fingerprint);
    const start: IncidentStart = { fingerprint, cause, windowMs };
    await client.workflow.signalWithStart(INCIDENT_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [start],
      signal: JOIN_INCIDENT_SIGNAL,
      signalArgs: [alert],
      staticSummary: `one alert for one cause: ${cause.command}`.slice(0, 200),
    });
    alog.info({ workflowId, repo: cause.repo, branch: cause.branch }, 'escalation joined its incident');
    return { grouped: true, workflowId, fingerprint };
  };
}
