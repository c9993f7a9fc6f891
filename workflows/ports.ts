/**
 * The real ports of the agent core: every Temporal call the core's decisions need. Fire-and-forget
 * work (webhooks, signals to other agents) is counted, so the workflow neither continues as new nor
 * ends before it has been handed to the server.
 */
import {
  getExternalWorkflowHandle,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  proxySinks,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
  type CancellationScope,
  type Sinks,
} from '@temporalio/workflow';
import type { WardenActivities } from '../src/domain/contract/activity-types.js';
import type { IncidentActivities } from '../src/domain/notify/incident-activity.js';
import type { AgentPorts } from '../src/domain/agent/context.js';
import type { AgentSpec } from '../src/domain/contract/schemas.js';
import type { TelemetryEvent } from '../src/domain/agent/telemetry.js';
import * as m from '../src/messages/agent.js';
import { startNotifyChild } from './notify.js';
import { notifyWorkflowId } from '../src/domain/notify/notify.js';

/** Joining an incident: git reads and one signal-with-start; retried for about a minute, then the alert goes out alone. */
const JOIN_INCIDENT_OPTIONS = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '15s', maximumAttempts: 6 },
} as const;

export interface Shell {
  ports: AgentPorts;
  activities: ReturnType<typeof proxyActivities<WardenActivities & IncidentActivities>>;
  /** The same activities run as local activities (the heuristic evaluation: milliseconds of pure code). */
  localActivities: ReturnType<typeof proxyLocalActivities<WardenActivities & IncidentActivities>>;
  /** The running driven turn's scope, so interrupt/stop/abort can cancel it. */
  turnScope: CancellationScope | null;
  /** Webhook deliveries and signals to other agents still in flight. */
  pending: number;
}

/**
 * The worker's sinks: `otel.event` takes the agent's telemetry events to the worker's OpenTelemetry
 * export (workers/main.ts). A sink call is no command and leaves no trace in history; the worker
 * does not call it while it replays.
 */
export interface WardenSinks extends Sinks {
  otel: { event(event: TelemetryEvent): void };
}

export function createShell(spec: AgentSpec): Shell {
  // Options are given per call (with a summary for the Web UI): evaluations never retry, webhooks do.
  const activities = proxyActivities<WardenActivities & IncidentActivities>({
    startToCloseTimeout: spec.supervisor.evalTimeoutMs,
    retry: { maximumAttempts: 1 },
  });
  const localActivities = proxyLocalActivities<WardenActivities & IncidentActivities>({
    startToCloseTimeout: spec.supervisor.evalTimeoutMs,
    retry: { maximumAttempts: 1 },
  });
  const shell: Shell = { activities, localActivities, turnScope: null, pending: 0, ports: undefined as unknown as AgentPorts };
  const track = (p: Promise<unknown>) => {
    shell.pending += 1;
    void p.finally(() => (shell.pending -= 1));
  };
  let notifySeq = 0;
  const { otel } = proxySinks<WardenSinks>();
  shell.ports = {
    now: () => Date.now(),
    log,
    setDetails: (text) => setCurrentDetails(text),
    upsertSearchAttributes: (updates) => upsertSearchAttributes(updates as Parameters<typeof upsertSearchAttributes>[0]),
    patched,
    startNotification(input) {
      notifySeq += 1;
      // Held only until the child has started, never for its delivery.
      track(
        startNotifyChild(input, notifySeq).catch((err: unknown) =>
          log.error('notification workflow did not start', { agentId: spec.agentId, event: input.event.event, error: String(err) }),
        ),
      );
      return notifyWorkflowId(input.event.agentId, workflowInfo().runId, notifySeq);
    },
    joinIncident(req) {
      notifySeq += 1;
      const seq = notifySeq;
      const fallbackWorkflowId = notifyWorkflowId(spec.agentId, workflowInfo().runId, seq);
      // Held until the activity has joined (or sent the alert alone); if it cannot, the alert goes out alone here.
      track(
        activities.joinIncident
          .executeWithOptions({ ...JOIN_INCIDENT_OPTIONS, summary: `escalation of ${spec.agentId} → its incident` }, [{ ...req, fallbackWorkflowId }])
          .catch((err: unknown) => {
            log.warn('joining the incident failed: the alert goes out alone', { agentId: spec.agentId, error: String(err) });
            return startNotifyChild(req.alert, seq);
          })
          .catch((err: unknown) => log.error('notification workflow did not start', { agentId: spec.agentId, event: 'escalation', error: String(err) })),
      );
      return fallbackWorkflowId;
    },
    signalAgent(workflowId, signal) {
      const handle = getExternalWorkflowHandle(workflowId);
      const sent =
        signal.name === 'admit'
          ? handle.signal(m.admitSignal, signal.payload)
          : signal.name === 'stop'
            ? handle.signal(m.stopSignal, signal.payload)
            : handle.signal(m.childSpendSignal, signal.payload);
      track(sent.catch((err: unknown) => log.warn('signal to another agent failed', { agentId: spec.agentId, to: workflowId, error: String(err) })));
    },
    cancelTurn: () => shell.turnScope?.cancel(),
    telemetry: (event) => otel.event(event),
  };
  return shell;
}
