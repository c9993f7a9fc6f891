/**
 * The mesh's enforcement on a real dev server, driven through the `warden mesh` CLI with a task
 * file in seed 003's template: a worker that never acks is restarted once at the SLA, a worker
 * whose status stays the same for the stall time (two ticks' worth) is declared stalled and restarted, a patch outside its
 * scope fails gate S and is not integrated; `mesh apply` is refused while tasks are open.
 */
import { execa } from 'execa';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { MeshStatus } from '../../src/domain/mesh/state.js';
import { MESH_AGENT, git, gitRepo, integrated, meshInput } from '../helpers/mesh.js';
import { startMesh, waitForMesh } from '../../src/client/mesh.js';
import { ROOT, eventually, useStack } from '../helpers/stack.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

const TASKS = `Use $mesh to parallelize (patch-first):
1. Uppercase x.txt {silent-a1} {edit x.txt:1:X}
- Agent: worker
- Mode: patch-first
- Scope: x.txt
- Done when: x.txt says X
2. Uppercase y.txt {stall-a1} {edit y.txt:1:Y}
- Scope: y.txt
3. Uppercase z.txt {edit z.txt:1:Z} {edit outside.txt:1:escaped}
- Scope: z.txt

Tunable thresholds:
- Cap: 3
- Tick interval: 1s
- Ack SLA: 8s
- Patch draft timeout: 90s
`;

