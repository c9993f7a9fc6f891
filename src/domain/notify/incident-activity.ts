/**
 * The incident activity's contract (one alert for one cause): what the agent's workflow hands the
 * `joinIncident` activity, and what it answers. Apart from contract/activity-types.ts because it
 * carries a notification and a cause, which live here in notify/. Types only.
 */
import type { VerifyPlace } from '../contract/activity-types.js';
import type { CauseEvidence } from './cause.js';
import type { NotifyWorkflowInput } from './notify.js';

/** An escalation's alert with its cause's evidence and where the agent works (the activity resolves the repository). */
export interface JoinIncidentInput {
  alert: NotifyWorkflowInput;
  cause: CauseEvidence;
  place: VerifyPlace;
  /** The workflow id the alert is delivered under when it goes out alone (the agent's own notify id). */
  fallbackWorkflowId: string;
}

/** Grouped: the incident workflow it joined; alone: the notify workflow it went out with, and why. */
export type JoinIncidentResult = { grouped: true; workflowId: string; fingerprint: string } | { grouped: false; workflowId: string; reason: string };

/** The activity (registered with the others: activities/index.ts). */
export interface IncidentActivities {
  /** An escalation with a cause joins its incident (one alert for one cause), or goes out alone. */
  joinIncident(input: JoinIncidentInput): Promise<JoinIncidentResult>;
}
