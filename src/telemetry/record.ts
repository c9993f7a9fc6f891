/**
 * What warden records as OpenTelemetry, on the worker (evaluations, model calls, notifications, the
 * agents' own events from the workflow sink) and on `warden serve` (hook latency). Every function
 * returns at once when telemetry is off (src/telemetry/otel.ts). Names and attributes are listed in
 * docs/operating/observability.md; GenAI semantic conventions where they fit (gen_ai.*).
 *
 * Text written by an agent, an evaluator or a human (verdict messages, reasons, whispers, notes)
 * is exported only when the operator opts in (WARDEN_OTEL_INCLUDE_TEXT); everything else is
 * names, enumerations and numbers.
 */
import { type Attributes, type Counter, type Histogram, type Span, SeverityNumber, SpanKind, SpanStatusCode, logs, metrics, trace } from '@opentelemetry/api';
import type { EvaluateInput, EvaluateResult, NotificationEvent } from '../domain/contract/activity-types.js';
import type { EvaluatorConfig } from '../domain/contract/evaluator-schemas.js';
import type { TelemetryEvent } from '../domain/agent/telemetry.js';
import { otel } from './otel.js';

const SCOPE = 'warden';

interface Instruments {
  evaluations: Counter;
  flags: Counter;
  modelCalls: Counter;
  modelCost: Counter;
  tokens: Histogram;
  modelDuration: Histogram;
  transitions: Counter;
  whispers: Counter;
  alerts: Counter;
  controls: Counter;
  budgets: Counter;
  notifications: Counter;
  hookDuration: Histogram;
  meshAttempts: Counter;
  meshIntegrations: Counter;
}

let made: Instruments | null = null;
function instruments(): Instruments {
  if (made) return made;
  const m = metrics.getMeter(SCOPE);
  made = {
    evaluations: m.createCounter('warden.evaluations', { description: 'Evaluations finished, by evaluator, tier, verdict and pattern', unit: '{evaluation}' }),
    flags: m.createCounter('warden.flags', { description: 'Evaluations that flagged the agent, by verdict and pattern', unit: '{flag}' }),
    modelCalls: m.createCounter('warden.evaluator.calls', { description: "Calls to an evaluator's model, by evaluator, model and outcome", unit: '{call}' }),
    modelCost: m.createCounter('warden.evaluator.cost', { description: "What the evaluator's model calls cost, as the evaluator reported it", unit: 'USD' }),
    tokens: m.createHistogram('gen_ai.client.token.usage', { description: 'Tokens per evaluator model call, by gen_ai.token.type', unit: '{token}' }),
    modelDuration: m.createHistogram('gen_ai.client.operation.duration', { description: "Duration of an evaluator's model call", unit: 's' }),
    transitions: m.createCounter('warden.agent.transitions', {
      description: 'State changes of agents, by previous state, state and event',
      unit: '{transition}',
    }),
    whispers: m.createCounter('warden.whispers', { description: 'Whispers queued for and delivered to agents, by type', unit: '{whisper}' }),
    alerts: m.createCounter('warden.alerts', { description: 'Alerts raised (escalation, budget, circuit, orphan, awaiting input)', unit: '{alert}' }),
    controls: m.createCounter('warden.controls', {
      description: 'Human controls (steer, pause, resume, dismiss, abort …) taken or refused',
      unit: '{control}',
    }),
    budgets: m.createCounter('warden.budget.exhausted', {
      description: 'Agents that reached a budget (paused until a human raises it), by budget',
      unit: '{agent}',
    }),
    notifications: m.createCounter('warden.notifications', { description: 'Webhook delivery attempts, by event and outcome', unit: '{delivery}' }),
    hookDuration: m.createHistogram('warden.hook.duration', { description: 'Time `warden serve` took to answer a hook, by hook event and status', unit: 's' }),
    meshAttempts: m.createCounter('warden.mesh.attempts', { description: 'Mesh attempts that ended, by outcome and kind', unit: '{attempt}' }),
    meshIntegrations: m.createCounter('warden.mesh.integrations', {
      description: 'Gated mesh patches applied to the integration branch, refused, or in conflict',
      unit: '{patch}',
    }),
  };
  return made;
}

type Attrs = Record<string, string | number | boolean | undefined>;
const clean = (a: Attrs): Attributes => Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as Attributes;

/** The free text, when the operator opted in; else nothing. */
function texts(t: Record<string, string | undefined> | undefined): Attributes {
  if (!t || !otel().includeText) return {};
  return clean(t);
}

function emit(name: string, severity: SeverityNumber, attributes: Attributes): void {
  logs
    .getLogger(SCOPE)
    .emit({ eventName: name, severityNumber: severity, severityText: severity >= SeverityNumber.WARN ? 'WARN' : 'INFO', body: name, attributes });
}

