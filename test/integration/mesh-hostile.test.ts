/**
 * The mesh against hostile workers (test/fixtures/mesh-hostile-agent.py), on a real dev server with
 * the worker in its own process (so a frozen worker cannot freeze the test): hooks, a worker's own
 * `.git`, the user's filter drivers, quoted and prefixed diffs, FIFOs, a sparse huge file, paths git
 * refuses, symlinks out of the tree, a swapped integration worktree. Every command a hostile worker
 * plants leaves a marker file (with its environment) in a directory outside the repository if it
 * ever runs. Shown: no marker appears, nothing outside the repository changes, the user's branch is
 * untouched until `mesh apply`, every mesh ends in a named state, and another agent on the same
 * worker keeps answering while a FIFO is in place.
 */
import { execa } from 'execa';
import { existsSync, lstatSync, statSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { applyMesh, cancelMesh, meshStatus, startMesh, waitForMesh } from '../../src/client/mesh.js';
import type { MeshTaskInput, TunablesInput } from '../../src/domain/mesh/config.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import type { MeshStatus } from '../../src/domain/mesh/state.js';
import { git, gitRepo, meshInput } from '../helpers/mesh.js';
import { ROOT, eventually, useWorkerProcesses } from '../helpers/stack.js';

const HOSTILE = join(ROOT, 'test/fixtures/mesh-hostile-agent.py');
const SECRET = `hostile-test-secret-${process.pid}`;
const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
// The worker process holds a secret the operator did not allow to subprocesses.
const stack = useWorkerProcesses({ WARDEN_HOME: HOME, WARDEN_TEST_SECRET: SECRET });
beforeAll(() => void stack.spawnWorker());

const ENDED = ['ready', 'failed', 'cancelled', 'applied'];
const show = (s: MeshStatus) => process.env.WARDEN_MESH_SHOW && console.log(renderDashboard(s, Date.now(), { logLines: 40 }));
const markerDir = () => mkdtempSync(join(tmpdir(), 'warden-hostile-marker-'));
/** Evidence that a planted command ran: `<what>.ran` files (and anything else the attack wrote outside). */
const ran = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.ran'));

function hostile(runId: string, repo: string, tasks: MeshTaskInput[], tunables: TunablesInput = {}) {
  return meshInput(runId, repo, tasks, { stallThreshold: 30, ...tunables }, { driver: { kind: 'command', command: ['python3', HOSTILE] } });
}

/** Start a mesh and wait for it to end in a named state (ready, failed, cancelled, applied). */
async function runToEnd(runId: string, repo: string, tasks: MeshTaskInput[], tunables: TunablesInput = {}): Promise<MeshStatus> {
  await startMesh(stack.warden, hostile(runId, repo, tasks, tunables));
  return waitToEnd(runId);
}

/**
 * Wait for the mesh to end in a named state. A task waiting for a rebase (which a hostile worker
 * never sends) or a mesh workflow that failed under its own status (which still says `running`)
 * ends the wait too, so that the assertions show it.
 */
async function waitToEnd(runId: string, timeoutMs = 110_000): Promise<MeshStatus> {
  const handle = stack.warden.client.workflow.getHandle(`mesh-${runId}`);
  const s = await waitForMesh(stack.warden, runId, (x) => ENDED.includes(x.phase) || x.tasks.some((t) => t.state === 'needs_rebase'), timeoutMs).catch(
    async (err: unknown) => {
      const st = (await handle.describe()).status.name;
      throw new Error(`${String(err)}; the mesh workflow is ${st}`);
    },
  );
  show(s);
  return s;
}

/** The user's branch and checkout are as the test made them. */
function untouched(repo: string, base: string, files: Record<string, string>): void {
  expect(git(repo, 'rev-parse', 'main')).toBe(base);
  expect(git(repo, 'status', '--porcelain')).toBe('');
  for (const [f, text] of Object.entries(files)) expect(readFileSync(join(repo, f), 'utf8')).toBe(text);
}

const reasons = (s: MeshStatus) => s.tasks.map((t) => [t.task.slug, t.state, t.reason]);

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

describe('mesh against hostile workers', () => {
  test('a hook the patch adds (core.hooksPath in the tree) never runs; apply refuses to merge a change to the hooks path, changing nothing', async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n' });
    git(repo, 'config', 'core.hooksPath', '.githooks');
    const base = git(repo, 'rev-parse', 'HEAD');
    const s = await runToEnd('hook', repo, [{ title: `Hook {probe hook-in-patch} {marker ${m}} {edit a.txt:A}`, slug: 'hook' }]);
    expect(s.phase).toBe('ready');
    expect(reasons(s)).toEqual([['hook', 'integrated', null]]);
    expect(git(repo, 'show', 'mesh/hook/integration:.githooks/pre-merge-commit')).toContain('hook-in-patch-pre-merge-commit.ran');
    expect(ran(m)).toEqual([]);
    untouched(repo, base, { 'a.txt': 'a\n' });
    // The merge would run the patch's pre-merge-commit, commit-msg and post-merge in the checkout: refused.
    const refused = await applyMesh(stack.warden, 'hook').then(
      () => null,
      (err: unknown) => String(err instanceof Error ? err.message : err),
    );
    expect(ran(m)).toEqual([]);
    expect(refused).toContain('mesh/hook/integration changes .githooks/commit-msg (the hooks path (core.hooksPath=.githooks))');
    expect(refused).toContain('not merged, nothing changed');
    untouched(repo, base, { 'a.txt': 'a\n' });
    expect(existsSync(join(repo, '.githooks'))).toBe(false);
    expect((await meshStatus(stack.warden, 'hook')).phase).toBe('ready');
    await cancelMesh(stack.warden, 'hook', 'test over');
  });

  test("the user's own hooks run only at mesh apply, in the user's checkout, without the worker's secrets", async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n' });
    for (const hook of ['pre-commit', 'post-checkout', 'commit-msg', 'post-commit', 'pre-merge-commit'])
      writeFileSync(join(repo, '.git/hooks', hook), `#!/bin/sh\nenv > '${m}/user-${hook}.ran'\n`, { mode: 0o755 });
    const base = git(repo, 'rev-parse', 'HEAD');
    const s = await runToEnd('userhooks', repo, [{ title: `Honest {probe honest} {marker ${m}} {edit a.txt:A}`, slug: 'honest' }]);
    expect(reasons(s)).toEqual([['honest', 'integrated', null]]);
    expect(ran(m)).toEqual([]); // not on worktree add (post-checkout), not on integration commits
    untouched(repo, base, { 'a.txt': 'a\n' });
    await applyMesh(stack.warden, 'userhooks');
    expect(ran(m).sort()).toEqual(['user-commit-msg.ran', 'user-pre-merge-commit.ran']); // the merge's hooks
    const env = readFileSync(join(m, 'user-pre-merge-commit.ran'), 'utf8');
    expect(env).toMatch(/^PATH=/m);
    expect(env).not.toContain(SECRET);
  });

  test("a worker's own .git (core.fsmonitor, diff.external, clean filter) and the user's filter drivers never run in warden", async () => {
    const [m1, m2] = [markerDir(), markerDir()];
    const fake = gitRepo({ 'a.txt': 'a\n' });
    const filtered = gitRepo({ 'a.txt': 'a\n' });
    for (const k of ['clean', 'smudge', 'process']) {
      writeFileSync(join(m2, `${k}.sh`), `#!/bin/sh\nenv > '${m2}/user-filter-${k}.ran'\ncat\n`, { mode: 0o755 });
      git(filtered, 'config', `filter.probe.${k}`, join(m2, `${k}.sh`));
    }
    git(filtered, 'config', 'filter.probe.required', 'true');
    const [a, b] = await Promise.all([
      runToEnd('fakegit', fake, [{ title: `Fake git {probe fake-git} {marker ${m1}} {edit a.txt:A}`, slug: 'fake' }]),
      runToEnd('filter', filtered, [{ title: `Filter {probe user-filter} {marker ${m2}} {edit a.txt:A}`, slug: 'filter' }]),
    ]);
    // warden drafted both patches from the worktrees, on its own admin directories, running nothing.
    expect(ran(m1)).toEqual([]);
    expect(ran(m2)).toEqual([]);
    expect(reasons(a)).toEqual([['fake', 'integrated', null]]);
    expect(reasons(b)).toEqual([['filter', 'integrated', null]]);
    expect(a.tasks[0]!.attempts[0]!.patchFiles.sort()).toEqual(['.gitattributes', 'a.txt']);
    expect(git(fake, 'show', 'mesh/fakegit/integration:a.txt')).toBe('A');
    expect(git(filtered, 'show', 'mesh/filter/integration:.gitattributes')).toBe('* filter=probe');
    untouched(fake, git(fake, 'rev-parse', 'main'), { 'a.txt': 'a\n' });
    expect(git(filtered, 'log', '--format=%s', 'main')).toBe('base');
  });

  test('scope comes from git: quoted names and other prefixes are counted, the out-of-scope edit is never integrated', async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'e.txt': 'e\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    const s = await runToEnd('scope', repo, [
      { title: `Quoted {probe quoted} {marker ${m}} {edit a.txt:A}`, slug: 'quoted', scope: ['a.txt'] },
      { title: `Prefixed {probe prefixed} {marker ${m}} {edit b.txt:B} {sneak e.txt}`, slug: 'prefixed', scope: ['b.txt'] },
    ]);
    expect(s.phase).toBe('ready');
    expect(reasons(s)).toEqual([
      ['quoted', 'failed', 'gate S failed: c.txt outside the scope a.txt; not integrated'],
      ['prefixed', 'failed', 'gate S failed: e.txt outside the scope b.txt; not integrated'],
    ]);
    expect(s.tasks.map((t) => t.attempts[0]!.patchFiles)).toEqual([
      ['a.txt', 'c.txt'],
      ['b.txt', 'e.txt'],
    ]);
    expect(git(repo, 'show', 'mesh/scope/integration:c.txt')).toBe('c');
    expect(git(repo, 'show', 'mesh/scope/integration:e.txt')).toBe('e');
    untouched(repo, base, { 'c.txt': 'c\n', 'e.txt': 'e\n' });
  });

  test('a FIFO patch or checkpoint fails its task; the worker never blocks: another agent keeps answering', async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'd.txt': 'd\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    const bystander = `bystander-${process.pid}`;
    await stack.warden.start({ agentId: bystander, task: 'answer while a mesh worker attacks' });
    await startMesh(
      stack.warden,
      hostile(
        'fifo',
        repo,
        [
          { title: `Fifo patch {probe fifo-patch} {marker ${m}} {edit a.txt:A}`, slug: 'fifo-patch' },
          { title: `Fifo checkpoint {probe fifo-checkpoint} {marker ${m}} {edit b.txt:B}`, slug: 'fifo-cp' },
          { title: `Honest {probe honest} {marker ${m}} {edit d.txt:D}`, slug: 'honest' },
        ],
        { cap: 3 },
      ),
    );
    const fifos = ['patches/fifo-patch--a1.diff', 'checkpoints/fifo-cp--a1.md'].map((p) => join(repo, '.mesh/runs/fifo', p));
    await eventually(async () => fifos.every((p) => existsSync(p) && lstatSync(p).isFIFO()), { what: 'both FIFOs', timeoutMs: 60_000 });
    // Ticks go on with the FIFOs in place (the tick reads them), and the other agent answers a report and a query.
    const ticks = (await withTimeout(meshStatus(stack.warden, 'fifo'), 30_000, 'mesh status')).ticks;
    await withTimeout(
      waitForMesh(stack.warden, 'fifo', (x) => x.ticks >= ticks + 2 || ENDED.includes(x.phase), 30_000),
      40_000,
      'two more ticks',
    );
    for (const p of fifos) expect(lstatSync(p).isFIFO()).toBe(true);
    const reply = await withTimeout(stack.warden.reportTurn(bystander, { id: 'b1', text: 'still here' }), 30_000, 'the bystander report');
    expect(reply.accepted).toBe(true);
    expect((await withTimeout(stack.warden.status(bystander), 30_000, 'the bystander status')).turns).toBe(1);
    const s = await withTimeout(waitToEnd('fifo'), 120_000, 'the mesh');
    expect(s.phase).toBe('ready');
    expect(reasons(s)).toEqual([
      ['fifo-patch', 'failed', 'gate D refused: the patch draft is a named pipe (FIFO), not a regular file; not integrated'],
      ['fifo-cp', 'failed', 'gate C refused: the checkpoint is a named pipe (FIFO), not a regular file'],
      ['honest', 'integrated', null],
    ]);
    untouched(repo, base, { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await stack.warden.signal(bystander, 'stop', { reason: 'test over' });
  });

  test('a draft swapped after its gates passed (while it waits for its turn) is refused, never integrated', async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    const s = await runToEnd(
      'swapdraft',
      repo,
      [
        { title: `Late {probe late} {marker ${m}} {edit a.txt:A}`, slug: 'late', scope: ['a.txt'] },
        { title: `Swap {probe swap-after-gate} {marker ${m}} {edit b.txt:B}`, slug: 'swap', scope: ['b.txt'] },
      ],
      { cap: 2 },
    );
    expect(s.phase).toBe('ready');
    expect(s.log.map((l) => l.text).find((x) => x.startsWith('INTEGRATED task 1'))).toBeDefined();
    expect(reasons(s)).toEqual([
      ['late', 'integrated', null],
      ['swap', 'failed', 'gate D refused: the patch draft changed after its gates passed; not integrated'],
    ]);
    expect(s.tasks[1]!.attempts[0]!.patchFiles).toEqual(['b.txt', 'c.txt']); // what it swapped in
    expect(git(repo, 'show', 'mesh/swapdraft/integration:c.txt')).toBe('c');
    untouched(repo, base, { 'c.txt': 'c\n' });
  });

  test('a 600 MB sparse patch draft, and a small patch that inflates to 120 MB, fail their task within the byte budgets; the mesh ends ready', async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'd.txt': 'd\n' });
    const s = await runToEnd(
      'sparse',
      repo,
      [
        { title: `Sparse {probe sparse-patch} {marker ${m}} {edit a.txt:A}`, slug: 'sparse' },
        { title: `Bomb {probe binary-bomb} {marker ${m}} {edit d.txt:D}`, slug: 'bomb' },
        { title: `Honest {probe honest} {marker ${m}} {edit b.txt:B}`, slug: 'honest' },
      ],
      { cap: 3 },
    );
    expect(s.phase).toBe('ready');
    expect(reasons(s)).toEqual([
      ['sparse', 'failed', 'gate D refused: the patch draft is 629145600 bytes, over its budget of 1048576; not integrated'],
      ['bomb', 'failed', "gate D refused: the patch's binary files are 125829120 bytes, over their budget of 16777216; not integrated"],
      ['honest', 'integrated', null],
    ]);
    expect(statSync(join(repo, '.mesh/runs/sparse/patches/bomb--a1.diff')).size).toBeLessThan(1024 * 1024);
    expect(git(repo, 'ls-tree', '--name-only', 'mesh/sparse/integration')).toBe('a.txt\nb.txt\nd.txt');
  });

  test('patches git refuses for safety (.git/config, ../outside.txt, beyond a symlink) fail their task with the reason, never a rebase request', async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'd.txt': 'd\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    const s = await runToEnd(
      'refused',
      repo,
      [
        { title: `Git config {probe git-config} {marker ${m}} {edit a.txt:A}`, slug: 'git-config' },
        { title: `Outside {probe outside} {marker ${m}} {edit b.txt:B}`, slug: 'outside' },
        { title: `Beyond {probe beyond-symlink} {marker ${m}} {edit a.txt:A}`, slug: 'beyond' },
        { title: `Honest {probe honest} {marker ${m}} {edit d.txt:D}`, slug: 'honest' },
      ],
      { cap: 4 },
    );
    expect(s.phase).toBe('ready');
    expect(reasons(s)).toEqual([
      ['git-config', 'failed', 'gate P refused: the patch touches a path git must not write: ".git/config" is inside a .git directory; not integrated'],
      ['outside', 'failed', 'gate P refused: the patch touches a path git must not write: "../outside.txt" leaves the repository; not integrated'],
      ['beyond', 'failed', "gate P refused: git refuses the patch: error: affected file 'lnk/evil.txt' is beyond a symbolic link; not integrated"],
      ['honest', 'integrated', null],
    ]);
    expect(s.conflicts).toBe(0);
    expect(s.log.some((l) => l.text.startsWith('REBASE REQUEST'))).toBe(false);
    expect(readdirSync(m).sort()).toEqual(['git-config.sh']); // the planted script, never run; nothing written through the symlink
    expect(existsSync(join(repo, '.mesh/runs/refused/outside.txt'))).toBe(false);
    expect(readFileSync(join(repo, '.git/config'), 'utf8')).not.toContain('fsmonitor');
    untouched(repo, base, { 'a.txt': 'a\n' });
  });

  test('symlinks out of the tree: a symlinked patch draft is refused, a symlinked patches directory gets no draft', async () => {
    const [m1, m2] = [markerDir(), markerDir()];
    const [r1, r2] = [gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' }), gitRepo({ 'a.txt': 'a\n' })];
    const [a, b] = await Promise.all([
      runToEnd('symlink', r1, [
        { title: `Symlink {probe symlink-patch} {marker ${m1}} {edit a.txt:A}`, slug: 'symlink', scope: ['a.txt'] },
        { title: `Honest {probe honest} {marker ${m1}} {edit b.txt:B}`, slug: 'honest' },
      ]),
      runToEnd('patchesdir', r2, [{ title: `Patches dir {probe symlink-patches} {marker ${m2}} {edit a.txt:A}`, slug: 'dir' }]),
    ]);
    expect(reasons(a)).toEqual([
      ['symlink', 'failed', 'gate D refused: the patch draft is a symlink, not a regular file; not integrated'],
      ['honest', 'integrated', null],
    ]);
    expect(a.phase).toBe('ready');
    expect(b.phase).toBe('ready');
    expect(b.tasks[0]!.state).toBe('failed');
    expect(b.tasks[0]!.reason).toMatch(
      /^gate D refused: warden cannot write the patch draft: .*patches is not inside .* \(a directory on its path is a symlink\); not integrated$/,
    );
    expect(readdirSync(join(m2, 'patches-out'))).toEqual([]); // warden wrote nothing outside the repository
    expect(git(r1, 'show', 'mesh/symlink/integration:a.txt')).toBe('a');
  });

  test('a failing mesh activity ends the mesh as failed, stops its workers, and status says so', async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const base = git(repo, 'rev-parse', 'HEAD');
    const s = await runToEnd('swap', repo, [{ title: `Swap {probe swap-integration} {marker ${m}} {edit a.txt:A}`, slug: 'swap' }]);
    expect(s.phase).toBe('failed');
    expect(s.phaseReason).toMatch(/^meshIntegrate failed: .*integration is not a directory warden made \(a symlink\)/);
    expect(reasons(s)).toEqual([['swap', 'failed', `mesh failed: ${s.phaseReason}`]]);
    expect(s.log.at(-1)!.text).toMatch(/^MESH FAILED: meshIntegrate failed: .*; its workers were stopped$/);
    const cli = await execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, 'mesh', 'status', 'swap'], { reject: false });
    expect(cli.exitCode, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^mesh swap: failed \(meshIntegrate failed: /);
    const agent = stack.warden.client.workflow.getHandle('agent-swap.swap.a1');
    await eventually(async () => (await agent.describe()).status.name !== 'RUNNING', { what: 'the worker agent to stop', timeoutMs: 60_000 });
    expect((await stack.warden.client.workflow.getHandle('mesh-swap').result()).phase).toBe('failed');
    expect(readdirSync(join(m, 'integration-out'))).toEqual([]);
    untouched(repo, base, { 'a.txt': 'a\n' });
  });

  test('mesh status shows a worker agent that waits for a human (paused)', async () => {
    const m = markerDir();
    const repo = gitRepo({ 'a.txt': 'a\n' });
    await startMesh(
      stack.warden,
      hostile('paused', repo, [{ title: `Idle {probe idle} {marker ${m}} {edit a.txt:A}`, slug: 'idle' }], {
        stallThreshold: 100,
        checkpointInterval: '10m',
        patchDraftTimeout: '10m',
      }),
    );
    await waitForMesh(stack.warden, 'paused', (x) => x.tasks[0]!.attempts[0]?.acked === true, 60_000);
    await stack.warden.control('paused.idle.a1', 'pause', { reason: 'a human looks at it' });
    const s = await waitForMesh(stack.warden, 'paused', (x) => !!x.tasks[0]!.attempts[0]?.agentNote, 60_000);
    show(s);
    expect(s.tasks[0]!.attempts[0]!.agentNote).toBe('paused (a human looks at it)');
    expect(s.log.map((l) => l.text)).toContain('AGENT NEEDS A HUMAN task 1 paused.idle.a1: paused (a human looks at it)');
    expect(renderDashboard(s, Date.now())).toContain('[agent paused (a human looks at it)]');
    await cancelMesh(stack.warden, 'paused', 'test over');
    expect((await stack.warden.client.workflow.getHandle('mesh-paused').result()).phase).toBe('cancelled');
  });
});
