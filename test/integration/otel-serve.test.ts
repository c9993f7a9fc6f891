/**
 * OpenTelemetry in one process, against a real OTLP/HTTP receiver on 127.0.0.1: the hook
 * endpoint's latency histogram (what `warden serve` exports), and text in telemetry when the
 * operator opts in (WARDEN_OTEL_INCLUDE_TEXT=1). The worker's export is test/integration/otel.test.ts.
 */
import { request } from 'node:http';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createHookEndpoint } from '../../src/serve/hooks.js';
import { otel, startOtel } from '../../src/telemetry/otel.js';
import { recordAgentEvent } from '../../src/telemetry/record.js';
import { latest, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp.js';
import { eventually, quietLog } from '../helpers/stack.js';

let recv: OtlpReceiver;
let server: Server;
let port = 0;
const TOKEN = 'a'.repeat(64); // the endpoint file's format: 64 hex digits

beforeAll(async () => {
  recv = await startOtlpReceiver();
  // The exporters read their endpoint from the process's environment, as in `warden serve`.
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: recv.url,
    OTEL_METRIC_EXPORT_INTERVAL: '300',
    OTEL_BLRP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: '',
    WARDEN_OTEL_INCLUDE_TEXT: '1',
  });
  await startOtel('warden-serve', quietLog);
  const hooks = createHookEndpoint({
    log: quietLog,
    token: () => TOKEN,
    connect: async () => {
      throw new Error('UNAVAILABLE: no Temporal in this test');
    },
  });
  server = createServer((req, res) => {
    if (!hooks.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  port = typeof a === 'object' && a ? a.port : 0;
});

afterAll(async () => {
  await otel().shutdown();
  await new Promise<void>((r) => server?.close(() => r()));
  await recv?.close();
});

function post(path: string, body: string, token: string | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('hook latency: a histogram by hook event and status, answered or refused', async () => {
  const event = JSON.stringify({
    hook_event_name: 'PreToolUse',
    session_id: 's-otel',
    cwd: '/tmp',
    tool_name: 'Bash',
    tool_input: { command: 'echo agent-secret-A-1234' },
  });
  expect(await post('/hooks/claude', event, TOKEN)).toBe(200);
  expect(await post('/hooks/claude', event, null)).toBe(401);
  await eventually(
    async () => {
      const p = recv.points();
      return (
        latest(p, 'warden.hook.duration', { 'warden.hook.agent': 'claude', 'warden.hook.event': 'PreToolUse', 'http.response.status_code': 200 }) >= 1 &&
        latest(p, 'warden.hook.duration', { 'warden.hook.agent': 'claude', 'http.response.status_code': 401 }) >= 1
      );
    },
    { what: 'the hook latency histogram', timeoutMs: 10_000 },
  );
  const hist = recv.points().find((p) => p.metric === 'warden.hook.duration')!;
  expect(hist).toMatchObject({ kind: 'histogram', unit: 's' });
  expect(hist.resource['service.name']).toBe('warden-serve');
  expect(recv.raw.map((r) => r.body).join('\n')).not.toContain('agent-secret-A-1234');
});

test('with WARDEN_OTEL_INCLUDE_TEXT=1 the text of an event is exported with it', async () => {
  expect(otel().includeText).toBe(true);
  recordAgentEvent(
    { workflowId: 'agent-otel-text', runId: 'run-1' },
    {
      name: 'warden.whisper.queued',
      attrs: { 'warden.agent.id': 'otel-text', 'warden.whisper.type': 'CORRECTION' },
      text: { 'warden.whisper.text': 'go back to the build' },
    },
  );
  const log = await eventually(async () => recv.logs().find((l) => l.attributes['warden.agent.id'] === 'otel-text'), {
    what: 'the log record',
    timeoutMs: 10_000,
  });
  expect(log.attributes).toMatchObject({
    'warden.whisper.type': 'CORRECTION',
    'warden.whisper.text': 'go back to the build',
    'temporal.workflow.id': 'agent-otel-text',
  });
});
