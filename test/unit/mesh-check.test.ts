/** A mesh task's own check (its `verify` command): the input, the task file, and what a check's result means. */
import { describe, expect, test } from 'vitest';
import { describeZodError } from '../../src/domain/contract/schemas.js';
import { checkDue, checkOutcome, CHECK_ATTEMPTS } from '../../src/domain/mesh/check.js';
import { MeshInputSchema, resolveTasks, TASK_CHECK_TIMEOUT_MS, TunablesSchema, type MeshTaskInput } from '../../src/domain/mesh/config.js';
import { initialGates } from '../../src/domain/mesh/gates.js';
import { failedGateOf, markFailed } from '../../src/domain/mesh/policy.js';
import { renderDashboard, renderManifest, workerPrompt } from '../../src/domain/mesh/render.js';
import { tickAttempt, type Observation } from '../../src/domain/mesh/rules.js';
import type { Attempt, MeshStatus, TaskRecord } from '../../src/domain/mesh/state.js';
import { parseTaskFile } from '../../src/domain/mesh/tasks.js';

const input = (verify: unknown) => ({ runId: 'r', repo: '/repo', tasks: [{ title: 't', verify }], driver: { kind: 'command', command: ['w'] } });
const tasksOf = (verify: MeshTaskInput['verify']) => resolveTasks(MeshInputSchema.parse(input(verify)).tasks);

function record(verify: MeshTaskInput['verify']): { r: TaskRecord; a: Attempt } {
  const [task] = tasksOf(verify);
  const a = {
    attempt: 1,
    kind: 'worker',
    mode: 'patch-first',
    agentId: 'r.1-t.a1',
    workflowId: 'agent-r.1-t.a1',
    worktree: '/w/r.1-t.a1',
    checkpointPath: '/c',
    patchPath: '/p.patch',
    acked: true,
    gates: initialGates(task!, true),
    state: 'running',
    waitingFor: null,
    draftNotBefore: 0,
    ready: true,
    patchSha: 'p1',
    gatedSha: 'p1',
    patchFiles: ['a.txt'],
    agentEnded: null,
    closed: false,
    reason: null,
  } as unknown as Attempt;
  const r = { task: task!, state: 'running', attempts: [a], next: '', reason: null } as unknown as TaskRecord;
  return { r, a };
}

describe('verify: yes/no, or the task check command', () => {
  test.each([
    [true, { verify: true, check: null }],
    [false, { verify: false, check: null }],
    [undefined, { verify: false, check: null }],
    ['npm test -- a.test.ts', { verify: false, check: { command: 'npm test -- a.test.ts', timeoutMs: TASK_CHECK_TIMEOUT_MS } }],
    [
      { command: 'pytest -q tests/test_a.py', timeoutMs: '30s' },
      { verify: false, check: { command: 'pytest -q tests/test_a.py', timeoutMs: 30_000 } },
    ],
    [{ command: 'make check' }, { verify: false, check: { command: 'make check', timeoutMs: TASK_CHECK_TIMEOUT_MS } }],
  ])('%j', (verify, want) => {
    expect(tasksOf(verify as MeshTaskInput['verify'])[0]).toMatchObject(want);
  });

  test.each([
    ['', /tasks\.0\.verify.*verify: the command must not be empty/],
    ['   ', /verify: the command must not be empty/],
    [3, /tasks\.0\.verify.*verify: yes\/no \(true\/false\), a command, or \{command, timeoutMs\}/],
    [{ command: '' }, /verify\.command must not be empty/],
    [{ command: 'x', timeoutMs: 10 }, /verify\.timeoutMs: at least 1s/],
    [{ command: 'x', shell: 'bash' }, /shell/],
  ])('%j is refused, naming the field', (verify, msg) => {
    const r = MeshInputSchema.safeParse(input(verify));
    expect(r.success).toBe(false);
    expect(describeZodError(r.error!)).toMatch(msg);
  });

  test('the task file: yes/no as before, anything else is the command (backticks stripped)', () => {
    const f = parseTaskFile(
      [
        '1. A',
        '   - Verify: yes',
        '2. B',
        '   - Verify: no (nothing to run)',
        '3. C',
        '   - Verify: `npm test -- a.test.ts`',
        '4. D',
        '   - Verify: pytest -q tests/test_a.py',
        '5. E',
        '   - Verify: <yes|no>',
      ].join('\n'),
    );
    expect(f.tasks.map((t) => t.verify)).toEqual([true, false, 'npm test -- a.test.ts', 'pytest -q tests/test_a.py', true]);
  });

  test('the bound is a tunable (default 3), also in the task file', () => {
    expect(TunablesSchema.parse({}).checkAttempts).toBe(CHECK_ATTEMPTS);
    expect(parseTaskFile('- a\n\nTunable thresholds:\n- check attempts: 5').tunables).toMatchObject({ checkAttempts: 5 });
  });
});

