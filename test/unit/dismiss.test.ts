/**
 * Humans teach the supervisor (src/domain/agent/dismissal.ts, src/domain/judgement/cases.ts): `dismiss`
 * resets the ladder and keeps the same finding from advancing it again, a different finding still
 * does; flagged windows are remembered (bounded) with the human's decision as their label, and all
 * of it crosses continue-as-new. The real heuristic judges the windows, as the activity would.
 */
import { describe, expect, it } from 'vitest';
import { carriedForContinueAsNew } from '../../src/domain/agent/bytes.js';
import { signal } from '../helpers/signal.js';
import { queueWhisper } from '../../src/domain/agent/effects.js';
import { reportTurn } from '../helpers/report.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from '../helpers/evaluation.js';
import { commit, status } from '../../src/domain/agent/visibility.js';
import { capCase, labelOf, rememberCase, type CaseRecord } from '../../src/domain/judgement/cases.js';
import { exportCases, toJsonl } from '../../src/domain/judgement/case-export.js';
import { dismissOutcome } from '../../src/domain/contract/control.js';
import { evidenceHash, findingSignature, legacySignature, normaliseMessage } from '../../src/domain/judgement/finding.js';
import { heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { CARRIED_STATE_MAX_BYTES, CASE_WINDOW_MAX_BYTES, MAX_CASES, MAX_DISMISSED, jsonBytes } from '../../src/domain/contract/limits.js';
import { isDismissed, rememberSignature } from '../../src/domain/agent/dismissal.js';
import { parseCases } from '../../src/domain/judgement/scoring.js';
import type { Turn, Verdict } from '../../src/domain/contract/schemas.js';
import { failingTurn, testAgent, type TestAgent } from '../helpers/core.js';

/** A different problem: another command failing the same way again and again. */
const otherFailure = (id: string) => ({
  id,
  text: 'Running the tests again',
  toolCalls: [{ name: 'shell', args: 'npm test -- auth', result: 'AssertionError: expected 401 to equal 200', ok: false }],
});

function agent(spec = {}, opts = {}): TestAgent {
  return testAgent({ supervisor: { evalInterval: 5 }, ...spec }, opts);
}

/** Run every queued evaluation with the real heuristic, as the local activity would. */
function evaluateQueued(a: TestAgent): Verdict[] {
  const out: Verdict[] = [];
  while (a.core.s.evalQueue.length > 0) {
    const started = startEvaluation(a);
    const i = started.input;
    const verdict = heuristicVerdict({ task: i.task, turns: i.turns, reason: i.reason, evidenceFrom: i.evidenceFrom, firstTurnNumber: i.firstTurnNumber });
    applyEvaluation(a, { kind: 'verdict', verdict, evaluator: 'heuristic', durationMs: 1 }, started);
    out.push(verdict);
  }
  return out;
}

let n = 0;
/** Report `k` turns made by `make`, then evaluate; returns the whispers the turns received. */
function turns(a: TestAgent, k: number, make: (id: string) => object): string[] {
  const got: string[] = [];
  for (let i = 0; i < k; i++) got.push(...reportTurn(a, make(`t${++n}`)).whispers.map((w) => w.type));
  evaluateQueued(a);
  return got;
}

describe('the finding signature', () => {
  it('is the same for one spiral at 3 and at 7 repetitions, and differs for another command or another detector', () => {
    const spiral = (k: number, make: (id: string) => Turn) => heuristicVerdict({ task: 't', turns: Array.from({ length: k }, (_, i) => make(`x${i}`)) });
    const three = spiral(3, failingTurn as (id: string) => Turn);
    const seven = spiral(7, failingTurn as (id: string) => Turn);
    expect(three.pattern).toBe('SPIRALING');
    expect(three.message).not.toBe(seven.message); // the count is in the message …
    expect(findingSignature(three)).toBe(findingSignature(seven)); // … but not in the signature
    const other = spiral(4, otherFailure as (id: string) => Turn);
    expect(other.pattern).toBe('SPIRALING');
    expect(findingSignature(other)).not.toBe(findingSignature(three));
    const said = spiral(3, (id) => ({ id, text: 'I will look into the failing build now.' }));
    expect(said.pattern).toBe('SPIRALING');
    expect(findingSignature(said)).not.toBe(findingSignature(three));
  });

  /** Two commands that share their first 120 characters and differ after. */
  const PREFIX = `cd /srv/app && npm ci --no-audit --prefer-offline && npm run lint -- --max-warnings 0 && npm run build && npm run typecheck`;
  const longFailure = (tail: string) => (id: string) => ({
    id,
    text: 'Shipping it',
    toolCalls: [{ name: 'shell', args: `${PREFIX} && ${tail}`, result: 'error: failed to push some refs', ok: false }],
  });
  const deleting = (path: string) => (id: string) => ({ id, text: 'Cleaning up', toolCalls: [{ name: 'shell', args: `rm ${path}`, ok: true }] });
  const judge = (k: number, make: (id: string) => object) => heuristicVerdict({ task: 't', turns: Array.from({ length: k }, (_, i) => make(`y${i}`) as Turn) });

  it('tells apart two long failing commands that share their first 120 characters', () => {
    expect(PREFIX.length).toBeGreaterThan(120); // past what the message quotes
    const test = judge(3, longFailure('npm test'));
    const push = judge(3, longFailure('git push --force origin main'));
    expect([test.pattern, push.pattern]).toEqual(['SPIRALING', 'SPIRALING']);
    expect(legacySignature(test)).toBe(legacySignature(push)); // the clipped messages read the same …
    expect(findingSignature(test)).not.toBe(findingSignature(push)); // … the finding keys do not
    expect(test.finding).toMatch(/^repeatedFailure#[0-9a-f]{16}$/);
  });

  it('tells apart the deletion of tests/test1.js from that of tests/test2.js', () => {
    const one = judge(1, deleting('tests/test1.js'));
    const two = judge(1, deleting('tests/test2.js'));
    expect([one.pattern, two.pattern]).toEqual(['REWARD_HACKING', 'REWARD_HACKING']);
    expect(legacySignature(one)).toBe(legacySignature(two)); // digits folded in the message
    expect(findingSignature(one)).not.toBe(findingSignature(two));
    expect(findingSignature(judge(1, deleting('tests/test1.js')))).toBe(findingSignature(one)); // and it is stable
  });

  it('keeps one key for a spiral as it grows: 3 and 7 repetitions of a long command, and the detector in it', () => {
    const three = judge(3, longFailure('npm test'));
    const seven = judge(7, longFailure('npm test'));
    expect(three.message).not.toBe(seven.message);
    expect(findingSignature(three)).toBe(findingSignature(seven));
    expect(findingSignature(judge(3, failingTurn))).toMatch(/^SPIRALING:repeatedFailure#/);
  });

  it('signs protected-path tampering on the sorted path list, not on the counts', () => {
    const change = (path: string, status: string, removed = 0) => ({ path, status, added: 1, deleted: 1, assertionsRemoved: removed, assertionsAdded: 0 });
    const sign = (changes: ReturnType<typeof change>[]) =>
      findingSignature(heuristicVerdict({ task: 't', turns: [{ text: 'working' }], protectedChanges: changes }));
    const a1 = sign([change('test/a1.js', 'M'), change('test/b.js', 'D')]);
    expect(a1).toMatch(/^REWARD_HACKING:protectedPaths#/);
    expect(sign([change('test/b.js', 'D', 4), change('test/a1.js', 'M', 2)])).toBe(a1);
    expect(sign([change('test/a2.js', 'M'), change('test/b.js', 'D')])).not.toBe(a1);
    // A new file beside them is not tampering, and not part of the key.
    expect(sign([change('test/a1.js', 'M'), change('test/b.js', 'D'), change('test/new.js', 'A')])).toBe(a1);
  });

  it("a model's verdict (no key) keeps the message-based signature; a dismissal recorded before keys still silences its finding", () => {
    const model: Verdict = { kind: 'CORRECTION', pattern: 'DRIFT', message: 'You are off task (3 turns).', evidence: [1] };
    expect(findingSignature(model)).toBe(legacySignature(model));
    const keyed = judge(3, failingTurn);
    const s = { dismissed: [legacySignature(keyed)] } as Parameters<typeof isDismissed>[0];
    expect(isDismissed(s, keyed)).toBe(true);
    expect(isDismissed({ dismissed: [findingSignature(keyed)] } as typeof s, judge(3, longFailure('npm test')))).toBe(false);
  });

  it('the evidence hash is stable, 16 hex digits, and differs on a one-character change', () => {
    expect(evidenceHash('npm test')).toBe(evidenceHash('npm test'));
    expect(evidenceHash('npm test')).toMatch(/^[0-9a-f]{16}$/);
    expect(evidenceHash('tests/test1.js')).not.toBe(evidenceHash('tests/test2.js'));
  });

  it('ignores case, quotes, whitespace, numbers and hashes; is bounded', () => {
    expect(normaliseMessage('Ran "make"  12 times in /tmp/x-4711, commit 3fa9c0de1')).toBe(normaliseMessage('ran make 3 times in /tmp/x-12, commit 77b0e1f42'));
    expect(findingSignature({ kind: 'CORRECTION', pattern: 'DRIFT', message: 'x'.repeat(5000) }).length).toBe(300);
  });
});

describe('dismiss', () => {
  it('silences the dismissed failing command only: another with the same first 120 characters still steps', () => {
    const prefix = 'cd /srv/app && npm ci --no-audit --prefer-offline && npm run lint -- --max-warnings 0 && npm run build && npm run typecheck';
    const failing = (cmd: string) => (id: string) => ({
      id,
      text: 'Shipping it',
      toolCalls: [{ name: 'shell', args: `${prefix} && ${cmd}`, result: 'error: failed', ok: false }],
    });
    const a = agent();
    turns(a, 5, failing('npm test'));
    expect(a.core.s.ladder.step).toBe(1);
    signal(a, 'dismiss', {});
    expect(turns(a, 5, failing('npm test'))).toEqual([]);
    expect(a.core.s.ladder.step).toBe(0);
    turns(a, 5, failing('git push --force origin main'));
    expect(a.core.s.ladder.step).toBe(1);
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual(['CORRECTION']);
  });

  it('resets the ladder, withdraws the undelivered ladder whisper, keeps steering, and is counted in status', () => {
    const a = agent();
    turns(a, 5, failingTurn);
    expect(a.core.s.ladder.step).toBe(1);
    expect(turns(a, 5, failingTurn)).toEqual(['CORRECTION']); // delivered at the first of these turns
    expect(a.core.s.ladder.step).toBe(2);
    signal(a, 'steer', { text: 'look at tsconfig paths' });
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual(['CORRECTION', 'STEERING']);
    signal(a, 'dismiss', { note: 'the build is expected to fail until the vendor fix lands' });
    expect(a.core.s.ladder).toEqual({ step: 0, escalations: 0 });
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual(['STEERING']);
    expect(a.core.s.state).toBe('running');
    const st = status(a);
    expect(st).toMatchObject({
      escalationStep: 0,
      dismissals: 1,
      suppressed: 0,
      lastDismissal: { note: 'the build is expected to fail until the vendor fix lands', pattern: 'SPIRALING' },
    });
    expect(st.cases).toEqual({ kept: 2, decided: 1 });
    commit(a); // the shell commits at the end of the handler
    expect(a.rec.upserts.at(-1)).toContainEqual(expect.objectContaining({ value: 0 })); // the step search attribute follows
  });

  it("keeps a failed check's [VERIFY] whisper: it reports a command's result, not a finding a human can call a false alarm", () => {
    const a = agent();
    turns(a, 5, failingTurn);
    turns(a, 5, failingTurn);
    queueWhisper(a, 'VERIFY', '[VERIFY] `npm test` failed (exit 1): 2 failing');
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual(['CORRECTION', 'VERIFY']);
    signal(a, 'dismiss', {});
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual(['VERIFY']);
  });

  it('the same finding no longer whispers or steps; a different finding still does', () => {
    const a = agent();
    turns(a, 5, failingTurn);
    turns(a, 5, failingTurn);
    signal(a, 'dismiss', {});
    const flaggedBefore = a.core.s.evaluations.flagged;
    // The same repetition goes on for 15 more turns: three evaluations, all suppressed.
    for (let i = 0; i < 3; i++) expect(turns(a, 5, failingTurn)).toEqual([]);
    expect(a.core.s.ladder.step).toBe(0);
    expect(a.core.s.pendingWhispers).toEqual([]);
    expect(a.core.s.suppressed).toBe(3);
    expect(a.core.s.evaluations.flagged).toBe(flaggedBefore);
    expect(a.core.s.lastSkipReason).toMatch(/^dismissed earlier by a human as a false alarm: CORRECTION SPIRALING/);
    // A different problem advances the ladder as before.
    expect(turns(a, 5, otherFailure)).toEqual([]);
    expect(a.core.s.ladder.step).toBe(1);
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual(['CORRECTION']);
    expect(a.core.s.pendingWhispers[0]!.text).toMatch(/npm test -- auth/);
  });

  it('dismissing the escalation that paused the agent resumes it; a human pause stays', () => {
    const a = agent();
    for (let i = 0; i < 3; i++) turns(a, 5, failingTurn);
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', awaitingCause: 'escalation', ladder: { step: 3, escalations: 1 } });
    signal(a, 'dismiss', { note: 'false alarm' });
    expect(a.core.s).toMatchObject({ state: 'running', awaitingCause: null, pauseReason: null, ladder: { step: 0, escalations: 1 } });
    expect(a.core.s.transitions.at(-1)).toMatchObject({
      from: 'awaiting-input',
      to: 'running',
      event: 'resume',
      cause: 'resumed: dismissed as a false alarm (false alarm)',
    });
    expect(a.core.s.pendingWhispers.map((w) => w.type)).toEqual([]); // the ESCALATION whisper is withdrawn
    expect(a.core.s.cases.at(-1)).toMatchObject({ escalated: true, decision: { kind: 'dismissed', note: 'false alarm' } });

    const b = agent();
    for (let i = 0; i < 3; i++) turns(b, 5, failingTurn);
    signal(b, 'pause', { reason: 'looking at it myself' });
    signal(b, 'dismiss', {});
    expect(b.core.s).toMatchObject({ state: 'paused-by-user', ladder: { step: 0 } });
    expect(b.core.s.dismissals).toBe(1);
  });

  it('is refused with a reason when nothing was flagged, when already dismissed, and once the agent ended', () => {
    const a = agent();
    turns(a, 5, (id) => ({ id, text: `step ${id}`, toolCalls: [{ name: 'shell', args: `npm test -- ${id}`, result: '1 passed', ok: true }] }));
    signal(a, 'dismiss', {});
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'dismiss', reason: 'nothing to dismiss: no evaluation has flagged this agent' });
    turns(a, 5, failingTurn);
    signal(a, 'dismiss', {});
    signal(a, 'dismiss', {});
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'dismiss', reason: 'the last flagged verdict was already dismissed' });
    expect(a.core.s.dismissals).toBe(1);
    signal(a, 'abort', {});
    signal(a, 'dismiss', {});
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'dismiss', reason: 'agent is failed' });
  });

  it('an invalid payload is recorded and ignored, never thrown', () => {
    const a = agent();
    turns(a, 5, failingTurn);
    expect(() => signal(a, 'dismiss', { note: 42 })).not.toThrow();
    expect(a.core.s).toMatchObject({ invalidSignals: 1, dismissals: 0, ladder: { step: 1 } });
    expect(a.core.s.refused.at(-1)!.reason).toMatch(/^invalid dismiss payload: note/);
    signal(a, 'dismiss', undefined); // the bare `temporal workflow signal --name dismiss`
    expect(a.core.s.dismissals).toBe(1);
  });

  it('the dismissed findings, the counters and the cases cross continue-as-new', () => {
    const a = agent();
    turns(a, 5, failingTurn);
    signal(a, 'dismiss', { note: 'expected' });
    const carried = JSON.parse(JSON.stringify(carriedForContinueAsNew(a, { agentId: 'a1', task: 'Make the build pass' })));
    const b = testAgent({ supervisor: { evalInterval: 5 } }, { carried });
    expect(b.core.s).toMatchObject({ runs: 2, dismissals: 1, dismissed: a.core.s.dismissed, cases: a.core.s.cases });
    expect(turns(b, 5, failingTurn)).toEqual([]);
    expect(b.core.s).toMatchObject({ suppressed: 1, ladder: { step: 0 } });
    // A run continued from one recorded before these fields starts them empty.
    const old = { ...carried } as Record<string, unknown>;
    for (const k of ['flaggedSeq', 'cases', 'dismissed', 'dismissals', 'lastDismissal', 'suppressed']) delete old[k];
    const c = testAgent({}, { carried: old as never });
    expect(c.core.s).toMatchObject({ dismissals: 0, dismissed: [], cases: [], suppressed: 0, flaggedSeq: 0 });
  });
});