describe('mesh enforcement through the CLI', () => {
  const stack = useStack();
  const warden = (...args: string[]) =>
    execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, '--namespace', stack.server.namespace, ...args], {
      reject: false,
      env: { WARDEN_LOG_LEVEL: 'warn' },
    });

  test('ack SLA restart, STALL DETECTED restart, gate S failure; apply refused while open, then merges', async () => {
    const repo = gitRepo({ 'x.txt': 'x\n', 'y.txt': 'y\n', 'z.txt': 'z\n' });
    const file = join(repo, '..', `${repo.split('/').pop()}-tasks.md`);
    writeFileSync(file, TASKS);
    const run = await warden(
      'mesh',
      'run',
      '--tasks',
      file,
      '--repo',
      repo,
      '--run-id',
      'rules',
      '--driver',
      'command',
      '--command',
      `python3 ${MESH_AGENT}`,
      '--json',
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ runId: 'rules' });

    const refused = await warden('mesh', 'apply', 'rules');
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/has open tasks|is setting-up|is running/);
    expect((await warden('mesh', 'status', 'nope')).exitCode).toBe(3);

    const status = async () => JSON.parse((await warden('mesh', 'status', 'rules', '--json')).stdout) as MeshStatus;
    const done = await eventually(
      async () => {
        const s = await status();
        return s.phase === 'ready' ? s : null;
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: 'mesh rules ready' },
    );
    const dashboard = await warden('mesh', 'status', 'rules', '--log', '60');
    if (process.env.WARDEN_MESH_SHOW) console.log(dashboard.stdout);
    const log = done.log.map((e) => e.text);
    const [silent, stall, strayed] = done.tasks;

    // Ack SLA: attempt 1 wrote no checkpoint; restarted once; attempt 2 integrated.
    expect(log.find((l) => l.startsWith('ACK SLA MISSED'))).toBe('ACK SLA MISSED: no checkpoint');
    expect(silent!.ackRestarts).toBe(1);
    expect(silent!.attempts.map((a) => [a.attempt, a.gates.A, a.closed])).toEqual([
      [1, 'fail', true],
      [2, 'ok', true],
    ]);
    expect(silent!.state).toBe('integrated');

    // Stall: the same status for the stall time (2 × the 1s tick) → STALL DETECTED and a restart.
    expect(log.some((l) => /^STALL DETECTED: no progress for \d+s \(status "discovering: reading the code", no patch draft; stall time 2s\)$/.test(l))).toBe(
      true,
    );
    expect(log.some((l) => /^Action: restart task 2 \(close rules\.2-[a-z0-9-]+\.a1, spawn attempt 2\)$/.test(l))).toBe(true);
    expect(stall!.attempts).toHaveLength(2);
    expect(stall!.state).toBe('integrated');

    // Scope: the patch touches outside.txt; gate S fails; nothing of task 3 reaches the integration branch.
    expect(strayed!.state).toBe('failed');
    expect(strayed!.attempts.at(-1)!.gates.S).toBe('fail');
    expect(strayed!.reason).toBe('gate S failed: outside.txt outside the scope z.txt; not integrated');
    expect(integrated(repo, 'rules')).toHaveLength(2);
    expect(git(repo, 'show', 'mesh/rules/integration:z.txt')).toBe('z');
    expect(() => git(repo, 'show', 'mesh/rules/integration:outside.txt')).toThrow();

    expect(dashboard.stdout).toMatch(/^task\s+agent\s+att\s+unrel\s+state\s+last_seen\s+last_tick\s+gates\s+next$/m);
    expect(dashboard.stdout).toMatch(/^3 3-uppercase-z-txt-edit\.\. .*failed.*A=ok C=ok O=ok D=ok P=-- S=fail V=na/m);

    const apply = await warden('mesh', 'apply', 'rules', '--json');
    expect(apply.exitCode, apply.stderr).toBe(0);
    expect(readFileSync(join(repo, 'x.txt'), 'utf8')).toBe('X\n');
    expect(readFileSync(join(repo, 'y.txt'), 'utf8')).toBe('Y\n');
    expect(readFileSync(join(repo, 'z.txt'), 'utf8')).toBe('z\n');
  });

  test('time budget: what is ready is integrated, the rest fails; best-effort partial results', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const tasks = [
      { title: 'Uppercase a {edit a.txt:1:A}', slug: 'a', scope: ['a.txt'] },
      { title: 'Never answers {silent-a1} {edit b.txt:1:B}', slug: 'silent', scope: ['b.txt'] },
    ];
    await startMesh(stack.warden, meshInput('budget-time', repo, tasks, { cap: 2, ackSla: '120s', timeBudget: '25s' }));
    const done = await waitForMesh(stack.warden, 'budget-time', (s) => s.phase === 'ready', 120_000);
    expect(done.log.some((e) => /^TIME BUDGET: 25s spent; integrating what is ready, returning best-effort partial results$/.test(e.text))).toBe(true);
    expect(done.tasks.map((t) => [t.task.slug, t.state, t.reason])).toEqual([
      ['a', 'integrated', null],
      ['silent', 'failed', 'time budget spent'],
    ]);
    expect(done.phaseReason).toMatch(/^1 of 2 tasks through, 1 failed/);
    expect(integrated(repo, 'budget-time')).toEqual(['mesh budget-time: task 1 a (attempt 1)']);
  });

  test('patch draft timeout: the worker is cancelled and a direct-edit attempt takes over', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const tasks = [{ title: 'Uppercase a, slowly {stall-a1} {edit a.txt:1:A}', slug: 'slow', scope: ['a.txt'] }];
    await startMesh(stack.warden, meshInput('takeover', repo, tasks, { ackSla: '60s', stallThreshold: 100, patchDraftTimeout: '12s' }));
    const done = await waitForMesh(stack.warden, 'takeover', (s) => s.phase === 'ready', 120_000);
    const log = done.log.map((e) => e.text);
    expect(log.some((l) => /^TIMEOUT ESCALATION: no patch draft after \d+s \(patch draft timeout 12s\)$/.test(l))).toBe(true);
    expect(log).toContain('Action: cancel takeover.slow.a1 and switch task 1 to a direct-edit attempt');
    const [t] = done.tasks;
    expect(t!.tookOver).toBe(true);
    expect(t!.attempts.map((a) => [a.attempt, a.kind, a.mode, a.closed])).toEqual([
      [1, 'worker', 'patch-first', true],
      [2, 'takeover', 'direct-edit', true],
    ]);
    expect(t!.state).toBe('integrated');
    expect(git(repo, 'show', 'mesh/takeover/integration:a.txt')).toBe('A');
  });
});
