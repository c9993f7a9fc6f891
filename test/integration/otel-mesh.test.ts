/**
 * The mesh's OpenTelemetry export, end to end: a real worker process configured by the OTEL_*
 * environment, a real dev server, real git, the fixture mesh agent, and a real OTLP/HTTP receiver.
 * One task, hedge budget 2: the first attempt is silent, a hedge starts beside it, passes the
 * gates and is merged; the first loses. Then the mesh is cancelled and ends. The log records and
 * metrics that arrive are asserted; the task's text is in none of them (no opt-in).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cancelMesh, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { gitRepo, meshInput } from '../helpers/mesh.js';
import { latest, startOtlpReceiver, type OtlpLog, type OtlpReceiver } from '../helpers/otlp.js';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const env: Record<string, string> = { WARDEN_HOME: HOME };
const stack = useWorkerProcesses(env);
let recv: OtlpReceiver;

beforeAll(async () => {
  recv = await startOtlpReceiver();
  Object.assign(env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: recv.url,
    OTEL_SERVICE_NAME: 'warden-otel-mesh-test',
    OTEL_METRIC_EXPORT_INTERVAL: '500',
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_BLRP_SCHEDULE_DELAY: '200',
  });
  stack.spawnWorker();
});

afterAll(async () => {
  await recv?.close();
});

const RUN = 'otelmesh';
const meshLogs = (eventName: string): OtlpLog[] => recv.logs().filter((l) => l.eventName === eventName && l.attributes['warden.mesh.run.id'] === RUN);
const waitForLog = (eventName: string, pred: (l: OtlpLog) => boolean = () => true) =>
  eventually(async () => meshLogs(eventName).find(pred), { what: eventName, timeoutMs: 60_000 });

test('a hedged mesh: attempts started and finished by outcome, gates, the merge, the mesh finished; the attempts by outcome', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n' });
  const tasks = [{ title: 'Uppercase a {silent-a1} {edit a.txt:1:A} (task marker M-6614)', slug: 'a', scope: ['a.txt'] }];
  await startMesh(stack.warden, meshInput(RUN, repo, tasks, { ackSla: '5s', patchDraftTimeout: '300s', stallThreshold: 60, hedgeBudget: 2 }));
  await waitForMesh(stack.warden, RUN, (s) => s.phase === 'ready', 180_000);

  const first = await waitForLog('warden.mesh.attempt.started', (l) => l.attributes['warden.mesh.attempt'] === 1);
  expect(first.attributes).toMatchObject({
    'warden.mesh.task': 1,
    'warden.mesh.attempt.kind': 'worker',
    'warden.mesh.attempt.hedge': false,
    'warden.agent.id': `${RUN}.a.a1`,
    'temporal.workflow.id': `mesh-${RUN}`,
  });
  const hedge = await waitForLog('warden.mesh.attempt.started', (l) => l.attributes['warden.mesh.attempt'] === 2);
  expect(hedge.attributes['warden.mesh.attempt.hedge']).toBe(true);
  const gates = await waitForLog('warden.mesh.gates', (l) => l.attributes['warden.mesh.attempt'] === 2 && l.attributes['warden.mesh.gates.passed'] === true);
  expect(gates.attributes['warden.mesh.gates']).toMatch(/A=ok/);
  const merged = await waitForLog('warden.mesh.integration', (l) => l.attributes['warden.mesh.attempt'] === 2);
  expect(merged.attributes).toMatchObject({ 'warden.mesh.integration.outcome': 'merged', 'warden.mesh.patch.files': 1 });
  expect(merged.severityText).toBe('INFO');
  const won = await waitForLog('warden.mesh.attempt.finished', (l) => l.attributes['warden.mesh.attempt'] === 2);
  expect(won.attributes['warden.mesh.attempt.outcome']).toBe('integrated');
  const lost = await waitForLog('warden.mesh.attempt.finished', (l) => l.attributes['warden.mesh.attempt'] === 1);
  expect(lost.attributes['warden.mesh.attempt.outcome']).toBe('hedge-lost');
  // Each attempt finishes once.
  expect(meshLogs('warden.mesh.attempt.finished')).toHaveLength(2);

  await cancelMesh(stack.warden, RUN, 'test over');
  const finished = await waitForLog('warden.mesh.finished');
  expect(finished.attributes).toMatchObject({
    'warden.mesh.phase': 'cancelled',
    'warden.mesh.tasks': 1,
    'warden.mesh.tasks.integrated': 1,
    'warden.mesh.tasks.failed': 0,
    'warden.mesh.attempts': 2,
  });
  expect(finished.resource['service.name']).toBe('warden-otel-mesh-test');

  await eventually(
    async () => {
      const p = recv.points();
      return (
        latest(p, 'warden.mesh.attempts', { 'warden.mesh.attempt.outcome': 'integrated' }) >= 1 &&
        latest(p, 'warden.mesh.attempts', { 'warden.mesh.attempt.outcome': 'hedge-lost' }) >= 1 &&
        latest(p, 'warden.mesh.integrations', { 'warden.mesh.integration.outcome': 'merged' }) >= 1
      );
    },
    { what: 'the mesh metrics', timeoutMs: 20_000 },
  );

  // No text without the operator's opt-in: not the task, not a reason.
  const all = recv.raw.map((r) => r.body).join('\n');
  for (const marker of ['M-6614', 'Uppercase a', 'warden.mesh.attempt.reason', 'warden.mesh.phase.reason', 'test over'])
    expect(all, marker).not.toContain(marker);
}, 400_000);