describe('bounded memory', () => {
  it('keeps the newest MAX_DISMISSED signatures, without duplicates', () => {
    let list: string[] = [];
    for (let i = 0; i < MAX_DISMISSED + 30; i++) list = rememberSignature(list, `SPIRALING:s${i}`);
    list = rememberSignature(list, `SPIRALING:s${MAX_DISMISSED + 10}`);
    expect(list).toHaveLength(MAX_DISMISSED);
    expect(new Set(list).size).toBe(MAX_DISMISSED);
    expect(list.at(-1)).toBe(`SPIRALING:s${MAX_DISMISSED + 10}`);
    expect(list[0]).toBe('SPIRALING:s30');
  });

  it('keeps the newest MAX_CASES flagged windows, each within its byte budget, renumbered when turns go', () => {
    const big = (i: number): Turn => ({
      id: `b${i}`,
      text: 'y'.repeat(6_000),
      toolCalls: [{ name: 'shell', args: 'npm run build', result: 'z'.repeat(3_000), ok: false }],
    });
    const record = (seq: number): CaseRecord => ({
      seq,
      at: '2026-11-23T09:00:00.000Z',
      verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'm', evidence: [] },
      signature: 'SPIRALING:m',
      reason: 'interval',
      turns: Array.from({ length: 20 }, (_, i) => big(i)),
      evidenceFrom: 15,
      firstTurnNumber: 101,
      escalated: false,
      decision: null,
    });
    let cases: CaseRecord[] = [];
    for (let seq = 1; seq <= MAX_CASES + 5; seq++) cases = rememberCase(cases, record(seq));
    expect(cases.map((c) => c.seq)).toEqual(Array.from({ length: MAX_CASES }, (_, i) => i + 6));
    for (const c of cases) {
      expect(jsonBytes(c.turns)).toBeLessThanOrEqual(CASE_WINDOW_MAX_BYTES); // older detail went first
      expect(c.turns.at(-1)).toMatchObject({ id: 'b19', text: big(19).text }); // the newest turn keeps its text
    }
    // When whole turns must go (oldest first), the numbering moves with them.
    const tight = capCase(record(1), 6_800);
    const cut = 20 - tight.turns.length;
    expect(cut).toBeGreaterThan(0);
    expect(jsonBytes(tight.turns)).toBeLessThanOrEqual(6_800);
    expect(tight.firstTurnNumber).toBe(101 + cut);
    expect(tight.evidenceFrom).toBe(Math.max(0, 15 - cut));
    const small = { ...record(1), turns: [failingTurn('s1') as Turn] };
    expect(capCase(small)).toBe(small); // a window that fits is kept as it is
  });

  it('a run with many flagged verdicts carries at most MAX_CASES windows, and fits the carried budget', () => {
    const a = agent({ supervisor: { evalInterval: 5, windowSize: 20 } });
    const fat = (id: string) => ({
      id,
      text: `Trying again ${'.'.repeat(7_000)}`,
      toolCalls: [{ name: 'shell', args: `npm run build`, result: `error TS2307 ${'x'.repeat(3_900)}`, ok: false }],
    });
    for (let round = 0; round < 12; round++) {
      turns(a, 5, fat);
      if (a.core.s.state === 'awaiting-input') signal(a, 'resume', {});
    }
    expect(a.core.s.flaggedSeq).toBeGreaterThan(MAX_CASES);
    expect(a.core.s.cases).toHaveLength(MAX_CASES);
    const carried = carriedForContinueAsNew(a, { agentId: 'a1', task: 'Make the build pass' });
    expect(jsonBytes(carried)).toBeLessThanOrEqual(CARRIED_STATE_MAX_BYTES);
    expect(carried.cases).toHaveLength(MAX_CASES);
  });
});

