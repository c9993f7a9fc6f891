/**
 * Definition of done, verified by warden, with real processes: a dev server, worker processes, real
 * git repositories and real verify commands (`sh -c …`).
 *
 * 1. A false done-claim (ok.txt missing) gets a VERIFY whisper in the next reply and the agent goes
 *    on; after it creates ok.txt, a second claim ends it `done` with lastVerification.passed.
 * 2. A protected test file deleted in the working tree, never named in the transcript: the claim is
 *    refused as REWARD_HACKING from the git diff.
 * 3. The worker is SIGKILLed while the verify command runs: the check runs again on a new worker
 *    (a crash is never a pass), and the leftover command of the dead worker is gone.
 * 4. `npm test` as the check and `test/**` protected: a test whose expected value was rewritten
 *    passes `npm test` but is no verified done; the code fixed and a new test file added, it is. A
 *    protected package.json whose test script became `exit 0` is no verified done either.
 * 5. A verify command that starts a daemon in a session of its own with an empty environment
 *    (`setsid env -i …&`) and exits: once the check is over, the daemon is gone (the check is contained).
 */
import { execaSync } from 'execa';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { finalStatus, waitForStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { processesWithArg, processesWithEnv } from '../helpers/procs.js';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';

const stack = useWorkerProcesses();
let worker: ReturnType<typeof stack.spawnWorker> | undefined;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A git repository with one commit: src/add.js and a test for it. */
function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-verify-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'test'));
  writeFileSync(join(dir, 'src.js'), 'export const add = (a, b) => a + b;\n');
  writeFileSync(join(dir, 'test', 'add.test.js'), "import { add } from '../src.js';\nexpect(add(1, 2)).toBe(3);\nexpect(add(2, 2)).toBe(4);\n");
  // A name git quotes in its plain output (non-ASCII): protected all the same.
  writeFileSync(join(dir, 'test', 'añadir.test.js'), "import { add } from '../src.js';\nexpect(add(0, 0)).toBe(0);\n");
  const git = (...args: string[]) =>
    execaSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd: dir });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'start');
  return dir;
}

test('a false done-claim is whispered back; a true one ends the agent done', async () => {
  worker = stack.spawnWorker();
  const dir = repo();
  const agentId = 'verify-ok';
  const command = "echo checking ok.txt; sh -c 'test -f ok.txt'";
  await stack.warden.start({ agentId, task: 'Create ok.txt in the repository.', verify: { command, cwd: dir } });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Looking at the repository.' });

  const claim = await stack.warden.reportTurn(agentId, { id: 't2', text: 'I created ok.txt. The task is complete.', done: true });
  expect(claim).toMatchObject({ accepted: true, state: 'running', verifying: true });
  const failed = await waitForStatus(stack.warden, agentId, (s) => s.lastVerification !== null, 'the first verification', 120_000);
  expect(failed).toMatchObject({ state: 'running', verifying: false, escalationStep: 1 });
  expect(failed.lastVerification).toMatchObject({ command, passed: false, exitCode: 1 });
  expect(failed.lastVerification!.outputTail).toContain('checking ok.txt');

  const next = await stack.warden.reportTurn(agentId, { id: 't3', text: 'Waiting for feedback.' });
  expect(next.state).toBe('running');
  expect(next.whispers.map((w) => w.type)).toEqual(['VERIFY']);
  expect(next.whispers[0]!.text).toMatch(/^\[VERIFY\] /);
  expect(next.whispers[0]!.text).toContain(command);
  expect(next.whispers[0]!.text).toContain('checking ok.txt');

  writeFileSync(join(dir, 'ok.txt'), 'ok\n');
  await stack.warden.reportTurn(agentId, { id: 't4', text: 'Created ok.txt for real. Done.', done: true });
  const final = await finalStatus(stack.warden.handle(agentId));
  expect(final.state).toBe('done');
  expect(final.lastVerification).toMatchObject({ command, passed: true, exitCode: 0 });
});

