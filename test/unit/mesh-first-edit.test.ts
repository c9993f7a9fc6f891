/** The first edit target (src/domain/mesh/rules.ts), in tables on a fake clock: who it restarts, who it leaves alone, and when the patch draft timeout acts first. */
import { describe, expect, test } from 'vitest';
import { TunablesSchema, type TunablesInput } from '../../src/domain/mesh/config.js';
import { replacement, tickTask, type TaskAction } from '../../src/domain/mesh/policy.js';
import { workerPrompt } from '../../src/domain/mesh/render.js';
import type { Observation, PatchObservation } from '../../src/domain/mesh/rules.js';
import type { Attempt, TaskRecord } from '../../src/domain/mesh/state.js';
import { freshAttempt, meshTask, taskRecord } from '../helpers/mesh-fixtures.js';

const S = 1_000;
// Stall time 2s: every observation below moves its status each tick, so only the first edit target can act.
const base: TunablesInput = { tickInterval: '1s', ackSla: '3s', patchDraftTimeout: '60s', checkpointInterval: '10s', firstEditTarget: '20s' };

/** A task (scope a.txt) with its first attempt of `kind` in `mode`, spawned at `spawnedAt` (a take-over's task is patch-first). */
function record(mode: 'patch-first' | 'analysis-only' | 'direct-edit', kind: Attempt['kind'] = 'worker', spawnedAt = 0): { r: TaskRecord; a: Attempt } {
  const task = meshTask(kind === 'takeover' ? 'patch-first' : mode, ['a.txt']);
  const a = freshAttempt(task, { kind, mode, agentId: 'r.t.a1', workflowId: 'agent-r.t.a1', spawnedAt });
  return { r: taskRecord(task, [a], { tookOver: kind === 'takeover' }), a };
}

const NONE: PatchObservation = { exists: false, size: 0, mtimeMs: null, sha: null, unified: false, files: [], by: null };
const EMPTY: PatchObservation = { exists: true, size: 0, mtimeMs: 1, sha: 'e3b0', unified: false, files: [], by: 'worker' };
const REAL: PatchObservation = { exists: true, size: 120, mtimeMs: 1, sha: 'p1', unified: true, files: ['a.txt'], by: 'worker' };

/** A worker at work: a valid checkpoint whose status moves every tick (no stall), with `patch` as its draft. */
const working = (now: number, patch: PatchObservation): Observation => ({
  checkpoint: {
    exists: true,
    mtimeMs: now,
    parse: {
      ok: true,
      checkpoint: {
        statusCode: 'drafting_patch',
        statusDetail: `step ${now}`,
        plan: ['a', 'b', 'c', 'd', 'e'],
        intendedFiles: ['a.txt'],
        blockers: [],
        artifacts: [],
      },
    },
  },
  patch,
  lastTurn: null,
  turns: null,
});

/** Tick the attempt every second from 1s to `until`, with `patchAt(now)` as the draft; the first non-empty actions and when. */
function run(
  r: TaskRecord,
  a: Attempt,
  until: number,
  patchAt: (now: number) => PatchObservation,
  tun: TunablesInput = {},
  gate?: () => boolean,
): { at: number; acts: TaskAction[] } | null {
  const t = TunablesSchema.parse({ ...base, ...tun });
  for (let now = a.spawnedAt + S; now <= until; now += S) {
    const acts = tickTask(r, a, working(now, patchAt(now)), now, t, gate ? { firstEdit: gate } : {});
    if (acts.length) return { at: now, acts };
  }
  return null;
}

const MISSED = (d: number, target = 20) => ({
  kind: 'log',
  text: `FIRST EDIT TARGET MISSED: no change in the patch draft after ${d}s (first edit target ${target}s)`,
});

