/** Definition of done, verified by warden: the pure rules (src/domain/agent/verification.ts, heuristic/protected.ts). */
import { describe, expect, it } from 'vitest';
import type { VerifyOutput } from '../../src/domain/contract/activity-types.js';
import { nextStep } from '../../src/domain/agent/next-step.js';
import { signal } from '../helpers/signal.js';
import { validateReport } from '../../src/domain/agent/reporting.js';
import { reportTurn } from '../helpers/report.js';
import { claimWithResult, turnFinished, verificationFinished, verificationSkipped } from '../helpers/driven.js';
import { protectedEvidenceInput, startVerification, verificationCancelled } from '../../src/domain/agent/verification.js';
import { heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { assertionCounts, matchesProtect, protectedChanges, protectedTampering, withUntracked } from '../../src/domain/judgement/heuristic/protected.js';
import { AgentSpecSchema } from '../../src/domain/contract/schemas.js';
import { renderWhispers } from '../../src/domain/agent/turn-input.js';
import { testAgent, turn, type TestAgent } from '../helpers/core.js';
import { resolve } from 'node:path';
import { buildSpec } from '../../src/cli/commands/start.js';
import { formatStatus } from '../../src/cli/commands/status.js';
import { parseConfig, specFromConfig } from '../../src/config/file.js';
import { status } from '../../src/domain/agent/visibility.js';

const H = { historyLength: 10, continueAsNewSuggested: false };
const VERIFY = { command: "sh -c 'test -f ok.txt'" };
const out = (o: Partial<VerifyOutput> = {}): VerifyOutput => ({
  exitCode: 1,
  passed: false,
  timedOut: false,
  outputTail: 'ok.txt: missing\n',
  durationMs: 5,
  cwd: '/repo',
  protectedChanges: [],
  ...o,
});

function running(spec: Record<string, unknown> = { verify: VERIFY }): TestAgent {
  const a = testAgent(spec);
  reportTurn(a, turn('t0'));
  a.core.s.evalQueue = [];
  return a;
}

/** Claim done and run the check with `result`, as the shell would. */
function claimAndCheck(a: TestAgent, id: string, result: VerifyOutput, extra: Record<string, unknown> = {}) {
  const reply = reportTurn(a, turn(id, 'All done, tests pass.', { done: true, ...extra }));
  expect(nextStep(a, H).kind).toBe('verify');
  const started = startVerification(a);
  verificationFinished(a, result);
  return { reply, started };
}

describe('a done-claim', () => {
  it('with verify configured is a job for the verify activity, not the end', () => {
    const a = running();
    const reply = reportTurn(a, turn('t1', 'Done.', { done: true }));
    expect(reply.state).toBe('running');
    expect(reply.verifying).toBe(true);
    expect(a.core.s.doneClaim).toEqual({ turn: 2, at: a.clock.now });
    expect(nextStep(a, H)).toEqual({ kind: 'verify' });
    const v = startVerification(a);
    expect(v.input).toMatchObject({ agentId: 'a1', command: VERIFY.command, timeoutMs: 600_000, driven: false, protect: [], baseCommit: null });
    expect(v.startToCloseTimeoutMs).toBeGreaterThan(600_000);
    // While it runs, no second check starts.
    expect(nextStep(a, H).kind).not.toBe('verify');
  });

  it('passes: the agent ends done, the result in lastVerification', () => {
    const a = running();
    claimAndCheck(a, 't1', out({ exitCode: 0, passed: true, outputTail: 'ok\n' }));
    expect(a.core.s.state).toBe('done');
    expect(a.core.s.lastVerification).toMatchObject({ command: VERIFY.command, passed: true, exitCode: 0, outputTail: 'ok\n' });
    expect(a.core.s.pendingWhispers).toEqual([]);
  });

  it('fails: not done; a VERIFY whisper quotes the command and the output tail; the ladder takes a step', () => {
    const a = running();
    claimAndCheck(a, 't1', out());
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.doneClaim).toBeNull();
    expect(a.core.s.ladder.step).toBe(1);
    const [w] = a.core.s.pendingWhispers;
    expect(w!.type).toBe('VERIFY');
    expect(w!.text.startsWith('[VERIFY] ')).toBe(true);
    expect(w!.text).toContain(VERIFY.command);
    expect(w!.text).toContain('exit 1');
    expect(w!.text).toContain('ok.txt: missing');
    expect(a.core.s.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: null, evidence: [2] });
    expect(a.core.s.lastVerification).toMatchObject({ passed: false, exitCode: 1 });
    // The next reply delivers it; rendered once with its label.
    const reply = reportTurn(a, turn('t2', 'looking'));
    expect(reply.whispers.map((x) => x.type)).toEqual(['VERIFY']);
    expect(renderWhispers(reply.whispers).startsWith('[VERIFY] You said')).toBe(true);
  });

  it('repeated false claims climb the ladder: step 3 is ESCALATION and a pause', () => {
    const a = running();
    claimAndCheck(a, 't1', out());
    reportTurn(a, turn('t2', 'fixing'));
    claimAndCheck(a, 't3', out());
    expect(a.core.s.ladder.step).toBe(2);
    expect(a.core.s.pendingWhispers.at(-1)!.text).toContain('Warning 2 of 2');
    reportTurn(a, turn('t4', 'fixing'));
    claimAndCheck(a, 't5', out());
    expect(a.core.s.ladder.step).toBe(3);
    expect(a.core.s.state).toBe('awaiting-input');
    expect(a.core.s.pendingWhispers.at(-1)!.type).toBe('ESCALATION');
    expect(a.core.s.pauseReason).toContain('escalated: CORRECTION');
    expect(a.rec.logs.some((l) => l.message === 'agent escalated to humans')).toBe(true);
  });

  it('a failed check after tests were weakened in the window is REWARD_HACKING', () => {
    const a = running();
    reportTurn(
      a,
      turn('t1', 'the test is flaky, skipping it', {
        toolCalls: [
          { name: 'edit', args: JSON.stringify({ file: 'test/app.test.js', new: "it.skip('adds', () => { expect(add(1, 2)).toBe(3); });" }), ok: true },
        ],
      }),
    );
    claimAndCheck(a, 't2', out());
    expect(a.core.s.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'REWARD_HACKING' });
    expect(a.core.s.pendingWhispers[0]!.text).toContain('skipped');
  });

  it('a protected test deleted in the working tree is REWARD_HACKING even when the check passes and the transcript never shows it', () => {
    const a = running({ protect: ['test/**'] });
    a.core.s.baseline = { commit: 'a'.repeat(40) };
    claimAndCheck(
      a,
      't1',
      out({
        exitCode: null,
        passed: true,
        outputTail: '',
        protectedChanges: [{ path: 'test/app.test.js', status: 'D', added: 0, deleted: 12, assertionsRemoved: 3, assertionsAdded: 0 }],
      }),
    );
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.lastVerdict).toMatchObject({ pattern: 'REWARD_HACKING' });
    expect(a.core.s.lastVerification).toMatchObject({ passed: false, protectedChanges: ['D test/app.test.js +0/-12, assertions -3/+0'] });
    expect(a.core.s.lastVerification!.rewardHacking).toContain('test/app.test.js');
    expect(a.core.s.pendingWhispers[0]!.type).toBe('VERIFY');
  });

  describe('any change to a protected file fails the claim, though the command passes', () => {
    const passing = (changes: VerifyOutput['protectedChanges']) => out({ exitCode: 0, passed: true, outputTail: '1 passed\n', protectedChanges: changes });
    const claim = (changes: VerifyOutput['protectedChanges']) => {
      const a = testAgent({ verify: VERIFY, protect: ['test/**', 'package.json'] });
      reportTurn(a, turn('t0'));
      a.core.s.evalQueue = [];
      a.core.s.baseline = { commit: 'a'.repeat(40) };
      claimAndCheck(a, 't1', passing(changes));
      return a;
    };
    const rewritten = { path: 'test/sum.test.js', status: 'M', added: 1, deleted: 1, assertionsRemoved: 1, assertionsAdded: 1 };
    it.each([
      ['an expected value rewritten (as many assertions as before)', rewritten, 'test/sum.test.js (modified)'],
      [
        'package.json whose test script became `exit 0`',
        { path: 'package.json', status: 'M', added: 1, deleted: 1, assertionsRemoved: 0, assertionsAdded: 0 },
        'package.json (modified)',
      ],
      ['a mode change', { path: 'test/run.sh', status: 'M', added: 0, deleted: 0, assertionsRemoved: 0, assertionsAdded: 0 }, 'test/run.sh (modified)'],
      ['a test swapped for a symlink', { path: 'test/sum.test.js', status: 'T', assertionsRemoved: 0, assertionsAdded: 0 }, 'test/sum.test.js (type changed)'],
      [
        'a test renamed away',
        { path: 'test/sum.test.js -> old/sum.js', status: 'R', added: 0, deleted: 0, assertionsRemoved: 0, assertionsAdded: 0 },
        'test/sum.test.js -> old/sum.js (renamed)',
      ],
    ] as const)('%s', (_what, change, named) => {
      const a = claim([change]);
      expect(a.core.s.state).toBe('running');
      expect(a.core.s.lastVerification).toMatchObject({ passed: false });
      expect(a.core.s.lastVerification!.rewardHacking).toContain(named);
      expect(a.core.s.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'REWARD_HACKING' });
      expect(a.core.s.lastVerdict!.message).toContain(named);
      expect(a.core.s.pendingWhispers[0]!.type).toBe('VERIFY');
    });

    it('a new file under a protected glob is allowed (shown as evidence): the claim passes', () => {
      const a = claim([{ path: 'test/more.test.js', status: 'A', added: 5, deleted: 0, assertionsRemoved: 0, assertionsAdded: 2 }]);
      expect(a.core.s.state).toBe('done');
      expect(a.core.s.lastVerification).toMatchObject({ passed: true, protectedChanges: ['A test/more.test.js +5/-0, assertions -0/+2'] });
    });

    it('a deletion fails it too', () => {
      const a = claim([{ path: 'test/sum.test.js', status: 'D', added: 0, deleted: 3, assertionsRemoved: 1, assertionsAdded: 0 }]);
      expect(a.core.s.lastVerdict).toMatchObject({ pattern: 'REWARD_HACKING' });
    });
  });

  it('a check that could not run is skipped: not done, no ladder step, the agent is told to claim again', () => {
    const a = running();
    reportTurn(a, turn('t1', 'done', { done: true }));
    startVerification(a);
    verificationSkipped(a, 'the verification activity failed: heartbeat timeout');
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.ladder.step).toBe(0);
    expect(a.core.s.lastVerification).toMatchObject({ passed: false, skipped: 'the verification activity failed: heartbeat timeout' });
    expect(a.core.s.pendingWhispers[0]!.text).toContain('could not check');
  });

  it('without verify or protect, a done turn ends the agent at once; a turn without done changes nothing', () => {
    const a = running({});
    reportTurn(a, turn('t1', 'still working'));
    expect(a.core.s.state).toBe('running');
    const reply = reportTurn(a, turn('t2', 'finished', { done: true }));
    expect(reply.state).toBe('done');
    expect(a.core.s.lastVerification).toBeNull();
  });

  it('the validator accepts done and names a bad one', () => {
    const a = running();
    expect(() => validateReport(a, { text: 'x', done: true })).not.toThrow();
    expect(() => validateReport(a, { text: 'x', done: 'yes' })).toThrow(/done/);
  });

  it("a driven agent's done is the claim", () => {
    const a = testAgent({ verify: VERIFY, driver: { kind: 'scripted', turns: [{ text: 'done' }] } });
    a.core.s.state = 'running';
    expect(turnFinished(a, { turn: { text: 'TASK COMPLETE' }, session: null, done: true }, 1)).toEqual({ kind: 'none' });
    expect(nextStep(a, H)).toEqual({ kind: 'verify' });
    expect(startVerification(a).input).toMatchObject({ driven: true });
  });

  it("a child's result that kept its contract is held while its claim is checked; a failed check drops it", () => {
    const contract = { resultSchema: { type: 'object' }, toolAllowlist: [], definitionOfDone: 'x' };
    const a = testAgent({ verify: VERIFY, contract, driver: { kind: 'scripted', turns: [{ text: 'done' }] } });
    a.core.s.state = 'running';
    expect(turnFinished(a, { turn: { text: 'TASK COMPLETE' }, session: null, done: true, result: { n: 1 } }, 1).kind).toBe('check-result');
    expect(claimWithResult(a, { ok: true, inline: { n: 1 } })).toBe(true);
    expect(a.core.s).toMatchObject({ state: 'running', result: { inline: { n: 1 } }, doneClaim: { turn: 1 } });
    expect(nextStep(a, H)).toEqual({ kind: 'verify' });
    startVerification(a);
    verificationFinished(a, out());
    expect(a.core.s).toMatchObject({ state: 'running', result: null, doneClaim: null });
    expect(a.core.s.pendingWhispers.at(-1)!.type).toBe('VERIFY');
    // A result that breaks its contract, or an agent without verify/protect: not a claim (resultChecked decides).
    expect(claimWithResult(a, { ok: false, errors: 'bad' })).toBe(false);
    const plain = testAgent({ contract, driver: { kind: 'scripted', turns: [{ text: 'done' }] } });
    plain.core.s.state = 'running';
    expect(claimWithResult(plain, { ok: true, inline: {} })).toBe(false);
    // Then a claim that passes ends it done with the result.
    claimWithResult(a, { ok: true, inline: { n: 2 } });
    startVerification(a);
    verificationFinished(a, out({ exitCode: 0, passed: true }));
    expect(a.core.s).toMatchObject({ state: 'done', result: { inline: { n: 2 } } });
  });

  it('with protect, the start commit is read first', () => {
    const a = testAgent({ protect: ['test/**'] });
    expect(nextStep(a, H)).toEqual({ kind: 'baseline' });
  });
});

