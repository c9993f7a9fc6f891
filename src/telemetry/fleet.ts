/**
 * `warden.agents`: the fleet's open agents by state, an observable gauge read from Temporal's
 * visibility store (the `WardenState` search attribute every agent publishes) once per metric
 * export: one count query per live state, never one per agent. Every worker that exports metrics
 * reports the same fleet-wide numbers (aggregate with max, not sum).
 */
import { metrics, type ObservableResult } from '@opentelemetry/api';
import type { ConnectionLike } from '@temporalio/client';
import type { Logger } from 'pino';
import { STATES, TERMINAL_STATES } from '../domain/contract/states.js';
import { otel } from './otel.js';

/** The states an open agent workflow can be in (done and failed ones have closed). */
export const OPEN_STATES = STATES.filter((s) => !TERMINAL_STATES.includes(s));

/** The visibility query for the open agents in `state`. */
export const agentsInState = (state: string): string => `WorkflowType = 'agentWorkflow' AND ExecutionStatus = 'Running' AND WardenState = '${state}'`;

let observing = false;

/** Register the gauge (once per process; only when metrics are exported). */
export async function observeAgentsByState(connection: ConnectionLike, namespace: string, log: Logger): Promise<void> {
  if (observing || !otel().signals.includes('metrics')) return;
  observing = true;
  const { Client } = await import('@temporalio/client');
  const client = new Client({ connection, namespace });
  let warned = false;
  const gauge = metrics.getMeter('warden').createObservableGauge('warden.agents', {
    description: "Open agents by state, from Temporal's visibility store",
    unit: '{agent}',
  });
  gauge.addCallback(async (result: ObservableResult) => {
    try {
      const counts = await Promise.all(OPEN_STATES.map((state) => client.workflow.count(agentsInState(state))));
      for (const [i, state] of OPEN_STATES.entries()) result.observe(counts[i]!.count, { 'warden.agent.state': state });
      warned = false;
    } catch (err) {
      // No numbers rather than wrong ones: the visibility store is down or lacks WardenState.
      if (!warned) log.warn({ err: err instanceof Error ? err.message : String(err) }, 'warden.agents: counting agents by state failed');
      warned = true;
    }
  });
}
