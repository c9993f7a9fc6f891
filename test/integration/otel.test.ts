/**
 * OpenTelemetry export, end to end: a real worker process (node dist/workers/main.js) configured
 * only by the standard OTEL_* environment variables, a real dev server, and a real OTLP/HTTP
 * receiver on 127.0.0.1 (test/helpers/otlp.ts). Agents are driven to a flag, whispers, an
 * escalation with its webhook, a human's resume, a budget warning and pause, and an evaluation by a model (the
 * scripted OpenAI-compatible server); the log records, spans and metrics that arrive are asserted
 * by name and attributes, and nothing the agents wrote is in any of them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startChatServer, type ChatServer } from '../fixtures/chat-server.js';
import { productiveTurns, reportWithEvaluations, spiralTurn, waitForEvaluations, waitForStatus } from '../helpers/agents.js';
import { latest, startOtlpReceiver, type OtlpLog, type OtlpReceiver } from '../helpers/otlp.js';
import { clientFor, eventually, useWorkerProcesses, workerProcess } from '../helpers/stack.js';

const MODEL = 'warden-otel-test-model';
const TASK = 'Make the build pass (task marker T-OTEL-4471)';
const VERDICT_MESSAGE = 'you drifted into billing; go back to the build (verdict marker V-9931)';
const DRIFT_TEXT = 'Refactoring the billing module while I am here (agent marker A-5520).';

const env: Record<string, string> = {};
const stack = useWorkerProcesses(env);
let recv: OtlpReceiver;
let chat: ChatServer;

beforeAll(async () => {
  recv = await startOtlpReceiver();
  chat = await startChatServer();
  Object.assign(env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: recv.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'warden-otel-test',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci,team=platform',
    OTEL_METRIC_EXPORT_INTERVAL: '500',
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_BLRP_SCHEDULE_DELAY: '200',
    WARDEN_OTEL_INCLUDE_TEXT: '',
  });
  stack.spawnWorker();
});

afterAll(async () => {
  await chat?.close();
  await recv?.close();
});

const logsOf = (agentId: string, eventName: string): OtlpLog[] =>
  recv.logs().filter((l) => l.eventName === eventName && l.attributes['warden.agent.id'] === agentId);
const waitForLog = (agentId: string, eventName: string, pred: (l: OtlpLog) => boolean = () => true) =>
  eventually(async () => logsOf(agentId, eventName).find(pred), { what: `${eventName} of ${agentId}`, timeoutMs: 20_000 });

describe('OpenTelemetry export from the worker', () => {
  test('a spiraling agent: evaluations, whispers, the escalation and its webhook, a resume: log records, spans and metrics', async () => {
    const agentId = 'otel-spiral';
    await stack.warden.start({ agentId, task: TASK, notify: { webhooks: [{ url: `${recv.url}/webhook` }] } });
    const turns = Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1));
    await reportWithEvaluations(stack.warden, agentId, turns);
    await waitForStatus(stack.warden, agentId, (s) => s.state === 'awaiting-input' && s.escalations === 1, 'the escalation');
    await stack.warden.signal(agentId, 'resume', { note: 'looked at it (human marker H-7788)' });
    await waitForStatus(stack.warden, agentId, (s) => s.state === 'running', 'running again');

    // The evaluation: verdict, pattern, tier, evaluator, on the agent and its workflow.
    const evaluation = await waitForLog(agentId, 'warden.evaluation', (l) => l.attributes['warden.verdict.pattern'] === 'SPIRALING');
    expect(evaluation.attributes).toMatchObject({
      'warden.evaluator': 'heuristic',
      'warden.evaluation.tier': 'heuristic',
      'warden.evaluation.reason': 'interval',
      'temporal.workflow.id': `agent-${agentId}`,
    });
    expect(['CORRECTION', 'THINK_DEEPER', 'ESCALATION']).toContain(evaluation.attributes['warden.verdict']);
    expect(evaluation.resource).toMatchObject({ 'service.name': 'warden-otel-test', 'deployment.environment.name': 'ci', team: 'platform' });
    expect(evaluation.attributes['gen_ai.request.model']).toBeUndefined(); // the heuristic calls no model

    // The workflow's own events, through the sink: whispers queued and delivered, the escalation, state changes, the resume.
    const queued = await waitForLog(agentId, 'warden.whisper.queued');
    expect(queued.attributes).toMatchObject({ 'warden.whisper.type': 'CORRECTION', 'temporal.workflow.id': `agent-${agentId}` });
    await waitForLog(agentId, 'warden.whisper.delivered', (l) => l.attributes['warden.whisper.id'] === queued.attributes['warden.whisper.id']);
    const alert = await waitForLog(agentId, 'warden.alert', (l) => l.attributes['warden.alert'] === 'escalation');
    expect(alert.attributes).toMatchObject({ 'warden.verdict.pattern': 'SPIRALING', 'warden.escalation.number': 1, 'warden.notify.channels': 1 });
    expect(alert.severityText).toBe('WARN');
    await waitForLog(
      agentId,
      'warden.agent.state_change',
      (l) => l.attributes['warden.agent.state'] === 'awaiting-input' && l.attributes['warden.agent.event'] === 'escalate',
    );
    await waitForLog(
      agentId,
      'warden.agent.state_change',
      (l) => l.attributes['warden.agent.state.previous'] === 'awaiting-input' && l.attributes['warden.agent.state'] === 'running',
    );
    const control = await waitForLog(agentId, 'warden.control', (l) => l.attributes['warden.control'] === 'resume');
    expect(control.attributes).toMatchObject({ 'warden.control.applied': true, 'warden.agent.state': 'running' });
    const delivery = await waitForLog(agentId, 'warden.notification');
    expect(delivery.attributes).toMatchObject({
      'warden.notification.event': 'escalation',
      'warden.notification.delivered': true,
      'http.response.status_code': 200,
    });
    expect(recv.other.some((r) => r.path === '/webhook')).toBe(true);

    // Each state change once: the sink is not called again when the worker replays a workflow.
    const escalated = logsOf(agentId, 'warden.agent.state_change').filter((l) => l.attributes['warden.agent.event'] === 'escalate');
    expect(escalated).toHaveLength(1);

    // Spans: the activity interceptor's span for each evaluation, carrying the evaluation's attributes.
    const span = await eventually(
      async () => recv.spans().find((s) => s.attributes['warden.agent.id'] === agentId && s.attributes['warden.verdict.pattern'] === 'SPIRALING'),
      { what: 'an evaluation span', timeoutMs: 20_000 },
    );
    expect(span.name).toBe('RunActivity:evaluate');
    expect(span.resource['service.name']).toBe('warden-otel-test');

    // Metrics: evaluations and flags by pattern, transitions by state, whispers, alerts, controls.
    await eventually(
      async () => {
        const p = recv.points();
        return (
          latest(p, 'warden.evaluations', { 'warden.verdict.pattern': 'SPIRALING', 'warden.evaluator': 'heuristic' }) >= 3 &&
          latest(p, 'warden.flags', { 'warden.verdict.pattern': 'SPIRALING' }) >= 3 &&
          latest(p, 'warden.agent.transitions', { 'warden.agent.state': 'awaiting-input', 'warden.agent.event': 'escalate' }) >= 1 &&
          latest(p, 'warden.whispers', { 'warden.whisper.type': 'CORRECTION', 'warden.whisper.stage': 'delivered' }) >= 1 &&
          latest(p, 'warden.alerts', { 'warden.alert': 'escalation' }) >= 1 &&
          latest(p, 'warden.controls', { 'warden.control': 'resume', 'warden.control.applied': true }) >= 1 &&
          latest(p, 'warden.notifications', { 'warden.notification.event': 'escalation', 'warden.notification.delivered': true }) >= 1
        );
      },
      { what: 'the metrics', timeoutMs: 20_000 },
    );
    // The fleet by state, from the visibility store: this agent is running again.
    await eventually(
      async () => {
        const running = recv.points().filter((p) => p.metric === 'warden.agents' && p.attributes['warden.agent.state'] === 'running');
        return running.length > 0 && running.at(-1)!.value >= 1 && running.at(-1)!.kind === 'gauge';
      },
      { what: 'warden.agents by state', timeoutMs: 20_000 },
    );
    expect(recv.points().find((p) => p.metric === 'warden.agents')!.resource['service.instance.id']).toBeTruthy();
  });

  test('an evaluation by a model: a GenAI client span and the model calls, tokens and cost', async () => {
    const agentId = 'otel-model';
    chat.setScript([
      {
        kind: 'json',
        body: {
          id: 'chatcmpl-otel-1',
          object: 'chat.completion',
          model: MODEL,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: JSON.stringify({ verdict: 'CORRECTION', pattern: 'DRIFT', message: VERDICT_MESSAGE, evidence: [2] }) },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 1200, completion_tokens: 34, total_tokens: 1234, cost: 0.0042 },
        },
      },
    ]);
    await stack.warden.start({
      agentId,
      task: TASK,
      evaluator: { kind: 'openai', baseUrl: chat.baseUrl },
      supervisor: { evalInterval: 2, idleAfterMs: 0, model: MODEL },
    });
    await stack.warden.reportTurn(agentId, { id: 'm1', text: DRIFT_TEXT });
    await stack.warden.reportTurn(agentId, { id: 'm2', text: DRIFT_TEXT });
    await waitForEvaluations(stack.warden, agentId, 1);

    const evaluation = await waitForLog(agentId, 'warden.evaluation');
    expect(evaluation.attributes).toMatchObject({
      'warden.evaluator': 'openai',
      'warden.evaluation.tier': 'model',
      'warden.verdict': 'CORRECTION',
      'warden.verdict.pattern': 'DRIFT',
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': MODEL,
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 34,
      'warden.evaluator.cost_usd': 0.0042,
    });
    const [activity, call] = await eventually(
      async () => {
        const spans = recv.spans();
        const a = spans.find((s) => s.name === 'RunActivity:evaluate' && s.attributes['warden.agent.id'] === agentId);
        const c = a && spans.find((s) => s.name === `chat ${MODEL}` && s.parentSpanId === a.spanId);
        return a && c ? ([a, c] as const) : null;
      },
      { what: 'the evaluation span and its model call', timeoutMs: 20_000 },
    );
    expect(call.traceId).toBe(activity.traceId);
    expect(call.kind).toBe(3); // CLIENT
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': MODEL,
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 34,
    });
    await eventually(
      async () => {
        const p = recv.points();
        return (
          latest(p, 'warden.evaluator.calls', { 'gen_ai.request.model': MODEL, 'warden.evaluator.outcome': 'ok' }) >= 1 &&
          latest(p, 'warden.evaluator.cost', { 'gen_ai.request.model': MODEL }) >= 0.0042 &&
          latest(p, 'gen_ai.client.token.usage', { 'gen_ai.request.model': MODEL, 'gen_ai.token.type': 'input' }) >= 1 &&
          latest(p, 'gen_ai.client.operation.duration', { 'gen_ai.request.model': MODEL }) >= 1
        );
      },
      { what: 'the model-call metrics', timeoutMs: 20_000 },
    );
  });

  test('a budget pauses an agent: the warning, the budget event, and the transition to paused', async () => {
    const agentId = 'otel-budget';
    await stack.warden.start({ agentId, task: TASK, budgets: { turns: 5 } });
    for (const t of productiveTurns(1, 5)) await stack.warden.reportTurn(agentId, t);
    await waitForStatus(stack.warden, agentId, (s) => s.state === 'paused-by-user', 'paused at its budget');
    const warning = await waitForLog(agentId, 'warden.budget.warning');
    expect(warning.attributes).toMatchObject({ 'warden.budget': 'turns' });
    const budget = await waitForLog(agentId, 'warden.budget.exhausted');
    expect(budget.attributes).toMatchObject({ 'warden.budget': 'turns', 'warden.budget.limit': 5 });
    await waitForLog(agentId, 'warden.alert', (l) => l.attributes['warden.alert'] === 'budget-exhausted');
    await waitForLog(agentId, 'warden.agent.state_change', (l) => l.attributes['warden.agent.state'] === 'paused-by-user');
    await stack.warden.signal(agentId, 'abort', {});
  });

  test("the workflow's spans: RunWorkflow:agentWorkflow when the run ends, the evaluation's activity span below it", async () => {
    const agentId = 'otel-spiral'; // the first test's agent: its evaluations ran
    await stack.warden.signal(agentId, 'abort', {});
    const run = await eventually(
      async () => recv.spans().find((s) => s.name === 'RunWorkflow:agentWorkflow' && s.attributes.temporalWorkflowId === `agent-${agentId}`),
      { what: "the agent's RunWorkflow span", timeoutMs: 30_000 },
    );
    expect(run.parentSpanId).toBe(''); // a root: nothing started the workflow inside a trace
    expect(run.scope).toBe('@temporalio/interceptor-workflow');
    expect(run.resource['service.name']).toBe('warden-otel-test');
    expect(run.attributes.run_id).toBeTruthy();
    // An evaluation of that run: RunActivity:evaluate, child of the StartActivity:evaluate span the
    // workflow made when it scheduled it, child of the run's span; one trace.
    const spans = recv.spans();
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const evaluation = spans.find(
      (s) => s.name === 'RunActivity:evaluate' && s.attributes['warden.agent.id'] === agentId && s.attributes.run_id === run.attributes.run_id,
    );
    expect(evaluation, 'an evaluation span of the run').toBeDefined();
    expect(evaluation!.traceId).toBe(run.traceId);
    const chain: string[] = [];
    for (let s = byId.get(evaluation!.parentSpanId); s; s = byId.get(s.parentSpanId)) chain.push(s.name);
    expect(chain).toEqual(['StartActivity:evaluate', 'RunWorkflow:agentWorkflow']);
  });

  test('a worker that stops (SIGTERM) exports what it still held in its batches', async () => {
    const queue = 'otel-flush';
    const service = 'warden-otel-flush';
    // Batches that would wait ten minutes: only the shutdown sends them.
    const worker = workerProcess(stack.server, {
      ...env,
      OTEL_SERVICE_NAME: service,
      OTEL_BLRP_SCHEDULE_DELAY: '600000',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
      WARDEN_TASK_QUEUE: queue,
    });
    const client = await clientFor(stack.server, queue);
    try {
      await client.start({ agentId: 'otel-flush', task: TASK });
      await client.reportTurn('otel-flush', productiveTurns(1, 1)[0]!);
      await waitForStatus(client, 'otel-flush', (s) => s.state === 'running', 'the first turn taken');
      const mine = () => recv.logs().filter((l) => l.resource['service.name'] === service);
      expect(mine()).toEqual([]);
      worker.kill('SIGTERM');
      const exited = await worker;
      expect(exited.exitCode).toBe(0);
      expect(mine().some((l) => l.eventName === 'warden.agent.state_change' && l.attributes['warden.agent.state'] === 'running')).toBe(true);
      expect(recv.points().some((p) => p.resource['service.name'] === service && p.metric === 'warden.agent.transitions')).toBe(true);
    } finally {
      await client.close();
      if (worker.exitCode === null) worker.kill('SIGKILL');
    }
  });

  test('no text written by an agent, an evaluator or a human in anything exported (the operator did not opt in)', () => {
    const all = recv.raw.map((r) => r.body).join('\n');
    expect(all.length).toBeGreaterThan(1000);
    for (const marker of ['T-OTEL-4471', 'V-9931', 'A-5520', 'H-7788', 'The build failed again', 'npm run build', "Cannot find module './config'"]) {
      expect(all, marker).not.toContain(marker);
    }
    // Nor the text of warden's own whispers and reasons, which quote verdicts.
    for (const key of ['warden.whisper.text', 'warden.verdict.message', 'warden.alert.reason', 'warden.agent.state.reason', 'warden.control.note']) {
      expect(all, key).not.toContain(key);
    }
  });
});