describe('cases and their labels', () => {
  it('dismissed → OK; escalation resumed without dismissing → its pattern; aborted → its pattern; undecided → left out', () => {
    // Dismissed at step 1.
    const a = agent({ agentId: 'dis' });
    turns(a, 5, failingTurn);
    signal(a, 'dismiss', { note: 'expected failure' });
    // Escalated, then resumed by a human (not dismissed); then a new, undecided flag.
    const r = agent({ agentId: 'res' });
    for (let i = 0; i < 3; i++) turns(r, 5, failingTurn);
    signal(r, 'resume', { note: 'fixed the config myself' });
    turns(r, 5, otherFailure);
    // Escalated, then aborted.
    const x = agent({ agentId: 'abo' });
    for (let i = 0; i < 3; i++) turns(x, 5, failingTurn);
    signal(x, 'abort', { reason: 'hopeless' });

    const got = (t: TestAgent) => exportCases({ agentId: t.core.spec.agentId, task: t.core.spec.task, cases: t.core.s.cases });
    const ea = got(a);
    expect(ea.lines.map((l) => l.label)).toEqual(['OK']);
    expect(ea.lines[0]).toMatchObject({
      id: 'dis-case-1',
      decidedBy: 'human',
      task: 'Make the build pass',
      reason: 'interval',
      firstTurnNumber: 1,
      evidenceFrom: 0,
    });
    expect(ea.lines[0]!.turns).toHaveLength(5);
    expect(ea.lines[0]!.notes).toMatch(/^a human dismissed this as a false alarm \(note: expected failure\); the evaluator said CORRECTION SPIRALING: /);
    const er = got(r);
    expect(er.lines.map((l) => [l.id, l.label])).toEqual([['res-case-3', 'SPIRALING']]); // the escalating verdict
    expect(er.skipped).toBe(3); // steps 1 and 2 before it, and the new flag after the resume
    expect(er.lines[0]!.notes).toMatch(/resumed the agent without dismissing it \(note: fixed the config myself\)/);
    const ex = got(x);
    expect(ex.lines.map((l) => l.label)).toEqual(['SPIRALING']);
    expect(ex.lines[0]!.notes).toMatch(/aborted the agent \(note: hopeless\)/);
    expect(labelOf({ ...x.core.s.cases[0]!, decision: null })).toBeNull();

    // The file `warden evaluate --cases` reads: every line parses, and the heuristic judges it as it did live.
    const text = toJsonl([...ea.lines, ...er.lines, ...ex.lines]);
    const parsed = parseCases(text);
    expect(parsed.map((c) => c.label)).toEqual(['OK', 'SPIRALING', 'SPIRALING']);
    for (const c of parsed) {
      const v = heuristicVerdict({ task: c.task, turns: c.turns, reason: c.reason, evidenceFrom: c.evidenceFrom, firstTurnNumber: c.firstTurnNumber });
      expect(v.pattern).toBe('SPIRALING');
    }
  });
});

