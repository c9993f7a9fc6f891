/**
 * incidentWorkflow: one alert for one cause. Agents that escalate on the same evidence (the same
 * failing command and error in the same repository and branch: src/domain/notify/cause.ts) do not
 * notify one by one: the `joinIncident` activity signals-with-start `warden-incident-<fingerprint>`
 * with each agent's own alert. This workflow waits one grouping window from its start, then sends
 * one notification naming every agent that joined (a `notifyWorkflow` child per set of channels,
 * the same delivery as a single agent's alert). Agents that join later are named in one follow-up
 * per further window; a window without a new agent ends the incident.
 *
 * Durable like every workflow: a worker killed during the window loses nothing (the joins are
 * signals in history, the window a timer), and each notification's workflow id is fixed by this
 * history, so it is started once. Deterministic code only: @temporalio/workflow and src/domain.
 */
import { ApplicationFailure, ParentClosePolicy, defineQuery, defineSignal, log, setHandler, sleep, startChild, workflowInfo } from '@temporalio/workflow';
import { describeZodError } from '../src/domain/contract/schemas.js';
import {
  IncidentJoinSchema,
  IncidentStartSchema,
  JOIN_INCIDENT_SIGNAL,
  freshIncident,
  incidentNotifyId,
  joinIncident,
  takeNotifications,
  unannounced,
  type IncidentStart,
} from '../src/domain/notify/incident.js';
import { notifyWorkflow } from './notify.js';

export const joinIncidentSignal = defineSignal<[unknown]>(JOIN_INCIDENT_SIGNAL);
/** What the incident holds now: its cause, the joins (`<agentId>#<escalation>`), how many are named, its notifications. */
export const incidentQuery = defineQuery<IncidentView>('incident');

export interface IncidentView {
  fingerprint: string;
  cause: IncidentStart['cause'];
  joins: string[];
  announced: number;
  notifications: string[];
}

export interface IncidentReport {
  fingerprint: string;
  /** Agents that joined (each once). */
  agents: number;
  /** Notifications started (one per set of channels per window). */
  notifications: string[];
}

export async function incidentWorkflow(input: IncidentStart): Promise<IncidentReport> {
  const parsed = IncidentStartSchema.safeParse(input);
  if (!parsed.success) throw ApplicationFailure.nonRetryable(`invalid incident input: ${describeZodError(parsed.error)}`, 'InvalidIncidentInput');
  const { fingerprint, cause, windowMs } = parsed.data;
  const info = workflowInfo();
  const place = { fingerprint, cause, workflowId: info.workflowId, runId: info.runId };
  const s = freshIncident();
  // Validated, recorded and ignored when invalid: a signal handler never throws.
  setHandler(joinIncidentSignal, (raw: unknown) => {
    const join = IncidentJoinSchema.safeParse(raw);
    if (!join.success) {
      log.warn('incident join refused', { fingerprint, error: describeZodError(join.error) });
      return;
    }
    if (!joinIncident(s, join.data)) log.info('incident join repeated: dropped', { fingerprint, agentId: join.data.event.agentId });
  });
  const notifications: string[] = [];
  setHandler(incidentQuery, () => ({ fingerprint, cause, joins: [...s.keys], announced: s.announced, notifications: [...notifications] }));
  for (;;) {
    await sleep(windowMs);
    if (!unannounced(s)) break; // a whole window without a new agent: the incident is over
    const at = new Date(Date.now()).toISOString();
    for (const alert of takeNotifications(s, place, at)) {
      s.sent += 1;
      const child = await startChild(notifyWorkflow, {
        workflowId: incidentNotifyId(fingerprint, info.runId, s.sent),
        args: [alert],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        staticSummary: `incident alert naming ${alert.event.incident?.agents.length ?? 1} agents`,
      });
      notifications.push(child.workflowId);
    }
    // A long incident ends where its history would grow large; a later agent opens a new one.
    if (workflowInfo().continueAsNewSuggested) break;
  }
  return { fingerprint, agents: s.members.length + s.overflow, notifications };
}
