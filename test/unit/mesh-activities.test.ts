/** The mesh's git/file activities on a real repository (no Temporal needed): setup, worktrees, drafting, integration. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, test } from 'vitest';
import { makeMeshActivities, patchFiles, readUntrusted, worktreeDiff } from '../../activities/mesh/index.js';
import { worktreePlace } from '../../activities/mesh/git.js';
import { renderCheckpoint } from '../../src/domain/mesh/checkpoint.js';
import { resolveTasks, TunablesSchema } from '../../src/domain/mesh/config.js';
import { git, gitRepo } from '../helpers/mesh.js';
import { processesWithArg } from '../helpers/procs.js';

const acts = makeMeshActivities(pino({ level: 'silent' }));
const cp = (code: string) =>
  renderCheckpoint({ statusCode: code, statusDetail: 'x', plan: ['1', '2', '3', '4', '5'], intendedFiles: [], blockers: [], artifacts: [] });

describe('mesh activities', () => {
  test('setup, a worktree per attempt, warden drafts only a finished worker, integration is idempotent', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const tasks = resolveTasks([{ title: 't', slug: 't', agent: 'worker', skills: [], scope: [], verify: false }]);
    const setup = await acts.meshSetup({ runId: 'u', repo, tasks, tunables: TunablesSchema.parse({}), validate: null, driver: 'command' });
    expect(readFileSync(setup.manifestPath, 'utf8')).toContain('1. t');
    expect(readFileSync(join(repo, '.git/info/exclude'), 'utf8')).toContain('.mesh/');
    expect(await acts.meshSetup({ runId: 'u', repo, tasks, tunables: TunablesSchema.parse({}), validate: null, driver: 'command' })).toEqual(setup);
    const p = await acts.meshPrepareAttempt({ repo: setup.repo, runId: 'u', slug: 't', attempt: 1, from: setup.base });
    expect(git(p.worktree, 'rev-parse', 'HEAD')).toBe(setup.base);
    writeFileSync(join(p.worktree, 'a.txt'), 'A\n');
    writeFileSync(join(p.worktree, 'new.txt'), 'new\n');
    const target = {
      key: 'k',
      ...p,
      diffBase: setup.base,
      workflowId: 'agent-none',
      kind: 'worker' as const,
      draftFromWorktree: 'when-done' as const,
      draftNotBefore: 0,
    };
    const observe = async (t = target) => (await acts.meshObserve({ targets: [t] }))[0]!;

    // Mid-work (no done checkpoint): no draft, even though the worktree has changes.
    mkdirSync(join(p.checkpointPath, '..'), { recursive: true });
    writeFileSync(p.checkpointPath, cp('drafting_patch'));
    expect((await observe()).patch.exists).toBe(false);
    // A checkpoint older than draftNotBefore (a rebase was requested after it): still no draft.
    writeFileSync(p.checkpointPath, cp('done'));
    expect((await observe({ ...target, draftNotBefore: Date.now() + 60_000 })).patch.exists).toBe(false);
    // Done: warden drafts from the worktree, untracked files included, without touching its index.
    const o = await observe();
    expect(o.patch).toMatchObject({ exists: true, unified: true, by: 'warden', files: ['a.txt', 'new.txt'] });
    expect(git(p.worktree, 'status', '--porcelain')).toBe('M a.txt\n?? new.txt'); // the index is untouched (git() trims the leading space)
    // A draft of the worker's own is never overwritten.
    const own = `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n`;
    writeFileSync(p.patchPath, own);
    utimesSync(p.checkpointPath, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000));
    expect((await observe()).patch).toMatchObject({ by: 'worker', files: ['a.txt'] });
    expect(readFileSync(p.patchPath, 'utf8')).toBe(own);

    const r1 = await acts.meshIntegrate({ integrationDir: setup.integrationDir, patchPath: p.patchPath, key: 'u.t.a1', message: 'task 1' });
    expect(r1).toMatchObject({ applied: true, already: false });
    expect(await acts.meshIntegrate({ integrationDir: setup.integrationDir, patchPath: p.patchPath, key: 'u.t.a1', message: 'task 1' })).toEqual({
      ...r1,
      already: true,
    });
    const conflict = `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+B\n`;
    writeFileSync(p.patchPath, conflict);
    expect(await acts.meshIntegrate({ integrationDir: setup.integrationDir, patchPath: p.patchPath, key: 'u.t.a2', message: 'task 1 again' })).toMatchObject({
      applied: false,
      conflictingFiles: ['a.txt'],
    });
    expect(await acts.meshValidate({ integrationDir: setup.integrationDir, command: 'grep -q A a.txt', timeoutMs: 10_000 })).toMatchObject({
      ok: true,
      exitCode: 0,
    });
    // Gate V runs like a done-claim's verify: at its timeout the command's whole process group is
    // killed (a background child too, which would otherwise hold the output open), and it says so.
    // A unique argument finds the background child in /proc: in a PID namespace its `$!` is not a host pid.
    const tag = `warden-validate-child-${process.pid}-${Date.now()}`;
    const slow = await acts.meshValidate({ integrationDir: setup.integrationDir, command: `sh -c 'sleep 60; :' ${tag} & wait`, timeoutMs: 500 });
    expect(slow).toMatchObject({ ok: false, exitCode: null });
    expect(slow.output).toMatch(/killed after/);
    expect(processesWithArg(tag)).toEqual([]);
    expect(await acts.meshApply({ repo: setup.repo, runId: 'u', integrationBranch: setup.integrationBranch, userBranch: 'main' })).toMatchObject({
      branch: 'main',
    });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('A\n');
  });

  test('untrusted files: a FIFO, a symlink, a sparse file and a symlinked directory are refused without reading them', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const dir = join(repo, '.mesh/runs/u/patches');
    mkdirSync(dir, { recursive: true });
    const fifo = join(dir, 'fifo.diff');
    execFileSync('mkfifo', [fifo]);
    expect(await readUntrusted(fifo, 1024, 'the patch draft')).toEqual({
      kind: 'refused',
      reason: 'the patch draft is a named pipe (FIFO), not a regular file',
    });
    const outside = join(mkdtempSync(join(tmpdir(), 'warden-outside-')), 'x.diff');
    writeFileSync(outside, 'diff --git a/a.txt b/a.txt\n');
    symlinkSync(outside, join(dir, 'link.diff'));
    expect(await readUntrusted(join(dir, 'link.diff'), 1024, 'the patch draft')).toEqual({
      kind: 'refused',
      reason: 'the patch draft is a symlink, not a regular file',
    });
    writeFileSync(join(dir, 'sparse.diff'), '');
    truncateSync(join(dir, 'sparse.diff'), 600 * 1024 * 1024);
    expect(await readUntrusted(join(dir, 'sparse.diff'), 1024, 'the patch draft')).toEqual({
      kind: 'refused',
      reason: 'the patch draft is 629145600 bytes, over its budget of 1024',
    });
    expect(await readUntrusted(join(dir, 'none.diff'), 1024, 'the patch draft')).toEqual({ kind: 'missing' });
    writeFileSync(join(dir, 'ok.diff'), 'x');
    expect(await readUntrusted(join(dir, 'ok.diff'), 1024, 'the patch draft')).toMatchObject({ kind: 'ok', bytes: Buffer.from('x') });
    // The patches directory swapped for a symlink out of the tree.
    const elsewhere = mkdtempSync(join(tmpdir(), 'warden-outside-'));
    writeFileSync(join(elsewhere, 'p.diff'), 'x');
    rmSync(dir, { recursive: true });
    symlinkSync(elsewhere, dir);
    expect(await readUntrusted(join(dir, 'p.diff'), 1024, 'the patch draft')).toEqual({
      kind: 'refused',
      reason: 'the patch draft is not inside the repository (a directory on its path is a symlink)',
    });
  });

  test("a worktree's own .git is never read: warden diffs on its admin directory, running none of the worker's config", async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const tasks = resolveTasks([{ title: 't', slug: 't', agent: 'worker', skills: [], scope: [], verify: false }]);
    const setup = await acts.meshSetup({ runId: 'g', repo, tasks, tunables: TunablesSchema.parse({}), validate: null, driver: 'command' });
    const p = await acts.meshPrepareAttempt({ repo: setup.repo, runId: 'g', slug: 't', attempt: 1, from: setup.base });
    const marker = mkdtempSync(join(tmpdir(), 'warden-marker-'));
    const planted = (name: string, body: string) => {
      writeFileSync(join(marker, `${name}.sh`), `#!/bin/sh\ntouch '${marker}/${name}.ran'\n${body}\n`, { mode: 0o755 });
      return join(marker, `${name}.sh`);
    };
    writeFileSync(join(p.worktree, 'a.txt'), 'A\n');
    rmSync(join(p.worktree, '.git'));
    git(p.worktree, 'init', '-q');
    git(p.worktree, 'config', 'core.fsmonitor', planted('fsmonitor', 'exit 1'));
    git(p.worktree, 'config', 'diff.external', planted('diff-external', 'exit 0'));
    git(p.worktree, 'config', 'filter.evil.clean', planted('clean', 'cat'));
    writeFileSync(join(p.worktree, '.gitattributes'), '* filter=evil\n');
    // The user's own filter driver, named by the worker's attributes, does not run either.
    git(repo, 'config', 'filter.evil.clean', planted('user-clean', 'cat'));
    git(repo, 'config', 'filter.evil.required', 'true');
    const d = await worktreeDiff(repo, p.worktree, setup.base);
    expect(d.ok).toBe(true);
    expect(d.ok && d.diff).toMatch(/^diff --git a\/.gitattributes b\/.gitattributes\n[\s\S]*^\+A$/m);
    expect(readdirSync(marker).filter((f) => f.endsWith('.ran'))).toEqual([]);
    // A directory no admin directory claims, or a symlink, is refused.
    const stray = mkdtempSync(join(tmpdir(), 'warden-stray-'));
    await expect(worktreePlace(repo, stray)).rejects.toThrow(/is not a worktree of .* that warden made/);
    symlinkSync(stray, join(repo, 'lnk'));
    await expect(worktreePlace(repo, join(repo, 'lnk'))).rejects.toThrow(/is not a directory warden made \(a symlink\)/);
    expect(existsSync(join(stray, '.git'))).toBe(false);
  });

  test('the files a patch touches come from git: quoted names, other prefixes, renames; unsafe paths refused', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const quoted = 'diff --git "a/c.txt" "b/c.txt"\n--- "a/c.txt"\n+++ "b/c.txt"\n@@ -1 +1 @@\n-c\n+C\n--- x/d.txt\n+++ y/d.txt\n@@ -1 +1 @@\n-d\n+D\n';
    expect(await patchFiles(repo, Buffer.from(quoted))).toEqual({ ok: true, files: ['c.txt', 'd.txt'] });
    const rename = 'diff --git a/old.txt b/new dir/new.txt\nsimilarity index 100%\nrename from old.txt\nrename to new dir/new.txt\n';
    expect(await patchFiles(repo, Buffer.from(rename))).toEqual({ ok: true, files: ['new dir/new.txt', 'old.txt'] }); // the source too: -R names it
    const gitConfig = 'diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1 +1,2 @@\n [core]\n+\tx = y\n';
    expect(await patchFiles(repo, Buffer.from(gitConfig))).toEqual({
      ok: false,
      refused: 'gate P: the patch touches a path git must not write: ".git/config" is inside a .git directory',
    });
    expect(await patchFiles(repo, Buffer.from('not a patch\n'))).toMatchObject({ ok: false, error: expect.any(String) });
  });
});

describe('integration across a crash between two git commands', () => {
  /** A run with two attempts whose patches touch a.txt and b.txt; returns what integrate needs. */
  async function twoPatches() {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const tasks = resolveTasks([{ title: 't', slug: 't', agent: 'worker', skills: [], scope: [], verify: false }]);
    const setup = await acts.meshSetup({ runId: 'x', repo, tasks, tunables: TunablesSchema.parse({}), validate: null, driver: 'command' });
    const patch = (f: string) => {
      const path = join(repo, `.mesh/runs/x/patches/${f}.diff`);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, `diff --git a/${f} b/${f}\n--- a/${f}\n+++ b/${f}\n@@ -1 +1 @@\n-${f[0]}\n+${f[0]!.toUpperCase()}\n`);
      return path;
    };
    const dir = setup.integrationDir;
    const input = (f: string, key: string, head: string) => ({ integrationDir: dir, patchPath: patch(f), key, message: `task ${key}`, head });
    const admin = join(repo, '.git/worktrees/integration');
    const files = (c: string) => git(repo, 'show', '--name-only', '--format=', c);
    return { repo, setup, dir, input, admin, files };
  }

  test('a change staged by a dead attempt is neither refused nor swept into the next commit', async () => {
    const { setup, dir, input, files } = await twoPatches();
    // The dead attempt got as far as `git apply --index`.
    execFileSync('git', ['apply', '--index', input('a.txt', 'A', setup.integrationHead).patchPath], { cwd: dir });
    const a = await acts.meshIntegrate(input('a.txt', 'A', setup.integrationHead));
    expect(a).toMatchObject({ applied: true, already: false });
    expect(files(a.applied ? a.head : '')).toBe('a.txt');
    // Staged again by a dead retry, then the next task integrates: its commit holds only b.txt.
    execFileSync('git', ['apply', '--index', '-R', input('a.txt', 'A', setup.integrationHead).patchPath], { cwd: dir });
    const b = await acts.meshIntegrate(input('b.txt', 'B', a.applied ? a.head : ''));
    expect(b.applied && files(b.head)).toBe('b.txt');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  test('a stale index.lock is cleared; a commit the dead attempt made is found by its trailer, not redone', async () => {
    const { setup, dir, input, admin, files } = await twoPatches();
    execFileSync('git', ['apply', '--index', input('a.txt', 'A', setup.integrationHead).patchPath], { cwd: dir });
    writeFileSync(join(admin, 'index.lock'), '');
    const a = await acts.meshIntegrate(input('a.txt', 'A', setup.integrationHead));
    expect(a).toMatchObject({ applied: true, already: false });
    expect(existsSync(join(admin, 'index.lock'))).toBe(false);
    // Committed, then the worker died before the workflow heard: the retry reports the same commit.
    const again = await acts.meshIntegrate(input('a.txt', 'A', setup.integrationHead));
    expect(again).toEqual({ applied: true, head: a.applied ? a.head : '', already: true });
    expect(git(dir, 'log', '--format=%s', '-n', '5').split('\n')).toEqual(['task A', 'base']);
    expect(files(a.applied ? a.head : '')).toBe('a.txt');
  });
});