/** An agent's or a mesh's event from the workflow sink (src/domain/agent/telemetry.ts, src/domain/mesh/telemetry.ts). */
export function recordAgentEvent(ids: { workflowId: string; runId: string }, e: TelemetryEvent): void {
  if (!otel().enabled) return;
  const a = e.attrs;
  const attributes: Attributes = { ...a, 'temporal.workflow.id': ids.workflowId, 'temporal.run.id': ids.runId, ...texts(e.text) };
  const i = instruments();
  switch (e.name) {
    case 'warden.agent.state_change':
      i.transitions.add(
        1,
        clean({
          'warden.agent.state.previous': a['warden.agent.state.previous'] as string,
          'warden.agent.state': a['warden.agent.state'] as string,
          'warden.agent.event': a['warden.agent.event'] as string,
        }),
      );
      break;
    case 'warden.whisper.queued':
    case 'warden.whisper.delivered':
      i.whispers.add(1, clean({ 'warden.whisper.type': a['warden.whisper.type'] as string, 'warden.whisper.stage': e.name.slice('warden.whisper.'.length) }));
      break;
    case 'warden.alert':
      i.alerts.add(1, clean({ 'warden.alert': a['warden.alert'] as string, 'warden.verdict.pattern': a['warden.verdict.pattern'] as string | undefined }));
      break;
    case 'warden.control':
      i.controls.add(1, clean({ 'warden.control': a['warden.control'] as string, 'warden.control.applied': a['warden.control.applied'] as boolean }));
      break;
    case 'warden.budget.exhausted':
      i.budgets.add(1, clean({ 'warden.budget': a['warden.budget'] as string }));
      break;
    case 'warden.mesh.attempt.finished':
      i.meshAttempts.add(
        1,
        clean({
          'warden.mesh.attempt.outcome': a['warden.mesh.attempt.outcome'] as string,
          'warden.mesh.attempt.kind': a['warden.mesh.attempt.kind'] as string,
        }),
      );
      break;
    case 'warden.mesh.integration':
      i.meshIntegrations.add(1, clean({ 'warden.mesh.integration.outcome': a['warden.mesh.integration.outcome'] as string }));
      break;
  }
  emit(e.name, warns(e) ? SeverityNumber.WARN : SeverityNumber.INFO, attributes);
}

/** Alerts, budgets reached, failed tasks and meshes, refused or conflicting patches, failed gates. */
function warns(e: TelemetryEvent): boolean {
  const a = e.attrs;
  switch (e.name) {
    case 'warden.alert':
    case 'warden.budget.exhausted':
      return true;
    case 'warden.mesh.attempt.finished':
      return a['warden.mesh.attempt.outcome'] === 'task-failed' || a['warden.mesh.attempt.outcome'] === 'mesh-failed';
    case 'warden.mesh.integration':
      return a['warden.mesh.integration.outcome'] !== 'merged';
    case 'warden.mesh.gates':
      return a['warden.mesh.gates.passed'] !== true;
    case 'warden.mesh.finished':
      return a['warden.mesh.phase'] === 'failed';
    default:
      return false;
  }
}

/** The model an evaluator asks (gen_ai.request.model), and who serves it where that is known. */
export function evaluatorModel(config: EvaluatorConfig, supervisorModel: string): { model?: string; provider?: string } {
  switch (config.kind) {
    case 'tiered':
      return evaluatorModel(config.model, supervisorModel);
    case 'codex':
      return { model: supervisorModel, provider: 'openai' };
    case 'claude':
      return { model: config.model ?? 'haiku', provider: 'anthropic' };
    case 'openai':
      return { model: config.model ?? supervisorModel };
    default:
      return {}; // heuristic: no model; command: whatever the program asks, warden does not know
  }
}

/**
 * Run one call of an evaluator's model inside a GenAI client span (`chat <model>`), a child of the
 * evaluation activity's span; `usage` reads what it cost from its result. Off: just `fn()`.
 */