describe('the first edit target', () => {
  test.each([
    ['patch-first, no draft', 'patch-first', () => NONE],
    ['patch-first, an empty draft (no file touched)', 'patch-first', () => EMPTY],
    ['direct-edit, a worktree without a change (no draft)', 'direct-edit', () => NONE],
  ] as const)('%s: restarted at spawn + the target with FIRST EDIT TARGET MISSED, not a tick before', (_, mode, patch) => {
    const { r, a } = record(mode);
    const res = run(r, a, 30 * S, patch);
    expect(res?.at).toBe(20 * S);
    expect(res?.acts).toEqual([
      MISSED(20),
      { kind: 'replace', how: 'restart', reason: 'first edit target missed: no change in the patch draft after 20s (first edit target 20s)' },
    ]);
    expect(a.firstEdit).toBe('missed');
    expect(replacement(r, a, 'restart', res!.acts[1]!.kind === 'replace' ? res!.acts[1].reason : '')).toMatchObject({ kind: 'spawn', attempt: 'worker' });
    expect(r.restarts).toBe(1);
  });

  test.each([
    ['a real draft from the start', (_: number) => REAL],
    ['a real draft at 5s that is gone again at 10s', (now: number) => (now >= 5 * S && now < 10 * S ? REAL : NONE)],
    ['a real draft at 5s, emptied at 10s', (now: number) => (now < 5 * S ? NONE : now < 10 * S ? REAL : EMPTY)],
  ])('an attempt that had a real change is never affected: %s', (_, patch) => {
    const { r, a } = record('patch-first');
    expect(run(r, a, 50 * S, patch)).toBeNull();
    expect(a.firstEdit).toBe('seen');
  });

  test('analysis-only attempts are exempt', () => {
    const { r, a } = record('analysis-only');
    expect(run(r, a, 50 * S, () => NONE)).toBeNull();
    expect(a.firstEdit ?? null).toBeNull();
  });

  test('a direct-edit take-over attempt is measured from its own spawn and restarted', () => {
    const { r, a } = record('direct-edit', 'takeover', 100 * S);
    const res = run(r, a, 130 * S, () => NONE);
    expect(res?.at).toBe(120 * S);
    expect(res?.acts.map((x) => x.kind)).toEqual(['log', 'replace']);
    expect(res?.acts[1]).toMatchObject({ how: 'restart' });
  });

  test('after the patch draft timeout (here with --continue-waiting, so the timeout itself does not act) the target takes over, as the stall rule does', () => {
    const { r, a } = record('patch-first');
    const res = run(r, a, 100 * S, () => NONE, { firstEditTarget: '90s', continueWaiting: true });
    expect(res?.at).toBe(90 * S);
    expect(res?.acts).toEqual([MISSED(90, 90), { kind: 'replace', how: 'takeover', reason: 'first edit target missed after the patch draft timeout' }]);
  });

  test('an empty draft past the patch draft timeout: the timeout does not act (a draft exists), the target takes over', () => {
    const { r, a } = record('patch-first');
    const res = run(r, a, 100 * S, () => EMPTY, { firstEditTarget: '70s' });
    expect(res?.at).toBe(70 * S);
    expect(res?.acts[0]).toEqual(MISSED(70, 70));
    expect(res?.acts[1]).toMatchObject({ kind: 'replace', how: 'takeover' });
  });

  test('with the defaults (target 10m, patch draft timeout 5m) the patch draft timeout acts first', () => {
    const { r, a } = record('patch-first');
    const res = run(r, a, 700 * S, () => NONE, {
      tickInterval: '60s',
      ackSla: '30s',
      checkpointInterval: '2m',
      patchDraftTimeout: '5m',
      firstEditTarget: '10m',
    });
    expect(res?.at).toBe(300 * S);
    expect(res?.acts[0]).toMatchObject({ kind: 'log', text: expect.stringMatching(/^TIMEOUT ESCALATION: no patch draft after 300s/) });
    expect(a.firstEdit ?? null).toBeNull();
  });

  test('the workflow is asked (its patch) only when the rule would fire; refused, nothing happens, and it fires at most once', () => {
    const { r, a } = record('patch-first');
    const t = TunablesSchema.parse(base);
    let asked = 0;
    let allow = false;
    const gate = () => {
      asked += 1;
      return allow;
    };
    for (let now = S; now < 20 * S; now += S) expect(tickTask(r, a, working(now, NONE), now, t, { firstEdit: gate })).toEqual([]);
    expect(asked).toBe(0);
    // A run from before the rule (replaying without its marker): no action, nothing recorded.
    expect(tickTask(r, a, working(20 * S, NONE), 20 * S, t, { firstEdit: gate })).toEqual([]);
    expect([asked, a.firstEdit ?? null]).toEqual([1, null]);
    allow = true;
    expect(tickTask(r, a, working(21 * S, NONE), 21 * S, t, { firstEdit: gate })[0]).toEqual(MISSED(21));
    // Not replaced (say the shell had not run the action yet): the rule never fires again for this attempt.
    for (let now = 22 * S; now < 40 * S; now += S)
      expect(tickTask(r, a, working(now, NONE), now, t, { firstEdit: gate }).filter((x) => x.kind === 'log' && x.text.startsWith('FIRST EDIT'))).toEqual([]);
    expect(asked).toBe(2);
  });

  test('the worker prompt says what the target asks and what missing it does (not to explorers)', () => {
    const t = TunablesSchema.parse(base);
    const prompt = (mode: 'patch-first' | 'direct-edit' | 'analysis-only') => {
      const { r, a } = record(mode);
      return workerPrompt({ runId: 'r', task: r.task, attempt: a, base: 'abc', tunables: t });
    };
    expect(prompt('patch-first')).toContain(
      '- First edit target: within 20s the patch draft must show real progress (at least one real change, even scaffolding); an attempt without one by then is restarted.',
    );
    expect(prompt('direct-edit')).toContain('- First edit target: within 20s your worktree must show real progress');
    expect(prompt('analysis-only')).not.toContain('First edit target');
  });
});