describe('the check on a gated patch', () => {
  const failed = { exitCode: 1, passed: false, timedOut: false, outputTail: 'FAIL a.test.ts\nexpected right, got wrong\n' };

  test('due only for a ready attempt of a task with a check, until its gated patch passed', () => {
    const { r, a } = record('npm test');
    expect(checkDue(r, a)).toBe(true);
    expect(checkDue(record(true).r, record(true).a)).toBe(false);
    expect(checkOutcome(r, a, { exitCode: 0, passed: true, timedOut: false, outputTail: 'ok' }, 5, {})).toEqual({
      kind: 'pass',
      log: 'CHECK PASSED task 1 r.1-t.a1: npm test',
    });
    expect(a.check).toMatchObject({ command: 'npm test', sha: 'p1', passed: true, exitCode: 0, at: 5 });
    expect(a.gates.V).toBe('ok');
    expect(checkDue(r, a)).toBe(false);
    a.gatedSha = 'p2'; // another patch passed the gates: checked again
    expect(checkDue(r, a)).toBe(true);
    a.ready = false;
    expect(checkDue(r, a)).toBe(false);
  });

  test('a failure: not ready, the worker is steered with the command and the output, a new patch is awaited', () => {
    const { r, a } = record('npm test -- a.test.ts');
    const x = checkOutcome(r, a, failed, 7, { checkAttempts: 3 });
    expect(x).toEqual({
      kind: 'retry',
      log: 'CHECK FAILED task 1 r.1-t.a1 (1 of 3): npm test -- a.test.ts (exit 1); not integrated, a new patch requested',
      steer:
        "[VERIFY] warden ran this task's check on your patch and it failed (exit 1, failure 1 of 3): `npm test -- a.test.ts`\nOutput (tail):\nFAIL a.test.ts\nexpected right, got wrong\nFix it, run the check yourself, write the patch draft again at /p.patch and set your checkpoint to done.",
    });
    expect(a).toMatchObject({ ready: false, gatedSha: null, state: 'needs_reemit', waitingFor: { what: 'check', sha: 'p1', ticks: 0 }, draftNotBefore: 7 });
    expect(a.gates.V).toBe('fail');
    expect(r.checkFailures).toBe(1);
  });

  test('a long output is quoted by its tail; a timeout says so', () => {
    const { r, a } = record('slow');
    const x = checkOutcome(r, a, { exitCode: null, passed: false, timedOut: true, outputTail: `${'x'.repeat(5_000)}END` }, 1, {});
    expect(x.kind).toBe('retry');
    const steer = (x as { steer: string }).steer;
    expect(steer).toMatch(/^\[VERIFY\] .*\(timed out, failure 1 of 3\)/);
    expect(steer).toContain('xEND\nFix it');
    expect(steer.length).toBeLessThan(1_600);
  });

  test('the bound: the last failure fails the task with gate V and keeps the output', () => {
    const { r, a } = record('npm test');
    expect(checkOutcome(r, a, failed, 1, { checkAttempts: 2 }).kind).toBe('retry');
    a.ready = true;
    a.gatedSha = 'p2';
    const x = checkOutcome(r, a, failed, 2, { checkAttempts: 2 });
    expect(x).toEqual({
      kind: 'fail',
      reason: "gate V failed: the task's check `npm test` failed 2 times (exit 1: expected right, got wrong); not integrated",
    });
    markFailed(r, (x as { reason: string }).reason);
    expect(r.failedGate).toBe('V');
    expect(a.check).toMatchObject({ sha: 'p2', passed: false, outputTail: failed.outputTail });
  });
});