export async function modelCallSpan<R>(
  meta: { evaluator: string; model?: string; provider?: string },
  fn: () => Promise<R>,
  usage: (r: R) => { tokensIn: number; tokensOut: number; costUsd: number; failed: boolean },
): Promise<R> {
  if (!otel().enabled) return fn();
  const attributes = clean({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': meta.model,
    'gen_ai.provider.name': meta.provider,
    'warden.evaluator': meta.evaluator,
  });
  const started = performance.now();
  return trace.getTracer(SCOPE).startActiveSpan(`chat${meta.model ? ` ${meta.model}` : ''}`, { kind: SpanKind.CLIENT, attributes }, async (span: Span) => {
    try {
      const r = await fn();
      const u = usage(r);
      span.setAttributes({ 'gen_ai.usage.input_tokens': u.tokensIn, 'gen_ai.usage.output_tokens': u.tokensOut, 'warden.evaluator.cost_usd': u.costUsd });
      if (u.failed) span.setStatus({ code: SpanStatusCode.ERROR });
      const i = instruments();
      const base = clean({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': meta.model, 'gen_ai.provider.name': meta.provider });
      i.modelDuration.record((performance.now() - started) / 1000, base);
      if (u.tokensIn > 0) i.tokens.record(u.tokensIn, { ...base, 'gen_ai.token.type': 'input' });
      if (u.tokensOut > 0) i.tokens.record(u.tokensOut, { ...base, 'gen_ai.token.type': 'output' });
      return r;
    } finally {
      span.end();
    }
  });
}

/** One evaluation finished: a log record, the counters, and its attributes on the activity's span. */
export function recordEvaluation(input: EvaluateInput, r: EvaluateResult, workflowId?: string): void {
  if (!otel().enabled) return;
  const { model, provider } = evaluatorModel(input.evaluator, input.model);
  const spend = r.spend;
  const asked = (spend?.calls ?? 0) > 0;
  const verdict = r.kind === 'verdict' ? r.verdict : null;
  const common = clean({
    'warden.evaluator': input.evaluator.kind,
    'warden.evaluation.tier': r.tier,
    'warden.verdict': verdict ? verdict.kind : 'skipped',
    'warden.verdict.pattern': verdict?.pattern ?? undefined,
  });
  const attributes: Attributes = {
    ...common,
    ...clean({
      'warden.agent.id': input.agentId,
      'temporal.workflow.id': workflowId,
      'warden.evaluation.reason': input.reason,
      'warden.evaluation.asked': r.asked ?? undefined,
      'warden.evaluation.duration_ms': r.durationMs,
      'warden.evaluation.turns': input.turns.length,
      'gen_ai.operation.name': asked ? 'chat' : undefined,
      'gen_ai.request.model': asked ? model : undefined,
      'gen_ai.provider.name': asked ? provider : undefined,
      'gen_ai.usage.input_tokens': asked ? spend?.tokensIn : undefined,
      'gen_ai.usage.output_tokens': asked ? spend?.tokensOut : undefined,
      'warden.evaluator.cost_usd': asked ? spend?.costUsd : undefined,
    }),
    ...texts({
      'warden.verdict.message': verdict?.message,
      'warden.evaluation.skip_reason': r.kind === 'skipped' ? r.reason : undefined,
      'warden.evaluation.model_error': r.modelError,
    }),
  };
  const i = instruments();
  i.evaluations.add(1, common);
  if (verdict && verdict.kind !== 'OK')
    i.flags.add(1, clean({ 'warden.verdict': verdict.kind, 'warden.verdict.pattern': verdict.pattern ?? undefined, 'warden.evaluator': input.evaluator.kind }));
  if (spend && spend.calls > 0) {
    const m = clean({ 'warden.evaluator': input.evaluator.kind, 'gen_ai.request.model': model });
    i.modelCalls.add(spend.calls - spend.failed, { ...m, 'warden.evaluator.outcome': 'ok' });
    if (spend.failed > 0) i.modelCalls.add(spend.failed, { ...m, 'warden.evaluator.outcome': 'failed' });
    if (spend.costUsd > 0) i.modelCost.add(spend.costUsd, m);
  }
  trace.getActiveSpan()?.setAttributes(attributes);
  emit('warden.evaluation', verdict && verdict.kind !== 'OK' ? SeverityNumber.WARN : SeverityNumber.INFO, attributes);
}

/** One webhook delivery attempt of a notification, and how it went. */
export function recordNotification(event: NotificationEvent, outcome: { delivered: boolean; status: number | null; deliveryId: string; format: string }): void {
  if (!otel().enabled) return;
  const attributes = clean({
    'warden.agent.id': event.agentId,
    'temporal.workflow.id': event.workflowId,
    'warden.notification.event': event.event,
    'warden.notification.delivery_id': outcome.deliveryId,
    'warden.notification.format': outcome.format,
    'warden.notification.delivered': outcome.delivered,
    'http.response.status_code': outcome.status ?? undefined,
    'warden.escalation.step': event.step,
  });
  instruments().notifications.add(1, clean({ 'warden.notification.event': event.event, 'warden.notification.delivered': outcome.delivered }));
  emit('warden.notification', outcome.delivered ? SeverityNumber.INFO : SeverityNumber.WARN, {
    ...attributes,
    ...texts({ 'warden.notification.reason': event.reason }),
  });
}

/** `warden serve` answered one hook. */
export function recordHookLatency(seconds: number, attrs: { agent: string; event: string; status: number }): void {
  if (!otel().enabled) return;
  instruments().hookDuration.record(seconds, { 'warden.hook.agent': attrs.agent, 'warden.hook.event': attrs.event, 'http.response.status_code': attrs.status });
}