describe('the spec', () => {
  it('takes verify with a default timeout and names bad fields', () => {
    const spec = AgentSpecSchema.parse({ agentId: 'a', task: 't', verify: { command: 'npm test', timeoutMs: '5m' }, protect: ['test/**'] });
    expect(spec.verify).toEqual({ command: 'npm test', timeoutMs: 300_000 });
    expect(AgentSpecSchema.parse({ agentId: 'a', task: 't', verify: { command: 'x' } }).verify!.timeoutMs).toBe(600_000);
    expect(AgentSpecSchema.safeParse({ agentId: 'a', task: 't', verify: { command: '' } }).error!.issues[0]!.path).toEqual(['verify', 'command']);
    expect(AgentSpecSchema.safeParse({ agentId: 'a', task: 't', verify: { command: 'x', timeoutMs: '2h' } }).error!.issues[0]!.message).toContain('at most 1h');
  });
});

describe('protected paths', () => {
  it('globs: ** across directories, a bare name anywhere, a directory prefix', () => {
    expect(matchesProtect('test/unit/a.test.ts', ['test/**'])).toBe(true);
    expect(matchesProtect('src/test/a.ts', ['test/**'])).toBe(false);
    expect(matchesProtect('src/__snapshots__/x.snap', ['*.snap'])).toBe(true);
    expect(matchesProtect('src/x.snapshot', ['*.snap'])).toBe(false);
    expect(matchesProtect('test/a.py', ['test'])).toBe(true);
    expect(matchesProtect('pkg/tests/a_test.go', ['**/tests/*_test.go'])).toBe(true);
  });

  it('evidence from git: statuses, line counts and assertions removed', () => {
    // As `git diff --name-status -z` and `--numstat -z` print them.
    const names = 'D\0test/a.test.js\0M\0test/b.test.js\0M\0src/app.js\0R100\0test/c.test.js\0lib/c.js\0';
    const nums = '0\t5\ttest/a.test.js\x001\t2\ttest/b.test.js\x003\t3\tsrc/app.js\x000\t0\t\0test/c.test.js\0lib/c.js\0';
    const diff = [
      'diff --git a/test/b.test.js b/test/b.test.js',
      '--- a/test/b.test.js',
      '+++ b/test/b.test.js',
      '-  expect(add(1, 2)).toBe(3);',
      '-  assert.equal(x, 1);',
      '+  // fine',
    ].join('\n');
    expect(assertionCounts(diff).get('test/b.test.js')).toEqual({ removed: 2, added: 0 });
    const changes = protectedChanges(names, nums, diff, ['test/**']);
    expect(changes.map((c) => [c.path, c.status])).toEqual([
      ['test/a.test.js', 'D'],
      ['test/b.test.js', 'M'],
      ['test/c.test.js -> lib/c.js', 'R'],
    ]);
    expect(changes[1]).toMatchObject({ added: 1, deleted: 2, assertionsRemoved: 2, assertionsAdded: 0 });
    expect(protectedTampering(changes)).toContain('test/a.test.js (deleted)');
    expect(protectedTampering([changes[1]!])).toContain('test/b.test.js (modified, 2 assertion(s) fewer)');
    // A rename into a protected path from outside it is a new file there; one out of it is tampering.
    expect(protectedChanges('R100\0src/x.test.js\0test/x.test.js\0', '0\t0\t\0src/x.test.js\0test/x.test.js\0', '', ['test/**'])).toEqual([
      { path: 'test/x.test.js', status: 'A', added: 0, deleted: 0, assertionsRemoved: 0, assertionsAdded: 0 },
    ]);
    // Names git would quote without -z (non-ASCII, a tab) still match their globs.
    expect(protectedChanges('D\0test/ünï\tcode.test.js\0', '-\t-\ttest/ünï\tcode.test.js\0', '', ['test/**'])).toEqual([
      { path: 'test/ünï\tcode.test.js', status: 'D', assertionsRemoved: 0, assertionsAdded: 0 },
    ]);
    // Any change to a protected file is tampering, even one that gained assertions; a new file is not.
    expect(protectedTampering([{ path: 'test/x.js', status: 'M', assertionsRemoved: 1, assertionsAdded: 2 }])).toContain('test/x.js (modified)');
    expect(protectedTampering([{ path: 'test/x.js', status: 'A', added: 3, assertionsRemoved: 0, assertionsAdded: 2 }])).toBeNull();
  });

  it('the heuristic flags REWARD_HACKING from protected-path evidence alone', () => {
    const turns = [{ text: 'Refactored the parser.' }, { text: 'All done.' }];
    expect(heuristicVerdict({ task: 'fix the parser', turns }).kind).toBe('OK');
    const v = heuristicVerdict({
      task: 'fix the parser',
      turns,
      firstTurnNumber: 7,
      protectedChanges: [{ path: 'test/parser.test.ts', status: 'D', assertionsRemoved: 4, assertionsAdded: 0 }],
    });
    expect(v).toMatchObject({ kind: 'CORRECTION', pattern: 'REWARD_HACKING', evidence: [8] });
  });
});

