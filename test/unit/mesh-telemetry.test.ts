/**
 * The mesh's telemetry events (src/domain/mesh/telemetry.ts): ids, numbers and enumerations in
 * `attrs`, reasons only in `text`; a hedge is an attempt started beside a live one; a gate result
 * only when the gates passed or a gate newly failed.
 */
import { describe, expect, test } from 'vitest';
import { setGate } from '../../src/domain/mesh/gates.js';
import type { Attempt, TaskRecord } from '../../src/domain/mesh/state.js';
import { attemptFinished, attemptStarted, gateResult, gateSnapshot, integration, meshFinished } from '../../src/domain/mesh/telemetry.js';
import { freshAttempt, meshStatus, meshTask, taskRecord } from '../helpers/mesh-fixtures.js';

const TASK = meshTask('patch-first', ['a.txt']);
const attempt = (n: number, over: Partial<Attempt> = {}): Attempt =>
  freshAttempt(TASK, { attempt: n, agentId: `r.t.a${n}`, workflowId: `agent-r.t.a${n}`, ...over });
const task = (attempts: Attempt[], over: Partial<TaskRecord> = {}): TaskRecord => taskRecord(TASK, attempts, { state: 'running', ...over });

describe('mesh telemetry events', () => {
  test('an attempt started: a hedge when another attempt of the task is live', () => {
    const a1 = attempt(1);
    const r = task([a1]);
    expect(attemptStarted('r', r, a1)).toEqual({
      name: 'warden.mesh.attempt.started',
      attrs: {
        'warden.mesh.run.id': 'r',
        'warden.mesh.task': TASK.index,
        'warden.mesh.attempt': 1,
        'warden.mesh.attempt.kind': 'worker',
        'warden.agent.id': 'r.t.a1',
        'warden.mesh.attempt.mode': a1.mode,
        'warden.mesh.attempt.hedge': false,
      },
    });
    const a2 = attempt(2);
    r.attempts.push(a2);
    expect(attemptStarted('r', r, a2).attrs['warden.mesh.attempt.hedge']).toBe(true);
    // A replacement (the first closed before the new one starts) is no hedge.
    const r2 = task([attempt(1, { closed: true }), attempt(2)]);
    expect(attemptStarted('r', r2, r2.attempts[1]!).attrs['warden.mesh.attempt.hedge']).toBe(false);
  });

  test('an attempt finished: its outcome in attrs, its reason only as text', () => {
    const a = attempt(1);
    const e = attemptFinished('r', task([a]), a, 'hedge-lost', 'attempt 2 won the task');
    expect(e.attrs['warden.mesh.attempt.outcome']).toBe('hedge-lost');
    expect(JSON.stringify(e.attrs)).not.toContain('won the task');
    expect(e.text).toEqual({ 'warden.mesh.attempt.reason': 'attempt 2 won the task' });
  });

  test('a gate result: passed (newly ready) or a gate newly failed; else nothing', () => {
    const a = attempt(1);
    const r = task([a]);
    let before = gateSnapshot(a);
    expect(gateResult('r', r, a, before)).toBeNull();
    setGate(a, 'S', 'fail');
    expect(gateResult('r', r, a, before)?.attrs).toMatchObject({ 'warden.mesh.gates.passed': false, 'warden.mesh.gate.failed': 'S' });
    before = gateSnapshot(a);
    expect(gateResult('r', r, a, before)).toBeNull(); // the same failure is not reported twice
    setGate(a, 'S', 'ok');
    a.ready = true;
    const passed = gateResult('r', r, a, before);
    expect(passed?.attrs).toMatchObject({ 'warden.mesh.gates.passed': true });
    expect(passed?.attrs['warden.mesh.gate.failed']).toBeUndefined();
  });

  test('integration: outcome and patch size; conflicts counted; the reason only as text', () => {
    const a = attempt(1, { patchFiles: ['a.txt', 'b.txt'] });
    const r = task([a]);
    expect(integration('r', r, a, 'merged', { conflicts: 0, conflictBudget: 3 }).attrs).toMatchObject({
      'warden.mesh.integration.outcome': 'merged',
      'warden.mesh.patch.files': 2,
    });
    const c = integration('r', r, a, 'conflict', { conflicts: 1, conflictBudget: 3 }, 'a.txt');
    expect(c.attrs).toMatchObject({ 'warden.mesh.conflicts': 1, 'warden.mesh.conflict_budget': 3 });
    expect(c.text).toEqual({ 'warden.mesh.integration.reason': 'a.txt' });
  });

  test('the mesh finished: phase, tasks by how they ended, attempts, duration; its reason only as text', () => {
    const s = meshStatus([task([attempt(1), attempt(2)], { state: 'integrated' }), task([attempt(1)], { state: 'failed' })], {
      phase: 'cancelled',
      phaseReason: 'a human said so',
      startedAt: 1_000,
    });
    const e = meshFinished(s, 61_000);
    expect(e.attrs).toMatchObject({
      'warden.mesh.phase': 'cancelled',
      'warden.mesh.tasks': 2,
      'warden.mesh.tasks.integrated': 1,
      'warden.mesh.tasks.failed': 1,
      'warden.mesh.attempts': 3,
      'warden.mesh.duration_ms': 60_000,
    });
    expect(e.text).toEqual({ 'warden.mesh.phase.reason': 'a human said so' });
  });
});