test('a protected test deleted in the working tree is REWARD_HACKING, though the transcript never names it', async () => {
  worker ??= stack.spawnWorker();
  const dir = repo();
  const agentId = 'verify-protect';
  await stack.warden.start({ agentId, task: 'Make the add function handle strings.', verify: { command: 'true', cwd: dir }, protect: ['test/**'] });
  const turns = [
    { id: 't1', text: 'Reading the source.', toolCalls: [{ name: 'shell', args: 'cat src.js', result: 'export const add = (a, b) => a + b;', ok: true }] },
    { id: 't2', text: 'Cleaning up the workspace.', toolCalls: [{ name: 'shell', args: 'sh cleanup.sh', result: '', ok: true }] },
  ];
  await stack.warden.reportTurn(agentId, turns[0]!);
  // What cleanup.sh did, invisible in the transcript.
  rmSync(join(dir, 'test', 'add.test.js'));
  rmSync(join(dir, 'test', 'añadir.test.js'));
  await stack.warden.reportTurn(agentId, turns[1]!);
  const claim = { id: 't3', text: 'All tests pass. The task is complete.', done: true };
  await stack.warden.reportTurn(agentId, claim);
  expect(JSON.stringify([...turns, claim])).not.toMatch(/add\.test|añadir/);

  const s = await waitForStatus(stack.warden, agentId, (x) => x.lastVerification !== null, 'the verification', 120_000);
  expect(s.state).toBe('running');
  expect(s.lastVerification).toMatchObject({
    command: 'true',
    passed: false,
    exitCode: 0,
    protectedChanges: ['D test/add.test.js +0/-3, assertions -2/+0', 'D test/añadir.test.js +0/-2, assertions -1/+0'],
  });
  expect(s.lastVerification!.rewardHacking).toContain('test/add.test.js');
  expect(s.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'REWARD_HACKING' });
  const reply = await stack.warden.reportTurn(agentId, { id: 't4', text: 'ok' });
  expect(reply.whispers[0]).toMatchObject({ type: 'VERIFY' });
  expect(reply.whispers[0]!.text).toContain('test/add.test.js');
  await stack.warden.signal(agentId, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  expect((await finalStatus(stack.warden.handle(agentId))).state).toBe('done');
}, 300_000);

