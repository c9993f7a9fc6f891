/**
 * Integration is idempotent across a crash between any two git commands. A `git` wrapper placed
 * first on the warden worker's PATH (warden's git runner finds git by PATH) holds each window open
 * on a marker, once: after `git apply --index` (the change staged, not committed), inside
 * `git commit` holding `index.lock`, and after the commit before the activity returns. The test
 * SIGKILLs the worker (and the held git) in each window and starts a new worker. Afterwards every
 * task is integrated exactly once (one `Mesh-Attempt` trailer each), each commit touches only its
 * own task's file, and the mesh is ready and appliable. An index.lock a live process may hold is
 * never removed: the integration's bounded retries end the mesh `failed`, and the webhooks are told.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { applyMesh, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { git, gitRepo, meshInput } from '../helpers/mesh.js';
import { running } from '../helpers/procs.js';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';
import { startWebhookListener } from '../helpers/webhook.js';
import { spawn } from 'node:child_process';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const CRASH = mkdtempSync(join(tmpdir(), 'warden-git-crash-'));
const REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
mkdirSync(join(CRASH, 'bin'));
// Each marker fires once (`mv` takes it atomically); the held process writes its pid to `held`.
writeFileSync(
  join(CRASH, 'bin', 'git'),
  `#!/bin/sh
# Test-only git wrapper: holds a window of warden's integration open, once per marker.
D='${CRASH}'
hold() { echo $$ > "$D/held.tmp"; mv "$D/held.tmp" "$D/held"; exec sleep 3600; }
case " $* " in
  *" apply --index - "*)
    if mv "$D/arm-apply" "$D/fired-apply" 2>/dev/null; then '${REAL_GIT}' "$@" || exit $?; hold; fi ;;
  *" commit "*"task 2 "*"Mesh-Attempt: "*)
    if mv "$D/arm-lock" "$D/fired-lock" 2>/dev/null; then
      for a in "$@"; do case "$a" in --git-dir=*) GD="\${a#--git-dir=}" ;; esac; done
      : > "$GD/index.lock"; hold
    fi ;;
  *" commit "*"task 3 "*"Mesh-Attempt: "*)
    if mv "$D/arm-commit" "$D/fired-commit" 2>/dev/null; then '${REAL_GIT}' "$@" || exit $?; hold; fi ;;
esac
exec '${REAL_GIT}' "$@"
`,
);
chmodSync(join(CRASH, 'bin', 'git'), 0o755);
let w: ReturnType<typeof stack.spawnWorker>;
const stack = useWorkerProcesses({ WARDEN_HOME: HOME, PATH: `${join(CRASH, 'bin')}:${process.env.PATH}` });

test('a worker killed in every window of an integration: each task integrated exactly once, nothing swept in, the mesh ready', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const tasks = ['a', 'b', 'c'].map((f) => ({ title: `Uppercase ${f} {edit ${f}.txt:1:${f.toUpperCase()}}`, slug: `up-${f}`, scope: [`${f}.txt`] }));
  for (const m of ['apply', 'lock', 'commit']) writeFileSync(join(CRASH, `arm-${m}`), '');
  w = stack.spawnWorker();
  await startMesh(stack.warden, meshInput('icrash', repo, tasks, { cap: 3, ackSla: '60s', stallThreshold: 30 }, { workerHeartbeatTimeoutMs: 3_000 }));
  // Three windows: task 1 after `apply --index`, task 2 inside `commit` holding index.lock, task 3 after `commit`.
  for (const window of ['apply', 'lock', 'commit']) {
    const pid = await eventually(async () => (existsSync(join(CRASH, 'held')) ? Number(readFileSync(join(CRASH, 'held'), 'utf8')) : null), {
      timeoutMs: 150_000,
      intervalMs: 200,
      what: `the ${window} window held`,
    });
    expect(existsSync(join(CRASH, `fired-${window}`))).toBe(true);
    // A crash: the worker and the git it ran die together.
    process.kill(pid, 'SIGKILL');
    await stack.kill(w);
    await eventually(async () => !running(pid) || null, { what: `pid ${pid} gone` });
    rmSync(join(CRASH, 'held'));
    w = stack.spawnWorker();
  }
  const done = await waitForMesh(stack.warden, 'icrash', (s) => s.phase !== 'running' && s.phase !== 'setting-up', 240_000);
  if (process.env.WARDEN_MESH_SHOW) console.log(renderDashboard(done, Date.now(), { logLines: 60 }));
  expect(done.phase).toBe('ready');
  expect(done.tasks.map((t) => [t.task.slug, t.state, t.attempts.length])).toEqual([
    ['up-a', 'integrated', 1],
    ['up-b', 'integrated', 1],
    ['up-c', 'integrated', 1],
  ]);
  expect(done.conflicts).toBe(0);
  // Exactly once: one commit per task, each with its own trailer.
  const commits = git(repo, 'log', '--reverse', '--format=%H', 'main..mesh/icrash/integration').split('\n');
  const trailers = commits.map((c) => git(repo, 'log', '-1', '--format=%(trailers:key=Mesh-Attempt,valueonly,separator=)', c));
  expect(trailers).toEqual(['icrash.up-a.a1', 'icrash.up-b.a1', 'icrash.up-c.a1']);
  expect(commits).toEqual(done.tasks.map((t) => t.integratedCommit));
  // Nothing swept in: each commit's diff touches only its own task's file.
  expect(commits.map((c) => git(repo, 'show', '--name-only', '--format=', c))).toEqual(['a.txt', 'b.txt', 'c.txt']);
  expect(git(repo, 'rev-parse', 'mesh/icrash/integration')).toBe(done.integrationHead);
  const applied = await applyMesh(stack.warden, 'icrash');
  expect(applied.branch).toBe('main');
  for (const f of ['a', 'b', 'c']) expect(readFileSync(join(repo, `${f}.txt`), 'utf8')).toBe(`${f.toUpperCase()}\n`);
}, 600_000);

test('an index.lock held while a live process runs in the integration worktree is kept: bounded retries, the mesh ends failed and notified', async () => {
  const hook = await startWebhookListener();
  const repo = gitRepo({ 'a.txt': 'a\n' });
  const tasks = [{ title: 'Uppercase a {slow:4} {edit a.txt:1:A}', slug: 'up-a', scope: ['a.txt'] }];
  let holder: ReturnType<typeof spawn> | null = null;
  try {
    await startMesh(stack.warden, meshInput('locked', repo, tasks, { ackSla: '60s' }, { notify: { webhooks: [{ url: hook.url }], log: true } }));
    const up = await waitForMesh(stack.warden, 'locked', (s) => s.integrationDir !== null && s.phase === 'running', 60_000);
    // A live process in the integration worktree and a lock: it may be a git at work.
    holder = spawn('sleep', ['600'], { cwd: up.integrationDir!, stdio: 'ignore' });
    const lock = join(repo, '.git', 'worktrees', 'integration', 'index.lock');
    writeFileSync(lock, '');
    const failed = await waitForMesh(stack.warden, 'locked', (s) => s.phase !== 'running', 180_000);
    expect(failed.phase).toBe('failed');
    expect(failed.phaseReason).toMatch(/^meshIntegrate failed: .*index\.lock is held and processes \d+ still run in /);
    expect(existsSync(lock)).toBe(true);
    expect(failed.tasks[0]!.state).toBe('failed');
    const delivery = await eventually(async () => hook.accepted()[0], { what: 'the webhook', timeoutMs: 60_000 });
    expect(delivery.json).toMatchObject({
      event: 'mesh-failed',
      agentId: 'mesh-locked',
      reason: expect.stringMatching(/^mesh failed: meshIntegrate failed: /),
    });
  } finally {
    holder?.kill('SIGKILL');
    await hook.close();
  }
}, 400_000);
