/**
 * Nothing of a mesh is left behind once it is applied or cancelled: its attempts' worktrees (and
 * the integration worktree) are removed, `git worktree list` shows only the user's checkout, and
 * no `mesh/<run>/…` branch remains; `keepWorktrees` (`--keep-worktrees`) keeps them all. The
 * removal is an activity that can run again after a worker died half-way through it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import pino from 'pino';
import { describe, expect, test } from 'vitest';
import { makeMeshActivities } from '../../activities/mesh/index.js';
import { applyMesh, cancelMesh, startMesh, waitForMesh } from '../../src/client/mesh.js';
import type { MeshStatus } from '../../src/domain/mesh/state.js';
import { git, gitRepo, MESH_AGENT, meshInput } from '../helpers/mesh.js';
import { ROOT, useStack } from '../helpers/stack.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

const worktrees = (repo: string) =>
  git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice(9));
const meshBranches = (repo: string, runId: string) => git(repo, 'branch', '--list', `mesh/${runId}/*`, '--format=%(refname:short)').split('\n').filter(Boolean);
const twoTasks = (extra = '') =>
  ['a', 'b'].map((f) => ({ title: `Uppercase ${f}.txt {edit ${f}.txt:1:${f.toUpperCase()}}${extra}`, slug: f, scope: [`${f}.txt`] }));

describe('mesh cleanup', () => {
  const stack = useStack();
  const result = (runId: string) => stack.warden.client.workflow.getHandle(`mesh-${runId}`).result() as Promise<MeshStatus>;

  test('after apply: no worktree and no mesh branch of the run is left; the work is on the user branch', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await startMesh(stack.warden, meshInput('clean-apply', repo, twoTasks()));
    const ready = await waitForMesh(stack.warden, 'clean-apply', (s) => s.phase === 'ready', 90_000);
    expect(ready.tasks.map((t) => t.state)).toEqual(['integrated', 'integrated']);
    // Before apply everything is still there (the user may look at it).
    expect(worktrees(repo)).toHaveLength(4); // the checkout, the integration worktree, two attempts
    expect(meshBranches(repo, 'clean-apply').sort()).toEqual(['mesh/clean-apply/a-a1', 'mesh/clean-apply/b-a1', 'mesh/clean-apply/integration']);
    await applyMesh(stack.warden, 'clean-apply');
    const final = await result('clean-apply');
    expect(final.phase).toBe('applied');
    expect(final.log.map((e) => e.text).find((x) => x.startsWith('CLEANED UP'))).toMatch(/^CLEANED UP: removed 3 worktrees and branches /);
    expect(worktrees(repo)).toEqual([git(repo, 'rev-parse', '--show-toplevel')]);
    expect(meshBranches(repo, 'clean-apply')).toEqual([]);
    expect(existsSync(join(repo, '.mesh/runs/clean-apply/worktrees'))).toBe(false);
    expect(existsSync(join(repo, '.mesh/runs/clean-apply/integration'))).toBe(false);
    // The record of the run stays; the work is in the user's branch.
    expect(existsSync(join(repo, '.mesh/runs/clean-apply/manifest.md'))).toBe(true);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('A\n');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('B\n');
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  test('after cancel with workers still running: they are stopped, then nothing of the run is left', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await startMesh(stack.warden, meshInput('clean-cancel', repo, twoTasks(' {slow:300:1}')));
    await waitForMesh(stack.warden, 'clean-cancel', (s) => s.tasks.every((t) => t.attempts.length > 0), 60_000);
    expect(worktrees(repo).length).toBeGreaterThanOrEqual(3);
    await cancelMesh(stack.warden, 'clean-cancel', 'enough');
    const final = await result('clean-cancel');
    expect(final.phase).toBe('cancelled');
    expect(final.log.map((e) => e.text).some((x) => x.startsWith('CLEANED UP'))).toBe(true);
    expect(worktrees(repo)).toEqual([git(repo, 'rev-parse', '--show-toplevel')]);
    expect(meshBranches(repo, 'clean-cancel')).toEqual([]);
    expect(git(repo, 'log', '--format=%s', 'main')).toBe('base');
  });

  test('keepWorktrees: after cancel the worktrees and branches remain', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await startMesh(stack.warden, meshInput('clean-keep', repo, twoTasks(), {}, { keepWorktrees: true }));
    await waitForMesh(stack.warden, 'clean-keep', (s) => s.phase === 'ready', 90_000);
    await cancelMesh(stack.warden, 'clean-keep', 'look at it by hand');
    const final = await result('clean-keep');
    expect(final.phase).toBe('cancelled');
    expect(final.log.map((e) => e.text)).toContain('KEPT worktrees and branches (keepWorktrees)');
    expect(worktrees(repo)).toHaveLength(4);
    expect(meshBranches(repo, 'clean-keep').sort()).toEqual(['mesh/clean-keep/a-a1', 'mesh/clean-keep/b-a1', 'mesh/clean-keep/integration']);
  });

  test('the removal runs again after being cut off half-way, and a third time finds nothing', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const acts = makeMeshActivities(pino({ level: 'silent' }));
    const setup = await acts.meshSetup({ runId: 'half', repo, tasks: [], tunables: {} as never, validate: null, driver: 'command' });
    const one = await acts.meshPrepareAttempt({ repo: setup.repo, runId: 'half', slug: 'a', attempt: 1, from: setup.base });
    await acts.meshPrepareAttempt({ repo: setup.repo, runId: 'half', slug: 'a', attempt: 2, from: setup.base });
    // A worker killed mid-removal: one worktree's directory gone but still registered, one branch
    // already deleted; a lock on another (a worker killed mid-edit).
    rmSync(one.worktree, { recursive: true, force: true });
    git(repo, 'update-ref', '-d', 'refs/heads/mesh/half/a-a1');
    git(repo, 'worktree', 'lock', join(setup.runDir, 'worktrees', 'a--a2'));
    // A worktree a worker swapped for a symlink to a directory outside: only the link goes.
    const three = await acts.meshPrepareAttempt({ repo: setup.repo, runId: 'half', slug: 'a', attempt: 3, from: setup.base });
    const outside = mkdtempSync(join(tmpdir(), 'warden-outside-'));
    writeFileSync(join(outside, 'keep.txt'), 'mine\n');
    // Its `.git` is copied along, so git would take the directory behind the link for the worktree.
    writeFileSync(join(outside, '.git'), readFileSync(join(three.worktree, '.git')));
    rmSync(three.worktree, { recursive: true, force: true });
    symlinkSync(outside, three.worktree);
    const first = await acts.meshCleanup({ repo, runId: 'half' });
    expect(first.branches.sort()).toEqual(['mesh/half/a-a2', 'mesh/half/a-a3', 'mesh/half/integration']);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(three.worktree)).toBe(false);
    expect(worktrees(repo)).toEqual([setup.repo]);
    expect(meshBranches(repo, 'half')).toEqual([]);
    expect(await acts.meshCleanup({ repo, runId: 'half' })).toEqual({ worktrees: [], branches: [] });
  });

  test('the CLI: --keep-worktrees is recorded in the mesh spec; --webhook is repeatable, its old form is refused by name', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const tasks = join(repo, '..', `tasks-${Date.now()}.md`);
    writeFileSync(tasks, 'Use $mesh to parallelize (patch-first):\n1. Uppercase a.txt {edit a.txt:1:A}\n- Scope: a.txt\n');
    const cli = (...args: string[]) =>
      execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, '--namespace', stack.server.namespace, ...args], {
        reject: false,
        env: { WARDEN_LOG_LEVEL: 'warn' },
      });
    const base = ['mesh', 'run', '--tasks', tasks, '--repo', repo, '--driver', 'command', '--driver-command', `python3 ${MESH_AGENT}`];
    const old = await cli(...base, '--run-id', 'clean-cli-old', '--webhook', 'http://127.0.0.1:9/a', 'http://127.0.0.1:9/b');
    expect(old.exitCode).toBe(2);
    expect(old.stderr).toContain('unexpected argument http://127.0.0.1:9/b: mesh run takes none (give --webhook once per URL: --webhook A --webhook B)');
    const r = await cli(...base, '--run-id', 'clean-cli', '--keep-worktrees', '--webhook', 'http://127.0.0.1:9/a', '--webhook', 'http://127.0.0.1:9/b');
    expect(r.exitCode, r.stderr).toBe(0);
    const history = await stack.warden.client.workflow.getHandle('mesh-clean-cli').fetchHistory();
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString('utf8'));
    expect(input.keepWorktrees).toBe(true);
    expect(input.notify.webhooks.map((w: { url: string }) => w.url)).toEqual(['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b']);
    await cancelMesh(stack.warden, 'clean-cli', 'done looking');
    expect((await result('clean-cli')).log.map((e) => e.text)).toContain('KEPT worktrees and branches (keepWorktrees)');
  });
});
