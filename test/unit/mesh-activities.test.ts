/** The mesh's git/file activities on a real repository (no Temporal needed): setup, worktrees, drafting, integration. */
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, test } from 'vitest';
import { makeMeshActivities } from '../../activities/mesh/index.js';
import { renderCheckpoint } from '../../src/domain/mesh/checkpoint.js';
import { resolveTasks, TunablesSchema } from '../../src/domain/mesh/config.js';
import { git, gitRepo } from '../helpers/mesh.js';

const acts = makeMeshActivities(pino({ level: 'silent' }));
const cp = (code: string) => renderCheckpoint({ statusCode: code, statusDetail: 'x', plan: ['1', '2', '3', '4', '5'], intendedFiles: [], blockers: [], artifacts: [] });

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
    const target = { key: 'k', ...p, diffBase: setup.base, workflowId: 'agent-none', kind: 'worker' as const, draftFromWorktree: 'when-done' as const, draftNotBefore: 0 };
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
    expect(await acts.meshIntegrate({ integrationDir: setup.integrationDir, patchPath: p.patchPath, key: 'u.t.a1', message: 'task 1' })).toEqual({ ...r1, already: true });
    const conflict = `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+B\n`;
    writeFileSync(p.patchPath, conflict);
    expect(await acts.meshIntegrate({ integrationDir: setup.integrationDir, patchPath: p.patchPath, key: 'u.t.a2', message: 'task 1 again' })).toMatchObject({ applied: false, conflictingFiles: ['a.txt'] });
    expect(await acts.meshValidate({ integrationDir: setup.integrationDir, command: 'grep -q A a.txt', timeoutMs: 10_000 })).toMatchObject({ ok: true, exitCode: 0 });
    expect(await acts.meshApply({ repo: setup.repo, runId: 'u', integrationBranch: setup.integrationBranch, userBranch: 'main' })).toMatchObject({ branch: 'main' });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('A\n');
  });
});