describe('flags, config file and status text', () => {
  it('warden start --verify/--verify-cwd/--verify-timeout/--protect build the spec; a stray --verify-cwd is refused', () => {
    const spec = buildSpec('a', { task: 't', verify: 'npm test', verifyCwd: 'repo', verifyTimeout: 120_000, protect: ['test/**', '*.snap'] });
    expect(spec.verify).toEqual({ command: 'npm test', cwd: resolve('repo'), timeoutMs: 120_000 });
    expect(spec.protect).toEqual(['test/**', '*.snap']);
    expect(AgentSpecSchema.parse(spec).verify!.cwd).toBe(resolve('repo'));
    expect(() => buildSpec('a', { task: 't', verifyCwd: 'repo' })).toThrow(/--verify-cwd and --verify-timeout go with --verify/);
    expect(buildSpec('a', { task: 't' })).not.toHaveProperty('verify');
  });

  it('the config file takes verify (object or string) and protect; an unknown key is named', () => {
    expect(specFromConfig(parseConfig("verify:\n  command: pytest -q\n  timeout: 5m\nprotect: ['tests/**']\n"))).toMatchObject({
      verify: { command: 'pytest -q', timeoutMs: 300_000 },
      protect: ['tests/**'],
    });
    expect(specFromConfig(parseConfig('verify: npm test\n')).verify).toEqual({ command: 'npm test' });
    expect(() => parseConfig('verify:\n  command: x\n  cmd: y\n')).toThrow(/verify/);
  });

  it('warden status shows the last verification', () => {
    const a = running();
    claimAndCheck(a, 't1', out({ outputTail: 'line 1\nFAIL add.test.js\n' }));
    const text = formatStatus(status(a)).join('\n');
    expect(text).toContain(`last verification: FAILED (exit 1) at`);
    expect(text).toContain(VERIFY.command);
    expect(text).toContain('| FAIL add.test.js');
  });
});