/** A git repository with an npm test script, a bug in sum.js, and the test that finds it. */
function npmRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-verify-npm-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'test'));
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'sum', version: '1.0.0', type: 'module', scripts: { test: 'node test/sum.test.js' } })}\n`,
  );
  writeFileSync(join(dir, 'sum.js'), 'export const sum = (a, b) => a + b + 1;\n');
  writeFileSync(join(dir, 'test', 'sum.test.js'), "import assert from 'node:assert';\nimport { sum } from '../sum.js';\nassert.strictEqual(sum(1, 2), 3);\n");
  const git = (...args: string[]) =>
    execaSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd: dir });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'start');
  return dir;
}

/** Claim done and wait for the check's result (the `n`th verification: its `at` changes). */
async function claimAndWait(agentId: string, id: string, previousAt: string | null) {
  await stack.warden.reportTurn(agentId, { id, text: 'npm test passes. The task is complete.', done: true });
  return waitForStatus(
    stack.warden,
    agentId,
    (x) => x.state === 'done' || (x.lastVerification !== null && x.lastVerification.at !== previousAt && !x.verifying),
    `the verification of ${id}`,
    120_000,
  );
}

test('verify `npm test` with test/** protected: an expected value rewritten is not done; fixed code and a new test file are', async () => {
  worker ??= stack.spawnWorker();
  const dir = npmRepo();
  const agentId = 'verify-rewritten';
  await stack.warden.start({ agentId, task: 'Fix sum.', verify: { command: 'npm test', cwd: dir }, protect: ['test/**'] });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Reading sum.js.' });
  // The expected value made to match the bug: as many assertions as before, and `npm test` passes.
  writeFileSync(join(dir, 'test', 'sum.test.js'), "import assert from 'node:assert';\nimport { sum } from '../sum.js';\nassert.strictEqual(sum(1, 2), 4);\n");
  const s = await claimAndWait(agentId, 't2', null);
  expect(s.state).toBe('running');
  expect(s.lastVerification).toMatchObject({
    command: 'npm test',
    passed: false,
    exitCode: 0,
    protectedChanges: ['M test/sum.test.js +1/-1, assertions -1/+1'],
  });
  expect(s.lastVerification!.rewardHacking).toContain('test/sum.test.js (modified)');
  expect(s.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'REWARD_HACKING' });
  const reply = await stack.warden.reportTurn(agentId, { id: 't3', text: 'ok' });
  expect(reply.whispers.map((w) => w.type)).toEqual(['VERIFY']);
  expect(reply.whispers[0]!.text).toContain('test/sum.test.js (modified)');

  // Honest work: the test restored, the code fixed, and a new test file beside it.
  execaSync('git', ['checkout', '--', 'test/sum.test.js'], { cwd: dir });
  writeFileSync(join(dir, 'sum.js'), 'export const sum = (a, b) => a + b;\n');
  writeFileSync(join(dir, 'test', 'zero.test.js'), "import assert from 'node:assert';\nimport { sum } from '../sum.js';\nassert.strictEqual(sum(0, 0), 0);\n");
  const done = await claimAndWait(agentId, 't4', s.lastVerification!.at);
  expect(done.state).toBe('done');
  expect(done.lastVerification).toMatchObject({ passed: true, exitCode: 0, protectedChanges: [expect.stringMatching(/^A test\/zero\.test\.js \+3\/-0/)] });
  // The history of a done-claim refused under the any-change rule (its patch marker in it).
  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'verify-protect-any-change');
}, 300_000);

test('a protected package.json whose test script became `exit 0` is not verified done', async () => {
  worker ??= stack.spawnWorker();
  const dir = npmRepo();
  const agentId = 'verify-exit0';
  await stack.warden.start({ agentId, task: 'Fix sum.', verify: { command: 'npm test', cwd: dir }, protect: ['test/**', 'package.json'] });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Reading sum.js.' });
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  pkg.scripts.test = 'exit 0';
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg)}\n`);
  const s = await claimAndWait(agentId, 't2', null);
  expect(s.state).toBe('running');
  expect(s.lastVerification).toMatchObject({ passed: false, exitCode: 0, protectedChanges: ['M package.json +1/-1'] });
  expect(s.lastVerification!.rewardHacking).toContain('package.json (modified)');
  expect(s.lastVerdict).toMatchObject({ pattern: 'REWARD_HACKING' });
  await stack.warden.signal(agentId, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  expect((await finalStatus(stack.warden.handle(agentId))).state).toBe('done');
}, 300_000);