describe('waiting for a new patch after a failed check', () => {
  const tun = TunablesSchema.parse({ tickInterval: '1s', ackSla: '3s', patchDraftTimeout: '60s', checkpointInterval: '10s' });
  const obs = (sha: string): Observation => ({
    checkpoint: {
      exists: true,
      mtimeMs: 1,
      parse: {
        ok: true,
        checkpoint: { statusCode: 'done', statusDetail: 'x', plan: ['a', 'b', 'c', 'd', 'e'], intendedFiles: [], blockers: [], artifacts: [] },
      },
    },
    patch: { exists: true, size: 10, mtimeMs: 1, sha, unified: true, files: ['a.txt'], by: 'worker' },
    lastTurn: { text: 'x', at: null },
    turns: 2,
  });

  test('the same patch (even with new turns) is not checked again; a new one is; none for the patch draft timeout fails with gate V', () => {
    const { r, a } = record('npm test');
    checkOutcome(r, a, { exitCode: 1, passed: false, timedOut: false, outputTail: '' }, 0, {});
    expect(tickAttempt(r, a, obs('p1'), 1_000, tun)).toEqual({ kind: 'none' });
    expect(tickAttempt(r, a, { ...obs('p1'), turns: 5 }, 30_000, tun)).toEqual({ kind: 'none' });
    const late = tickAttempt(r, a, obs('p1'), 61_000, tun);
    expect(late.kind).toBe('fail');
    expect(failedGateOf((late as { reason: string }).reason)).toBe('V');
    const b = record('npm test');
    checkOutcome(b.r, b.a, { exitCode: 1, passed: false, timedOut: false, outputTail: '' }, 0, {});
    expect(tickAttempt(b.r, b.a, obs('p2'), 1_000, tun)).toEqual({ kind: 'ready' });
    expect(b.a.waitingFor).toBeNull();
  });
});

test('the dashboard shows each task check: command, passed, exit code, the output of a failed one', () => {
  const { r, a } = record('npm test');
  checkOutcome(r, a, { exitCode: 1, passed: false, timedOut: false, outputTail: 'expected right\n' }, 0, {});
  const s = { runId: 'r', phase: 'running', tasks: [r], log: [], tunables: TunablesSchema.parse({}), spend: {} } as unknown as MeshStatus;
  expect(renderDashboard(s, 0)).toContain('Task checks\n- task 1 1-t attempt 1: failed (exit 1, 1 failed): npm test\n  output: expected right');
});

test('the worker is told its check, and the manifest lists it', () => {
  const { r, a } = record({ command: 'npm test -- a.test.ts', timeoutMs: '2m' });
  const tunables = TunablesSchema.parse({});
  expect(workerPrompt({ runId: 'r', task: r.task, attempt: a, base: 'abc', tunables })).toContain(
    'Check: warden runs `npm test -- a.test.ts` in your worktree before your patch is integrated; make it pass.',
  );
  expect(renderManifest({ runId: 'r', repo: '/repo', base: 'abc', userBranch: 'main', tasks: [r.task], tunables, driver: 'command' })).toContain(
    '   - Verify: npm test -- a.test.ts (run by warden before integration, timeout 2m)',
  );
  expect(workerPrompt({ runId: 'r', task: record(true).r.task, attempt: a, base: 'abc', tunables })).not.toContain('Check:');
});