describe('a claim while the agent does not run', () => {
  it('paused during the check: the result is recorded, the claim is checked again after resume', () => {
    const a = running();
    reportTurn(a, turn('t1', 'done', { done: true }));
    startVerification(a);
    signal(a, 'pause', { reason: 'lunch' });
    verificationFinished(a, out({ exitCode: 0, passed: true }));
    expect(a.core.s.state).toBe('paused-by-user');
    expect(a.core.s.lastVerification).toMatchObject({ passed: true });
    expect(nextStep(a, H).kind).not.toBe('verify');
    signal(a, 'resume', {});
    expect(nextStep(a, H)).toEqual({ kind: 'verify' });
  });

  it('stopped during the check: the check is cancelled and decides nothing', () => {
    const a = running();
    reportTurn(a, turn('t1', 'done', { done: true }));
    startVerification(a);
    expect(verificationCancelled(a.core)).toBe(false);
    signal(a, 'stop', { reason: 'enough', drainTimeoutMs: 0 });
    expect(verificationCancelled(a.core)).toBe(true);
    verificationSkipped(a, 'cancelled: the agent became cancelling');
    expect(a.core.s.doneClaim).toBeNull();
    expect(a.core.s.pendingWhispers).toEqual([]);
    expect(a.core.s.lastVerification).toMatchObject({ passed: false, skipped: 'cancelled: the agent became cancelling' });
  });
});

