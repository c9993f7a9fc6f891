/**
 * A harness for the pure agent core: a fake clock and ports that record every call, so the rules
 * of the workflow are tested in milliseconds with no server. What the ports record is exactly
 * what the workflow shell would turn into Temporal commands.
 */
import { LATER_SEARCH_ATTRIBUTES } from '../../src/domain/contract/search-attributes.js';
import type { AgentContext, AgentPorts, AgentSignal, IncidentRequest, SearchAttributeUpdate } from '../../src/domain/agent/context.js';
import type { PatchId } from '../../src/domain/contract/patches.js';
import { createCore, type CarriedState } from '../../src/domain/agent/state.js';
import { AgentSpecSchema, type AgentSpecInput } from '../../src/domain/contract/schemas.js';
import type { NotifyWorkflowInput } from '../../src/domain/notify/notify.js';
import type { TelemetryEvent } from '../../src/domain/agent/telemetry.js';

export const T0 = Date.parse('2026-11-23T09:00:00.000Z');

export interface Recorded {
  details: string[];
  upserts: SearchAttributeUpdate[][];
  notifications: NotifyWorkflowInput[];
  signals: { workflowId: string; signal: AgentSignal }[];
  cancels: number;
  patches: PatchId[];
  incidents: IncidentRequest[];
  logs: { level: 'info' | 'warn' | 'error'; message: string; meta?: Record<string, unknown> }[];
  telemetry: TelemetryEvent[];
}

export interface TestAgent extends AgentContext {
  clock: { now: number; advance(ms: number): void };
  rec: Recorded;
}

export function testAgent(
  spec: Partial<AgentSpecInput> = {},
  opts: { carried?: CarriedState; patches?: Partial<Record<PatchId, boolean>>; laterAttributes?: readonly string[] } = {},
): TestAgent {
  const clock = {
    now: T0,
    advance(ms: number) {
      clock.now += ms;
    },
  };
  const rec: Recorded = { details: [], upserts: [], notifications: [], signals: [], cancels: 0, patches: [], incidents: [], logs: [], telemetry: [] };
  const ports: AgentPorts = {
    now: () => clock.now,
    log: {
      info: (message, meta) => rec.logs.push({ level: 'info', message, meta }),
      warn: (message, meta) => rec.logs.push({ level: 'warn', message, meta }),
      error: (message, meta) => rec.logs.push({ level: 'error', message, meta }),
    },
    setDetails: (text) => rec.details.push(text),
    upsertSearchAttributes: (u) => rec.upserts.push(u),
    patched: (id) => {
      rec.patches.push(id);
      return opts.patches?.[id] ?? true;
    },
    startNotification: (input) => `notify-${input.event.agentId}-run-1-${rec.notifications.push(input)}`,
    joinIncident: (input) => `notify-${input.alert.event.agentId}-run-1-i${rec.incidents.push(input)}`,
    signalAgent: (workflowId, signal) => rec.signals.push({ workflowId, signal }),
    cancelTurn: () => (rec.cancels += 1),
    telemetry: (event) => rec.telemetry.push(event),
  };
  const parsed = AgentSpecSchema.parse({ agentId: 'a1', task: 'Make the build pass', ...spec });
  const core = createCore(
    parsed,
    // A run started by today's client has every search attribute added later (search-attributes.ts).
    { workflowId: `agent-${parsed.agentId}`, runId: 'run-1', laterAttributes: opts.laterAttributes ?? LATER_SEARCH_ATTRIBUTES },
    clock.now,
    opts.carried,
  );
  return { core, ports, clock, rec };
}

/** A turn as an external agent reports it. */
export const turn = (id: string, text = `turn ${id}`, extra: Record<string, unknown> = {}) => ({ id, text, ...extra });

/** The same failing shell call, as a spiraling agent makes it. */
export const failingTurn = (id: string) => ({
  id,
  text: 'Trying the build again',
  toolCalls: [{ name: 'shell', args: 'npm run build', result: 'error TS2307: Cannot find module', ok: false }],
});
