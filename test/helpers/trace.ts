/**
 * A test agent whose every port call lands in one ordered trace (test/unit/*-trace.test.ts): the
 * order of commands is what a recorded history replays, so the traces hold the code to it.
 */
import type { AgentPorts } from '../../src/domain/agent/context.js';
import { reportTurn } from './report.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from './evaluation.js';
import type { EvaluateResult } from '../../src/domain/contract/activity-types.js';
import type { PatchId } from '../../src/domain/contract/patches.js';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import { testAgent, type TestAgent } from './core.js';

export type Step = [string, unknown];

/** A test agent whose every port call (and recorded telemetry) lands in one ordered trace. */
export function traced(spec: Partial<AgentSpecInput>, patches?: Partial<Record<PatchId, boolean>>): { a: TestAgent; trace: Step[] } {
  const a = testAgent(spec, patches ? { patches } : {});
  const trace: Step[] = [];
  const inner = a.ports;
  const log = (level: 'info' | 'warn' | 'error') => (message: string, meta?: Record<string, unknown>) => {
    trace.push([`log.${level}`, { message, meta }]);
    inner.log[level](message, meta);
  };
  const ports: AgentPorts = {
    now: inner.now, // a query, not an effect: how often the rules ask is theirs
    log: { info: log('info'), warn: log('warn'), error: log('error') },
    setDetails: (t) => trace.push(['setDetails', t]),
    upsertSearchAttributes: (u) => trace.push(['upsert', u]),
    patched: (id) => {
      trace.push(['patched', id]);
      return inner.patched(id);
    },
    startNotification: (input) => {
      trace.push(['startNotification', input]);
      return inner.startNotification(input);
    },
    joinIncident: (input) => {
      trace.push(['joinIncident', input]);
      return inner.joinIncident(input);
    },
    signalAgent: (workflowId, sig) => trace.push(['signalAgent', { workflowId, sig }]),
    cancelTurn: () => trace.push(['cancelTurn', null]),
    telemetry: (e) => trace.push(['telemetry', e]),
  };
  a.ports = ports;
  return { a, trace };
}

/** Report `raw`, then append the reply, the telemetry recorded and the state left. */
export function report(a: TestAgent, trace: Step[], raw: unknown): void {
  const reply = reportTurn(a, raw);
  trace.push(['reply', reply]);
  trace.push(['outbox', a.core.run.outbox]);
  a.core.run.outbox = [];
  trace.push(['state', JSON.parse(JSON.stringify(a.core.s))]);
}

/** Run `what` (a signal, a child's end), then append the telemetry recorded and the state left. */
export function step(a: TestAgent, trace: Step[], what: () => void): void {
  what();
  trace.push(['outbox', a.core.run.outbox]);
  a.core.run.outbox = [];
  trace.push(['state', JSON.parse(JSON.stringify(a.core.s))]);
}

export const spiral: EvaluateResult = {
  kind: 'verdict',
  verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'You keep running the same failing build' },
  evaluator: 'heuristic',
  durationMs: 1,
};

/** Report `raw` and evaluate the window with `result`, as the loop would. */
export function reportAndJudge(a: TestAgent, trace: Step[], raw: unknown, result: EvaluateResult): void {
  report(a, trace, raw);
  if (a.core.s.evalQueue.length === 0) return;
  step(a, trace, () => applyEvaluation(a, result, startEvaluation(a)));
}