describe('protected paths at every evaluation', () => {
  it('are read only for an agent with protect and a start commit (no cost otherwise)', () => {
    expect(protectedEvidenceInput(testAgent().core)).toBeNull();
    const a = testAgent({ protect: ['test/**'], driven: { workDir: '/repo' } });
    expect(protectedEvidenceInput(a.core)).toBeNull(); // the start commit is not read yet
    a.core.s.baseline = { commit: null, reason: 'not a git repository' };
    expect(protectedEvidenceInput(a.core)).toBeNull();
    a.core.s.baseline = { commit: 'a'.repeat(40) };
    expect(protectedEvidenceInput(a.core)).toEqual({ agentId: 'a1', driven: false, workDir: '/repo', protect: ['test/**'], baseCommit: 'a'.repeat(40) });
  });

  it('new untracked protected files count as added, with their assertion lines; unprotected ones and tracked duplicates are left out', () => {
    const tracked = [{ path: 'test/b.test.js', status: 'D', added: 0, deleted: 2, assertionsRemoved: 2, assertionsAdded: 0 }];
    const out = withUntracked(
      tracked,
      [
        { path: 'test/a.test.js', text: 'expect(1).toBe(1);\nconst x = 1;\n' },
        { path: 'src/x.js', text: 'x\n' },
        { path: 'test/link', text: null },
        { path: 'test/b.test.js', text: '' },
      ],
      ['test/**'],
    );
    expect(out).toEqual([
      { path: 'test/a.test.js', status: 'A', added: 2, deleted: 0, assertionsRemoved: 0, assertionsAdded: 1 },
      tracked[0],
      { path: 'test/link', status: 'A', assertionsRemoved: 0, assertionsAdded: 0 },
    ]);
    expect(protectedTampering(out)).toContain('test/b.test.js');
  });
});