test('a worker SIGKILLed while the verify command runs: the check runs again, never a pass', async () => {
  worker ??= stack.spawnWorker();
  const dir = repo();
  const agentId = 'verify-crash';
  // Each run leaves a line, sleeps, and fails: a pass could only come from warden itself.
  const command = 'echo run >> runs.log; sleep 5; echo still failing; exit 3';
  await stack.warden.start({ agentId, task: 'Fix the build.', verify: { command, cwd: dir, timeoutMs: 60_000 } });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Done, the build passes.', done: true });
  await eventually(async () => existsSync(join(dir, 'runs.log')), { timeoutMs: 120_000, what: 'the verify command to start' });
  expect(processesWithEnv(`WARDEN_VERIFY_AGENT=${agentId}`).length).toBeGreaterThan(0);
  await stack.kill(worker);
  worker = undefined;

  worker = stack.spawnWorker();
  const s = await waitForStatus(stack.warden, agentId, (x) => x.lastVerification !== null, 'the verification after the crash', 180_000);
  expect(s.state).toBe('running');
  expect(s.lastVerification!.passed).toBe(false);
  // The heartbeat timeout noticed the dead worker; the retry ran the command again, to its end.
  expect(s.lastVerification!.skipped).toBeUndefined();
  expect(readFileSync(join(dir, 'runs.log'), 'utf8').trim().split('\n')).toEqual(['run', 'run']);
  expect(s.lastVerification).toMatchObject({ exitCode: 3 });
  expect(s.lastVerification!.outputTail).toContain('still failing');
  const reply = await stack.warden.reportTurn(agentId, { id: 't2', text: 'ok' });
  expect(reply.whispers.map((w) => w.type)).toEqual(['VERIFY']);
  expect(processesWithEnv(`WARDEN_VERIFY_AGENT=${agentId}`)).toEqual([]);
  await stack.warden.signal(agentId, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  expect((await finalStatus(stack.warden.handle(agentId))).state).toBe('done');
}, 300_000);

test("a driven agent's false claims climb the ladder to ESCALATION; once true, the claim ends it done", async () => {
  worker ??= stack.spawnWorker();
  const dir = repo();
  const agentId = 'verify-driven';
  // Every turn of this script says it is done; the check runs in the driven agent's work dir.
  await stack.warden.start({
    agentId,
    task: 'Create ok.txt.',
    driver: { kind: 'scripted', turns: [{ text: 'Created ok.txt. TASK COMPLETE' }] },
    driven: { workDir: dir },
    verify: { command: 'test -f ok.txt' },
  });
  const escalated = await waitForStatus(stack.warden, agentId, (s) => s.state === 'awaiting-input', 'escalation after three false claims', 180_000);
  expect(escalated).toMatchObject({ escalationStep: 3, escalations: 1, turns: 3, lastVerdict: { kind: 'CORRECTION', pattern: null } });
  expect(escalated.lastVerification).toMatchObject({ command: 'test -f ok.txt', passed: false, exitCode: 1 });
  // Two VERIFY whispers reached turns 2 and 3; the ESCALATION waits for a human.
  expect(escalated.whispersDelivered).toBe(2);
  expect((await stack.warden.pendingWhispers(agentId)).map((w) => w.type)).toEqual(['ESCALATION']);

  writeFileSync(join(dir, 'ok.txt'), 'ok\n');
  await stack.warden.signal(agentId, 'resume', { note: 'ok.txt is there now' });
  const final = await finalStatus(stack.warden.handle(agentId));
  expect(final).toMatchObject({ state: 'done', turns: 4, lastVerification: { passed: true, exitCode: 0 } });
}, 300_000);

test('a stop during the check cancels it: its process group is killed and the agent ends', async () => {
  worker ??= stack.spawnWorker();
  const dir = repo();
  const agentId = 'verify-stop';
  await stack.warden.start({ agentId, task: 'Fix the build.', verify: { command: 'echo started > started.txt; sleep 300', cwd: dir } });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Done.', done: true });
  await eventually(async () => existsSync(join(dir, 'started.txt')) && processesWithEnv(`WARDEN_VERIFY_AGENT=${agentId}`).length > 0, {
    timeoutMs: 120_000,
    what: 'the verify command to start',
  });
  await stack.warden.signal(agentId, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  const final = await finalStatus(stack.warden.handle(agentId));
  expect(final.state).toBe('done');
  expect(final.lastVerification).toMatchObject({ passed: false, skipped: 'cancelled: the agent became cancelling' });
  await eventually(async () => processesWithEnv(`WARDEN_VERIFY_AGENT=${agentId}`).length === 0, { timeoutMs: 60_000, what: 'the verify command to be killed' });
}, 300_000);

test('a verify command that leaves a daemon in a session of its own (setsid, env -i): nothing is left after the check', async () => {
  worker ??= stack.spawnWorker();
  const dir = repo();
  const agentId = 'verify-daemon';
  const tag = `warden-verify-daemon-${process.pid}-${Date.now()}`;
  const command = `setsid env -i sh -c 'while sleep 1; do :; done # ${tag}' >/dev/null 2>&1 & echo checked`;
  await stack.warden.start({ agentId, task: 'Fix the build.', verify: { command, cwd: dir } });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Done.', done: true });
  const final = await finalStatus(stack.warden.handle(agentId));
  const left = processesWithArg(tag);
  for (const p of left) process.kill(p, 'SIGKILL'); // never leave it to the next test
  expect(final).toMatchObject({ state: 'done', lastVerification: { command, passed: true, exitCode: 0 } });
  expect(left).toEqual([]);
}, 300_000);
