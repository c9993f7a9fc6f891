/** The mesh's per-task policy, in tables: gate O keeping correct work, replacement, integration outcomes, failures, the ready line, the dashboard. */
import { describe, expect, test } from 'vitest';
import { TunablesSchema } from '../../src/domain/mesh/config.js';
import { gateFinished } from '../../src/domain/mesh/finished.js';
import { failedGateOf, integrationOutcome, markFailed, MAX_RESTARTS, readyReason, replacement, tickTask } from '../../src/domain/mesh/policy.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { tickAttempt, type Observation } from '../../src/domain/mesh/rules.js';
import { meshStatus, record, TICK_TUNABLES as tun } from '../helpers/mesh-fixtures.js';

const SECTIONS = '1) Summary\n2) Intended files touched\n3) Patch\n4) Commands run + results\n5) Risks / follow-ups';

/** Tasks here are scoped to a.txt unless a test says otherwise. */
const spawned = (mode: 'patch-first' | 'analysis-only' = 'patch-first', scope = ['a.txt']) => record(mode, scope);

/** A finished attempt: checkpoint done, a unified patch touching `files`, the final message `text`, `turns` turns. */
const done = (text: string, opts: { files?: string[]; unified?: boolean; turns?: number; mtime?: number } = {}): Observation => ({
  checkpoint: {
    exists: true,
    mtimeMs: opts.mtime ?? 1,
    parse: {
      ok: true,
      checkpoint: { statusCode: 'done', statusDetail: 'finished', plan: ['a', 'b', 'c', 'd', 'e'], intendedFiles: [], blockers: [], artifacts: [] },
    },
  },
  patch: { exists: true, size: 10, mtimeMs: 1, sha: 'p1', unified: opts.unified ?? true, files: opts.files ?? ['a.txt'], by: 'warden' },
  lastTurn: { text, at: null },
  turns: opts.turns ?? 1,
});
const silent: Observation = {
  checkpoint: { exists: false, mtimeMs: null, parse: null },
  patch: { exists: false, size: 0, mtimeMs: null, sha: null, unified: false, files: [], by: null },
  lastTurn: null,
  turns: 0,
};

describe('gate O keeps correct work', () => {
  test.each([
    // [what, agent ended?, final message, expected first decision]
    ['all sections', null, SECTIONS, { kind: 'ready' }],
    [
      'no sections, agent ended: integrated at once with a warning, no re-emit',
      'completed',
      'I did it.',
      {
        kind: 'ready',
        warning:
          'gate O: integrated without the deliverable sections (missing: Summary, Intended files, Patch, Commands run, Risks); the agent had ended its session',
      },
    ],
    [
      'no sections, agent crashed after finishing: kept too',
      'failed',
      'I did it.',
      { kind: 'ready', warning: expect.stringMatching(/^gate O: integrated without/) },
    ],
    ['no sections, agent running: wait for the final message first', null, 'I did it.', { kind: 'wait' }],
  ] as const)('%s', (_what, ended, text, want) => {
    const { task: r, a } = spawned();
    a.agentEnded = ended;
    expect(gateFinished(r, a, done(text), tun, 1000)).toEqual(want);
  });

  test('agent running: wait the stall time, one re-emit request, then integrated with a warning whatever it answers', () => {
    for (const answer of ['same words again', 'nothing at all']) {
      const { task: r, a } = spawned();
      a.acked = true;
      expect(tickTask(r, a, done('I did it.'), 1000, tun)).toEqual([]); // waiting for the final message
      const asked = tickTask(r, a, done('I did it.'), 3000, tun);
      expect(asked.map((x) => x.kind)).toEqual(['log', 'steer']);
      expect(asked[1]).toMatchObject({
        text: expect.stringMatching(
          /^Your final message lacks the deliverable sections \(missing: Summary, Intended files, Patch, Commands run, Risks\)\. Your patch passed its checks/,
        ),
      });
      const next = answer === 'nothing at all' ? done('I did it.') : done('I did it again.', { turns: 2 });
      // Unchanged: the wait is the stall time; changed: the gates decide at once.
      const at = answer === 'nothing at all' ? [4000, 6000] : [4000];
      let actions = tickTask(r, a, next, at[0]!, tun);
      if (at[1]) actions = tickTask(r, a, next, at[1], tun);
      expect(
        actions.map((x) => x.kind),
        answer,
      ).toEqual(['log']);
      expect(actions[0]).toMatchObject({
        text: expect.stringMatching(/^GATE O task 1: integrated without the deliverable sections .*asked once to re-emit them; the patch passed D and S/),
      });
      expect(a).toMatchObject({ ready: true, reemits: 1, gatedSha: 'p1', warning: expect.stringMatching(/^gate O: /), gates: { O: 'fail', D: 'ok', S: 'ok' } });
    }
  });

  test('the agent ends while a re-emit is awaited: integrated with a warning, not restarted', () => {
    const { task: r, a } = spawned();
    a.acked = true;
    tickTask(r, a, done('I did it.'), 1000, tun);
    tickTask(r, a, done('I did it.'), 3000, tun); // re-emit requested
    a.agentEnded = 'completed';
    const actions = tickTask(r, a, done('I did it.'), 3500, tun);
    expect(actions.map((x) => x.kind)).toEqual(['log']);
    expect(a.ready).toBe(true);
  });

  test('what still fails: S out of scope, D not a diff after the re-emit, an explorer without sections', () => {
    const s = spawned();
    expect(gateFinished(s.task, s.a, done(SECTIONS, { files: ['a.txt', 'b.txt'] }), tun, 1000)).toEqual({
      kind: 'fail',
      reason: 'gate S failed: b.txt outside the scope a.txt; not integrated',
    });
    const d = spawned();
    d.a.gates.D = 'fail';
    expect(gateFinished(d.task, d.a, done('x', { unified: false }), tun, 1000)).toMatchObject({
      kind: 'reemit',
      text: expect.stringMatching(/^Your output violates the contract: gate O .*; D \(the patch draft is not a unified diff\)/),
    });
    expect(gateFinished(d.task, d.a, done('x', { unified: false }), tun, 9000)).toEqual({
      kind: 'fail',
      reason: expect.stringMatching(/^gate O .* and D \(the patch draft is not a unified diff\) failed after a re-emit request$/),
    });
    const e = spawned('analysis-only', []);
    e.a.agentEnded = 'completed';
    expect(gateFinished(e.task, e.a, done('x'), tun, 1000)).toEqual({ kind: 'wait' });
  });
});