describe('false done-claims and lastResort compact', () => {
  it('two [VERIFY] whispers, then the third false claim compacts the agent (the failing check in the handoff); a fourth escalates', () => {
    const a = running({ verify: VERIFY, supervisor: { lastResort: 'compact', idleAfterMs: 0 } });
    claimAndCheck(a, 'c1', out());
    reportTurn(a, turn('w1')); // takes the first VERIFY whisper
    claimAndCheck(a, 'c2', out());
    reportTurn(a, turn('w2'));
    claimAndCheck(a, 'c3', out());
    expect(a.core.s.state).toBe('compacting');
    expect(a.core.s.compaction!.handoff).toMatch(
      /What you must do next:\nYou said the task is done, but warden's check disagrees: `sh -c 'test -f ok.txt'` failed \(exit 1\)[\s\S]*Output \(tail\):\nok\.txt: missing/,
    );
    expect(a.core.s.compaction!.handoff).toContain('[VERIFY]');
    reportTurn(a, turn('r1')); // carries the handoff
    reportTurn(a, turn('r2')); // the fresh context's first turn
    expect(a.core.s.state).toBe('running');
    claimAndCheck(a, 'c4', out());
    expect(a.core.s.state).toBe('awaiting-input');
    expect(a.core.s.ladder).toMatchObject({ escalations: 1, compactions: 1 });
  });
});
