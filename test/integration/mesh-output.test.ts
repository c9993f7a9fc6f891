/**
 * Correct work is kept: workers that do their task right (the file edited in their worktree, a
 * `done` checkpoint, the diff within scope: gates A, C, D and S pass) but whose final message lacks
 * the deliverable sections (gate O). One stays in its session (it is asked once to re-emit, answers
 * in its own words again), one ends its session with its answer. Both patches are integrated with a
 * warning on the task, in the status JSON and the `warden mesh status` dashboard; nobody is
 * restarted; `warden mesh apply` brings both files to the user's branch.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { startMesh, waitForMesh } from '../../src/client/mesh.js';
import type { MeshStatus } from '../../src/domain/mesh/state.js';
import { git, gitRepo, integrated, meshInput, steersTo, wardenCli } from '../helpers/mesh.js';
import { recordHistory } from '../helpers/histories.js';
import { useStack } from '../helpers/stack.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

describe('mesh gate O keeps correct work', () => {
  const stack = useStack();
  const warden = wardenCli(stack);

  test('a correct diff without the deliverable sections: one re-emit request at most, then integrated with a warning', async () => {
    const repo = gitRepo({ 'x.txt': 'x\n', 'y.txt': 'y\n' });
    const tasks = [
      { title: 'Uppercase x.txt {plain} {edit x.txt:1:X}', slug: 'stays', scope: ['x.txt'] },
      { title: 'Uppercase y.txt {plain-end} {edit y.txt:1:Y}', slug: 'ends', scope: ['y.txt'] },
    ];
    await startMesh(stack.warden, meshInput('prose', repo, tasks, { cap: 2 }));
    const done = await waitForMesh(stack.warden, 'prose', (s) => s.phase !== 'running' && s.phase !== 'setting-up', 120_000);
    const log = done.log.map((e) => e.text);
    expect(done.phase, log.slice(-30).join('\n')).toBe('ready');
    expect(done.phaseReason).toMatch(/^2 of 2 tasks through \(2 with warnings\)/);
    expect(done.tasks.map((t) => [t.task.slug, t.state, t.attempts.length])).toEqual([
      ['stays', 'integrated', 1],
      ['ends', 'integrated', 1],
    ]);
    for (const t of done.tasks) {
      expect(t.warnings).toEqual([
        expect.stringMatching(/^gate O: integrated without the deliverable sections \(missing: Summary, Intended files, Patch, Commands run, Risks\)/),
      ]);
      expect(t.attempts[0]!.gates).toMatchObject({ A: 'ok', C: 'ok', O: 'fail', D: 'ok', P: 'ok', S: 'ok' });
    }
    expect(log.filter((l) => /^(Action: restart|Action: cancel|STALL|FAILED)/.test(l))).toEqual([]);
    // The worker still in its session was asked once; the one that had ended was not asked at all.
    const asked = await steersTo(stack, 'agent-prose.stays.a1');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^Your final message lacks the deliverable sections/);
    expect(await steersTo(stack, 'agent-prose.ends.a1')).toEqual([]);
    expect(integrated(repo, 'prose')).toEqual(['mesh prose: task 1 stays (attempt 1)', 'mesh prose: task 2 ends (attempt 1)']);

    // The warning in the status JSON and on the dashboard, through the CLI.
    const json = JSON.parse((await warden('mesh', 'status', 'prose', '--json')).stdout) as MeshStatus;
    expect(json.tasks.map((t) => t.warnings?.length)).toEqual([1, 1]);
    const dashboard = await warden('mesh', 'status', 'prose');
    expect(dashboard.exitCode, dashboard.stderr).toBe(0);
    expect(dashboard.stdout).toMatch(/^1 stays .*integrated .*O=fail .* warning: gate O/m);
    expect(dashboard.stdout).toMatch(/^Warnings\n- task 1 stays: gate O: integrated without the deliverable sections/m);

    const apply = await warden('mesh', 'apply', 'prose', '--json');
    expect(apply.exitCode, apply.stderr).toBe(0);
    expect(readFileSync(join(repo, 'x.txt'), 'utf8')).toBe('X\n');
    expect(readFileSync(join(repo, 'y.txt'), 'utf8')).toBe('Y\n');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    const handle = stack.warden.client.workflow.getHandle('mesh-prose');
    expect((await handle.result()).phase).toBe('applied');
    await recordHistory(stack.server.address, handle, process.env.WARDEN_HISTORY_NAME ?? 'mesh-prose');
  });
});