describe('every path ends', () => {
  test('an attempt that never acks, after the ack restart: fails at ack SLA + patch draft timeout (continue waiting or not)', () => {
    const { task: r, a } = spawned('analysis-only', []);
    r.ackRestarts = 1;
    expect(tickAttempt(r, a, silent, 62_999, tun)).toEqual({ kind: 'none' });
    expect(tickAttempt(r, a, silent, 63_000, tun)).toEqual({
      kind: 'fail',
      reason: 'gate A failed: no checkpoint 63s after spawn, after the ack restart (limit: the ack SLA 3s + the patch draft timeout 60s)',
    });
  });

  test('a worker waiting for feedback nobody gives: a stall once the patch draft timeout has passed without a change', () => {
    const { task: r, a } = spawned();
    const waits = (at: number): Observation => ({
      ...silent,
      checkpoint: {
        exists: true,
        mtimeMs: 500,
        parse: {
          ok: true,
          checkpoint: {
            statusCode: 'waiting_for_feedback',
            statusDetail: 'which file?',
            plan: ['a', 'b', 'c', 'd', 'e'],
            intendedFiles: [],
            blockers: ['which file?'],
            artifacts: [],
          },
        },
      },
      turns: at,
    });
    r.firstSpawnAt = 0;
    const cw = TunablesSchema.parse({ ...tun, continueWaiting: true }); // no take-over at the patch draft timeout: the wait alone
    expect(tickAttempt(r, a, waits(1), 1000, cw)).toEqual({ kind: 'none' });
    expect(tickAttempt(r, a, waits(2), 60_999, cw)).toEqual({ kind: 'none' });
    expect(tickAttempt(r, a, waits(3), 61_000, cw)).toMatchObject({
      kind: 'takeover',
      event:
        'STALL DETECTED: no progress for 60s (status "waiting_for_feedback: which file?", no patch draft; nobody answers a worker waiting for feedback; limit 60s)',
    });
  });

  test.each([
    // [restarts so far, took over, mode, asked, expected]
    [0, false, 'patch-first', 'restart', { kind: 'spawn', attempt: 'worker' }],
    [MAX_RESTARTS, false, 'patch-first', 'restart', { kind: 'spawn', attempt: 'takeover' }],
    [MAX_RESTARTS, true, 'patch-first', 'restart', { kind: 'fail', reason: `gave up after ${MAX_RESTARTS} restarts (why)` }],
    [MAX_RESTARTS, false, 'analysis-only', 'restart', { kind: 'fail', reason: `gave up after ${MAX_RESTARTS} restarts (why)` }],
    [0, false, 'patch-first', 'takeover', { kind: 'spawn', attempt: 'takeover' }],
    [0, true, 'patch-first', 'takeover', { kind: 'fail', reason: 'why' }],
  ] as const)('replacement: %i restarts, took over %s, %s, %s', (restarts, tookOver, mode, how, want) => {
    const { task: r, a } = spawned(mode);
    [r.restarts, r.tookOver] = [restarts, tookOver];
    expect(replacement(r, a, how, 'why')).toMatchObject(want);
  });

  test('integration outcomes: applied (a warning goes to the task), refused (fail), conflict (rebase), past the budget (a human)', () => {
    const { task: r, a } = spawned();
    a.warning = 'gate O: integrated without the deliverable sections (missing: Summary)';
    expect(integrationOutcome(r, a, { applied: true, head: 'h', already: false }, { conflicts: 0, conflictBudget: 1 })).toEqual({ kind: 'integrated' });
    expect(r.warnings).toEqual([a.warning]);
    expect(integrationOutcome(r, a, { applied: true, head: 'h', already: true }, { conflicts: 0, conflictBudget: 1 })).toEqual({ kind: 'integrated' });
    expect(r.warnings).toHaveLength(1);
    const b = spawned();
    expect(
      integrationOutcome(
        b.task,
        b.a,
        { applied: false, error: 'gate D: the patch draft changed after its gates passed', conflictingFiles: [], refused: true },
        { conflicts: 0, conflictBudget: 1 },
      ),
    ).toEqual({ kind: 'fail', reason: 'gate D refused: the patch draft changed after its gates passed; not integrated' });
    expect(b.a.gates).toMatchObject({ D: 'fail', P: '--' });
    const mesh = { conflicts: 0, conflictBudget: 1 };
    const conflict = { applied: false as const, error: 'error: patch failed: a.txt:1', conflictingFiles: ['a.txt'] };
    expect(integrationOutcome(b.task, b.a, conflict, mesh)).toEqual({ kind: 'rebase' });
    expect(integrationOutcome(b.task, b.a, conflict, mesh)).toEqual({ kind: 'await-human', reason: expect.stringMatching(/^conflict budget spent \(1\)/) });
    expect(mesh.conflicts).toBe(2);
  });

  test.each([
    ['gate S failed: b.txt outside the scope a.txt; not integrated', 'S'],
    ['gate C refused: the checkpoint is a symlink, not a regular file', 'C'],
    ['TIMEOUT ESCALATION: no patch draft after 63s (patch draft timeout 60s); the direct-edit attempt produced no patch either', 'D'],
    ['no new patch 60s after the rebase request (the agent kept the patch that did not apply; limit: the patch draft timeout, 60s)', 'P'],
    ['no re-emitted output 3s after the request (limit 2s)', 'O'],
    ['gave up after 3 restarts (ack SLA missed: no checkpoint 3s after spawn (SLA 3s))', 'A'],
    ['gave up after 3 restarts (missing-artifact incident 2: checkpoint missing)', 'C'],
    ['time budget spent', null],
    ['cancelled: enough', null],
  ] as const)('failedGateOf(%j) = %s', (reason, gate) => expect(failedGateOf(reason)).toBe(gate));

  test('a failed task keeps the gate and the end of its last output; the ready line and the dashboard show failures and warnings', () => {
    const { task: r, a } = spawned();
    a.lastOutput = 'I touched b.txt as well.';
    markFailed(r, 'gate S failed: b.txt outside the scope a.txt; not integrated');
    expect(r).toMatchObject({ state: 'failed', failedGate: 'S', lastOutput: 'I touched b.txt as well.', next: '-' });
    const ok = spawned();
    ok.task.task = { ...ok.task.task, index: 2, slug: '2-t' };
    [ok.task.state, ok.task.warnings, ok.task.next] = ['integrated', ['gate O: integrated without the deliverable sections (missing: Summary)'], '-'];
    const s = meshStatus([r, ok.task], { phase: 'ready', ticks: 3, integrationHead: null });
    expect(readyReason(s)).toBe('1 of 2 tasks through (1 with warnings), 1 failed; `warden mesh apply r` merges');
    const d = renderDashboard(s, 0);
    expect(d).toMatch(/^1 1-t .*failed .*- \(gate S failed\)$/m);
    expect(d).toMatch(/^2 2-t .*integrated .*warning: gate O: integrated without the deliverable sections \(missi\.\.$/m);
    expect(d).toContain('\nWarnings\n- task 2 2-t: gate O: integrated without the deliverable sections (missing: Summary)\n');
    expect(d).toContain(
      '\nFailures\n- task 1 1-t (gate S): gate S failed: b.txt outside the scope a.txt; not integrated\n  last output: I touched b.txt as well.\n',
    );
  });
});