describe("the client's check of a dismiss", () => {
  const snap = (extra: object = {}) => ({ state: 'running', transitions: [], refused: [], pendingWhispers: 0, whispersDelivered: 0, dismissals: 0, ...extra });
  it('applied when the count goes up (with the resume it caused), refused with the reason, else pending', () => {
    expect(dismissOutcome(snap(), snap({ dismissals: 1 }))).toMatchObject({ kind: 'applied', detail: /escalation step back to 0/ });
    const t = { from: 'awaiting-input', to: 'running', event: 'resume', cause: 'resumed: dismissed as a false alarm', at: 'x' };
    expect(dismissOutcome(snap({ state: 'awaiting-input' }), snap({ dismissals: 1, transitions: [t] }))).toMatchObject({
      kind: 'applied',
      from: 'awaiting-input',
      state: 'running',
    });
    const refused = { what: 'dismiss', reason: 'nothing to dismiss: no evaluation has flagged this agent', at: 'x' };
    expect(dismissOutcome(snap(), snap({ refused: [refused] }))).toEqual({ kind: 'refused', state: 'running', reason: refused.reason });
    expect(dismissOutcome(snap({ dismissals: undefined }), snap({ dismissals: undefined }))).toEqual({ kind: 'pending', state: 'running' });
  });
});
