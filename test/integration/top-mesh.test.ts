/**
 * Live meshes in `warden top`, against a real dev server, a worker process and scripted mesh
 * workers: `top --once --json` lists them in `meshes` with their phase, task counts and reason (the
 * one awaiting input first), their workers as agents under them; after a worker SIGKILL (and a new
 * worker) they are still listed with the same counts. The terminal UI (tmux) shows the mesh rows
 * with their workers indented under them, keeps agent-only verbs off them, and a mesh's focus pane
 * lists its tasks. The mesh keys: `a` apply and `x` cancel ask y/N first (`n` keeps the mesh as it
 * is), `r` resumes a mesh awaiting input; apply on a mesh that is not ready shows the mesh's refusal;
 * `x` `y` cancels (phase cancelled, read with the client), `a` `y` on the ready mesh merges its
 * integration branch into the user's branch (read with git).
 */
import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { meshStatus, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { git, gitRepo, meshInput } from '../helpers/mesh.js';
import { eventually, ROOT, useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });
const SOCK = `warden-top-mesh-test-${process.pid}`;
const SESSION = 'topmesh';
const tmux = (...args: string[]) => execa('tmux', ['-L', SOCK, ...args], { reject: false });
const screen = async () => (await tmux('capture-pane', '-p', '-t', SESSION)).stdout;
async function screenWhere(pred: (s: string) => boolean, what: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    last = await screen();
    if (pred(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the screen to show ${what}; last screen:\n${last}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
const keys = async (...k: string[]) => {
  for (const key of k) {
    await tmux('send-keys', '-t', SESSION, key);
    await new Promise((r) => setTimeout(r, 300));
  }
};

afterAll(async () => {
  await tmux('kill-server');
});

interface TopJson {
  agents: number;
  rows: { agentId: string; parent: string | null; depth: number; state: string }[];
  meshes: {
    runId: string;
    phase: string;
    phaseReason: string | null;
    tasks: { total: number; integrated: number; done: number; failed: number; open: number } | null;
    progress: string | null;
    priority: string;
    detailed: boolean;
    error: string | null;
    ageMs: number;
  }[];
}
const topJson = async (): Promise<TopJson> => {
  const r = await execa('node', [join(ROOT, 'dist/src/cli/main.js'), 'top', '--once', '--json'], {
    env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace, WARDEN_LOG_LEVEL: 'warn' },
    reject: false,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as TopJson;
};

const READY_REASON = '2 of 3 tasks through, 1 failed; `warden mesh apply topm` merges';

test('meshes in top --once --json and the terminal UI, and across a worker SIGKILL', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'z.txt': 'z\n' });
  const tasks = [
    { title: 'Uppercase a {edit a.txt:1:A}', slug: 'fix-a', scope: ['a.txt'] },
    { title: 'Uppercase b {edit b.txt:1:B}', slug: 'fix-b', scope: ['b.txt'] },
    { title: 'Uppercase z {edit z.txt:1:Z} {edit outside.txt:1:escaped}', slug: 'stray', scope: ['z.txt'] },
  ];
  let w = stack.spawnWorker();
  await startMesh(stack.warden, meshInput('topm', repo, tasks, { cap: 3, patchDraftTimeout: '15s' }));
  // A second mesh awaits a human: its conflict budget is 0 and its two tasks edit the same line.
  const shared = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n' });
  await startMesh(
    stack.warden,
    meshInput(
      'budget',
      shared,
      [
        { title: 'Set line 2 to alpha {edit shared.txt:2:alpha}', slug: 'alpha', scope: ['shared.txt'] },
        { title: 'Set line 2 to beta {edit shared.txt:2:beta}', slug: 'beta', scope: ['shared.txt'] },
      ],
      { cap: 2, conflictBudget: 0 },
    ),
  );
  const ready = await waitForMesh(stack.warden, 'topm', (s) => s.phase === 'ready', 240_000);
  expect(ready.phaseReason).toBe(READY_REASON);
  const workers = ready.tasks.flatMap((t) => t.attempts.map((a) => a.agentId));
  const waiting = await waitForMesh(stack.warden, 'budget', (s) => s.phase === 'awaiting-input', 240_000);
  expect(waiting.tasks.map((t) => t.state)).toEqual(['integrated', 'needs_rebase']);

  // Visibility is eventually consistent: wait until top lists the mesh and its workers.
  const first = await eventually(
    async () => {
      const out = await topJson();
      const phases = out.meshes.map((m) => `${m.runId}:${m.phase}`).join(' ');
      return phases === 'budget:awaiting-input topm:ready' && workers.every((id) => out.rows.some((r) => r.agentId === id)) ? out : null;
    },
    { what: 'top lists the mesh and its workers', timeoutMs: 60_000 },
  );
  // The mesh awaiting input comes first, as an agent awaiting input does.
  expect(first.meshes[0]).toMatchObject({
    runId: 'budget',
    phase: 'awaiting-input',
    phaseReason: expect.stringMatching(/^conflict budget spent \(0\)/),
    tasks: { total: 2, integrated: 1, done: 0, failed: 0, open: 1 },
    progress: '1/2 integrated, 1 open',
    priority: 'awaiting-input',
  });
  expect(first.meshes[1]).toMatchObject({
    runId: 'topm',
    phase: 'ready',
    phaseReason: READY_REASON,
    tasks: { total: 3, integrated: 2, done: 0, failed: 1, open: 0 },
    progress: '2/3 integrated, 1 failed',
    priority: 'normal',
    detailed: true,
    error: null,
  });
  expect(first.meshes[1]!.ageMs).toBeGreaterThan(0);
  // The workers are agents, under the mesh (the existing fields, as before).
  expect(first.agents).toBe(first.rows.length);
  for (const id of workers) expect(first.rows.find((r) => r.agentId === id)).toMatchObject({ parent: 'mesh-topm', depth: 1 });

  // A worker SIGKILL, then a new worker: the meshes are still listed, with the same counts.
  await stack.kill(w);
  w = stack.spawnWorker();
  const after = await eventually(
    async () => {
      const out = await topJson();
      return out.meshes.length === 2 && out.meshes.every((m) => m.detailed && m.error === null) ? out : null;
    },
    { what: 'top lists the mesh again after the worker restart', timeoutMs: 90_000 },
  );
  expect(after.meshes.map((m) => [m.runId, m.phase, m.phaseReason, m.tasks, m.progress])).toEqual(
    first.meshes.map((m) => [m.runId, m.phase, m.phaseReason, m.tasks, m.progress]),
  );
  expect(after.meshes[1]).toMatchObject({ runId: 'topm', phase: 'ready', phaseReason: READY_REASON, progress: '2/3 integrated, 1 failed' });
  expect(after.meshes[1]!.ageMs).toBeGreaterThan(first.meshes[1]!.ageMs);

  // The one-shot text table: the mesh rows and the count.
  const text = await execa('node', [join(ROOT, 'dist/src/cli/main.js'), 'top', '--once', '--width', '160'], {
    env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace, WARDEN_LOG_LEVEL: 'warn' },
    reject: false,
  });
  expect(text.exitCode, text.stderr).toBe(0);
  expect(text.stdout.split('\n')[1]).toMatch(/^mesh-budget +‼ awaiting-input +mesh: 1\/2 integrated, 1 open/);
  expect(text.stdout).toMatch(/^mesh-topm +◆ ready +mesh: 2\/3 integrated, 1 failed/m);
  expect(text.stdout).toMatch(/^\d+ agents · 2 meshes · agents \$\d+\.\d{2,3} · supervision \$\d+\.\d{2,3} · \d+ ms$/m);

  // The terminal UI: the mesh row, its workers indented under it.
  const cli = `TEMPORAL_ADDRESS=${stack.server.address} TEMPORAL_NAMESPACE=${stack.server.namespace} exec node ${join(ROOT, 'dist/src/cli/main.js')} top --poll-ms 500 --list-ms 1000`;
  expect((await tmux('new-session', '-d', '-s', SESSION, '-x', '220', '-y', '45', cli)).exitCode).toBe(0);
  let s = await screenWhere(
    (x) => /2 meshes/.test(x) && /^mesh-topm .*2\/3 integrated, 1 failed/m.test(x) && /^mesh-budget .*1\/2 integrated/m.test(x),
    'the mesh rows',
  );
  const capture = join(mkdtempSync(join(tmpdir(), 'warden-top-mesh-')), 'roster.txt');
  writeFileSync(capture, s);
  console.log(`roster capture: ${capture}`);
  const lines = s.split('\n');
  const at = lines.findIndex((l) => /^mesh-topm /.test(l));
  expect(lines[at]).toMatch(/^mesh-topm +◆ ready +mesh: 2\/3 integrated, 1 failed · 2 of 3 tasks through/);
  const under = lines.slice(at + 1, at + 1 + workers.length).map((l) => /^ +└ (\S+) /.exec(l)?.[1]);
  expect(under.sort()).toEqual([...workers].sort());
  // The mesh awaiting input is the first row (selected): an agent-only verb is refused; Enter opens its task list.
  expect(lines[2]).toMatch(/^mesh-budget +‼ awaiting-input +mesh: 1\/2 integrated, 1 open · conflict budget spent/);
  expect(s).toMatch(/a apply {2}x cancel {2}r resume {2}⏎ focus/);
  await keys('p');
  s = await screenWhere((x) => /pause: mesh-budget is a mesh, not an agent/.test(x), 'the refusal');
  expect((await meshStatus(stack.warden, 'budget')).phase).toBe('awaiting-input');
  await keys('Enter');
  s = await screenWhere((x) => /▌mesh-budget/.test(x) && /task 2 beta: needs_rebase/.test(x), 'the mesh focus pane');
  expect(s).toMatch(/phase awaiting-input — conflict budget spent \(0\)/);
  expect(s).toMatch(/task 1 alpha: integrated/);
  expect(s).toMatch(/keys on a mesh: a apply · x cancel · r resume \(awaiting input\)/);
  await keys('Enter');

  // Apply on a mesh that is not ready: asked, then the mesh's own refusal in the status line; top goes on.
  await keys('a');
  await screenWhere(
    (x) => /apply mesh-budget: merge mesh\/budget\/integration into your branch \(it is awaiting-input; apply needs it ready\)\? y\/N/.test(x),
    'the apply question',
  );
  await keys('y');
  s = await screenWhere((x) => /apply mesh-budget failed: mesh budget has open tasks \(2 needs_rebase\); apply refused/.test(x), 'the apply refusal');
  expect(s).toMatch(/warden top · /);
  // Cancel asks; n keeps the mesh.
  await keys('x');
  await screenWhere((x) => /cancel mesh-budget: stop every worker and end the mesh, merging nothing\? y\/N/.test(x), 'the cancel question');
  await keys('n');
  await screenWhere((x) => /cancel mesh-budget: not sent \(answered no\)/.test(x), 'the cancel kept');
  expect((await meshStatus(stack.warden, 'budget')).phase).toBe('awaiting-input');
  // r resumes the mesh awaiting input (another conflict budget), without a question, as for an agent.
  await keys('r');
  await screenWhere((x) => /resume sent to mesh budget/.test(x), 'the resume sent');
  await waitForMesh(stack.warden, 'budget', (st) => st.log.some((l) => l.text.startsWith('RESUMED by a human')), 60_000);
  // x then y cancels it.
  await keys('x');
  await screenWhere((x) => /cancel mesh-budget: stop every worker/.test(x), 'the cancel question again');
  await keys('y');
  await screenWhere((x) => /cancel sent to mesh budget/.test(x), 'the cancel sent');
  expect((await waitForMesh(stack.warden, 'budget', (st) => st.phase === 'cancelled', 120_000)).phase).toBe('cancelled');

  // a then y on the ready mesh: its integration branch is merged into the user's branch.
  await keys('/mesh-topm', 'Enter');
  s = await screenWhere((x) => /filter \/mesh-topm/.test(x) && /^mesh-topm +◆ ready/m.test(x) && /a apply {2}x cancel/.test(x), 'the ready mesh selected');
  expect(git(repo, 'show', 'main:a.txt')).toBe('a');
  await keys('a');
  await screenWhere((x) => /apply mesh-topm: merge mesh\/topm\/integration into your branch\? y\/N/.test(x), 'the apply question on the ready mesh');
  await keys('y');
  s = await screenWhere((x) => /merged mesh\/topm\/integration into main \([0-9a-f]{12}\)/.test(x), 'the apply result', 120_000);
  const commit = /merged mesh\/topm\/integration into main \(([0-9a-f]{12})\)/.exec(s)![1]!;
  expect(git(repo, 'rev-parse', 'main').startsWith(commit)).toBe(true);
  expect(git(repo, 'show', 'main:a.txt')).toBe('A');
  expect(git(repo, 'show', 'main:b.txt')).toBe('B');
  expect(git(repo, 'show', 'main:z.txt')).toBe('z'); // the stray task failed: nothing of it is merged
  expect((await waitForMesh(stack.warden, 'topm', (st) => st.phase === 'applied', 60_000)).phase).toBe('applied');
  await keys('q');
}, 480_000);
