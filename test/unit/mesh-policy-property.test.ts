/**
 * The per-task policy (src/domain/mesh/policy.ts) over random worker behaviour, seeded so a
 * failure reproduces: each attempt of a task is silent, stalls, crashes, writes no diff, a bad
 * diff, a diff out of scope, a conflicting diff, or a good diff, with or without the deliverable
 * sections, ending its session or not, answering re-emit and rebase requests or not, or waits for
 * feedback nobody gives; the ticks
 * fall irregularly. A small world plays the workflow's part (spawning, steering, integrating).
 *
 * Properties:
 *  - every task ends (integrated, failed, or the mesh awaits a human past the conflict budget)
 *    (the first edit target, random here, only replaces attempts sooner: the bound is unchanged)
 *    within MAX_ATTEMPTS attempts and MAX_ATTEMPTS × PER_ATTEMPT of time, where
 *    MAX_ATTEMPTS = 1 + MAX_RESTARTS + 1 (take-over) + conflict budget + 1 (rebases by new attempts)
 *    PER_ATTEMPT = ack SLA + 2 × patch draft timeout + 3 × stall time + 3 × the longest tick gap;
 *  - no task whose attempt finished (checkpoint done) with a diff that passes D, P and S ends
 *    failed, whatever its final message says;
 *  - with a hedge budget N from 2 to 8 (src/domain/mesh/hedge.ts: an attempt that misses the ack
 *    SLA or stalls is kept and a hedge started beside it, room allowing) the same bounds hold,
 *    and a task never has more than N live attempts, nor more than the mesh's free slots.
 */
import { describe, expect, test } from 'vitest';
import { TunablesSchema, type Tunables } from '../../src/domain/mesh/config.js';
import { losers, settleAttempt } from '../../src/domain/mesh/hedge.js';
import { integrationOutcome, markFailed, MAX_RESTARTS, tickTask } from '../../src/domain/mesh/policy.js';
import { stallAfterMs, taskState, type Observation } from '../../src/domain/mesh/rules.js';
import { activeAttempt, isOpen, liveAttempts, readyAttempt, type Attempt, type TaskRecord } from '../../src/domain/mesh/state.js';
import { freshAttempt, meshTask, prng, taskRecord } from '../helpers/mesh-fixtures.js';

const KINDS = ['silent', 'stall', 'waits', 'crash', 'no-diff', 'bad-diff', 'out-of-scope', 'conflict', 'good'] as const;
type Kind = (typeof KINDS)[number];

const SECTIONS = '1) Summary\n- x\n2) Intended files touched\n- a.txt\n3) Patch\n```diff\n```\n4) Commands run + results\n- ok\n5) Risks / follow-ups\n- none';

/** One attempt's worker: what it does, when, and how it answers requests. */
interface Worker {
  kind: Kind;
  spawnedAt: number;
  ackAt: number;
  doneAt: number;
  crashAt: number;
  sections: boolean;
  endsAfterDone: boolean;
  reemitReply: 'sections' | 'same' | 'nothing' | 'ends';
  rebaseReply: 'new' | 'nothing';
  turns: number;
  text: string;
  patchVersion: number;
  checkpointAt: number | null;
  endedAt: number | null;
  endedAs: string | null;
  rebased: boolean;
  pending: { at: number; what: 'reemit' | 'rebase' }[];
}

function newWorker(rand: () => number, t: Tunables, now: number, behaviours: Kind[] | null): Worker {
  // Restricted behaviours are also quick: acked within the ack SLA, done within the patch draft timeout.
  const slow = behaviours ? 0.9 : 1.5;
  const kind = behaviours ? behaviours[Math.floor(rand() * behaviours.length)]! : KINDS[Math.floor(rand() * KINDS.length)]!;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const ackAt = now + rand() * slow * t.ackSla;
  return {
    kind,
    spawnedAt: now,
    ackAt,
    doneAt: Math.max(ackAt, now + rand() * slow * t.patchDraftTimeout),
    crashAt: now + rand() * t.patchDraftTimeout,
    sections: rand() < 0.4,
    endsAfterDone: rand() < 0.5,
    reemitReply: pick(['sections', 'same', 'nothing', 'ends'] as const),
    rebaseReply: pick(['new', 'nothing'] as const),
    turns: 0,
    text: '',
    patchVersion: 1,
    checkpointAt: null,
    endedAt: kind === 'silent' && rand() < 0.3 ? now + rand() * 3 * t.ackSla : null,
    endedAs: null,
    rebased: false,
    pending: [],
  };
}

const cp = (statusCode: string, statusDetail: string) => ({
  ok: true as const,
  checkpoint: { statusCode, statusDetail, plan: ['a', 'b', 'c', 'd', 'e'], intendedFiles: ['a.txt'], blockers: [], artifacts: [] },
});
const noPatch = { exists: false, size: 0, mtimeMs: null, sha: null, unified: false, files: [], by: null };

/** What a tick sees of worker `w` at `now` (advancing its state: turns, answers to requests). */
function observe(w: Worker, now: number, slug: string): Observation {
  for (const p of w.pending.filter((x) => x.at <= now && w.endedAt === null)) {
    w.pending.splice(w.pending.indexOf(p), 1);
    if (p.what === 'reemit') {
      if (w.reemitReply === 'sections') [w.text, w.turns] = [SECTIONS, w.turns + 1];
      else if (w.reemitReply === 'same') w.turns += 1;
      else if (w.reemitReply === 'ends') [w.endedAt, w.endedAs] = [now, 'completed'];
    } else if (w.rebaseReply === 'new') {
      [w.rebased, w.patchVersion, w.checkpointAt, w.turns] = [true, w.patchVersion + 1, p.at, w.turns + 1];
    }
  }
  if (w.kind === 'crash' && now >= w.crashAt && w.endedAt === null) [w.endedAt, w.endedAs] = [w.crashAt, 'failed'];
  const done = !['silent', 'stall', 'waits', 'crash'].includes(w.kind) && now >= w.doneAt && (w.endedAt === null || w.endedAt >= w.doneAt);
  if (done && w.turns === 0) {
    w.turns = 1;
    w.text = w.sections ? SECTIONS : 'I made the change.';
    if (w.endsAfterDone && w.endedAt === null) [w.endedAt, w.endedAs] = [w.doneAt + 1, 'completed'];
  }
  let checkpoint: Observation['checkpoint'] = { exists: false, mtimeMs: null, parse: null };
  if (w.kind !== 'silent' && now >= w.ackAt) {
    if (w.kind === 'stall') checkpoint = { exists: true, mtimeMs: w.ackAt, parse: cp('discovering', 'reading') };
    else if (w.kind === 'waits') checkpoint = { exists: true, mtimeMs: w.ackAt, parse: cp('waiting_for_feedback', 'which file?') };
    else if (done) checkpoint = { exists: true, mtimeMs: w.checkpointAt ?? w.doneAt, parse: cp('done', `finished v${w.patchVersion}`) };
    else {
      // Progress: a new status every second while alive (a crashed worker's last one stays).
      const last = Math.floor(Math.min(now, w.endedAt ?? now) / 1000) * 1000;
      checkpoint = { exists: true, mtimeMs: last, parse: cp('drafting_patch', `step ${last}`) };
    }
  }
  const hasPatch = done && w.kind !== 'no-diff';
  const files = w.kind === 'out-of-scope' ? ['a.txt', 'elsewhere.txt'] : ['a.txt'];
  const patch = hasPatch
    ? {
        exists: true,
        size: 100 + w.patchVersion,
        mtimeMs: w.doneAt,
        sha: `${slug}-${w.kind}-v${w.patchVersion}`,
        unified: w.kind !== 'bad-diff',
        files,
        by: 'worker' as const,
      }
    : noPatch;
  return { checkpoint, patch, lastTurn: w.turns ? { text: w.text, at: null } : null, turns: w.turns };
}

function newAttempt(r: TaskRecord, kind: Attempt['kind'], from: string, now: number): Attempt {
  const n = r.attempts.length + 1;
  const a = freshAttempt(r.task, {
    attempt: n,
    kind,
    mode: kind === 'takeover' ? 'direct-edit' : r.task.mode,
    agentId: `m.${r.task.slug}.a${n}`,
    workflowId: `agent-m.${r.task.slug}.a${n}`,
    diffBase: from,
    spawnedAt: now,
  });
  r.attempts.push(a);
  r.firstSpawnAt ??= now;
  r.state = 'spawned';
  return a;
}

interface Outcome {
  end: 'integrated' | 'failed' | 'awaiting-input' | 'open';
  at: number;
  attempts: number;
  goodSeen: boolean;
  reason: string | null;
  gaps: number;
  /** The most attempts live at once. */
  live: number;
  /** Whether an attempt missed the ack SLA or stalled and was kept on with a hedge. */
  hedged: boolean;
  /** The mesh's cap (free slots for this task's attempts). */
  cap: number;
}

/** Attempts the first edit target replaced, over all plays (the random behaviour must reach the rule). */
let firstEditMisses = 0;

/**
 * One task, played tick by tick until it ends (or a generous cut-off, which the test reports).
 * `hedgeBudget` over 1: the mesh's cap (its free slots) is random, from 1 to the budget + 1.
 */
function play(seed: number, behaviours: Kind[] | null = null, hedgeBudget = 1): { outcome: Outcome; t: Tunables } {
  const rand = prng(seed);
  const t = TunablesSchema.parse({
    tickInterval: `${1 + Math.floor(rand() * 5)}s`,
    stallThreshold: 2 + Math.floor(rand() * 3),
    ackSla: `${5 + Math.floor(rand() * 25)}s`,
    patchDraftTimeout: `${20 + Math.floor(rand() * 100)}s`,
    checkpointInterval: `${30 + Math.floor(rand() * 90)}s`,
    missingArtifactStrikes: Math.floor(rand() * 3),
    conflictBudget: Math.floor(rand() * 3),
    continueWaiting: rand() < 0.2,
    // Workers here show a draft only when done: a target shorter than that restarts them (the first
    // edit target). Workers restricted to good behaviour finish within both it and the timeout.
    firstEditTarget: `${behaviours ? 120 + Math.floor(rand() * 200) : 10 + Math.floor(rand() * 200)}s`,
    hedgeBudget,
  });
  const cap = hedgeBudget > 1 ? 1 + Math.floor(rand() * (hedgeBudget + 1)) : 1;
  const r = taskRecord(meshTask('patch-first', ['a.txt']), [], { state: 'queued', firstSpawnAt: null });
  const mesh = { conflicts: 0, conflictBudget: t.conflictBudget };
  const workers = new Map<string, Worker>();
  const spawn = (kind: Attempt['kind'], now: number) => workers.set(newAttempt(r, kind, 'base', now).agentId, newWorker(rand, t, now, behaviours));
  let now = 0;
  let goodSeen = false;
  let maxGap = 0;
  let maxLive = 1;
  spawn('worker', 0);
  const end = (kind: Outcome['end'], reason: string | null) => ({
    outcome: { end: kind, at: now, attempts: r.attempts.length, goodSeen, reason, gaps: maxGap, live: maxLive, hedged: r.attempts.some((x) => x.hedged), cap },
    t,
  });
  const tick = t.tickInterval as number;
  for (let i = 0; i < 20_000; i++) {
    const gap = rand() < 0.2 ? 1 + rand() * 50 : tick * (0.5 + rand());
    maxGap = Math.max(maxGap, gap);
    now += gap;
    const a = readyAttempt(r);
    if (a) {
      const w = workers.get(a.agentId)!;
      // The workflow's integrate(): the gated draft applies unless it conflicts (a rebased one applies).
      const res =
        a.gatedSha !== a.patchSha
          ? { applied: false as const, error: 'gate D: the patch draft changed after its gates passed', conflictingFiles: [], refused: true }
          : w.kind === 'conflict' && !w.rebased
            ? { applied: false as const, error: 'error: patch failed: a.txt:1', conflictingFiles: ['a.txt'] }
            : { applied: true as const, head: 'h', already: false };
      const out = integrationOutcome(r, a, res, mesh);
      if (out.kind === 'integrated') {
        // The hedges that lost are closed.
        for (const [x] of losers(r, a)) x.closed = true;
        return end('integrated', null);
      }
      if (out.kind === 'fail') {
        // Refused while a hedge runs: that attempt goes, the others carry on.
        if (liveAttempts(r).length > 1) a.closed = true;
        else {
          markFailed(r, out.reason);
          break;
        }
        continue;
      }
      if (out.kind === 'await-human') return end('awaiting-input', out.reason);
      // The rebase request: to the same agent while it runs, else to a new attempt (the workflow's sendRebase).
      if (a.agentEnded === null) {
        a.waitingFor = { what: 'rebase', sha: a.patchSha, ticks: 0 };
        a.draftNotBefore = now;
        w.pending.push({ at: now + rand() * t.patchDraftTimeout, what: 'rebase' });
      } else {
        a.closed = true;
        spawn(a.kind, now);
        workers.get(activeAttempt(r)!.agentId)!.rebased = true;
      }
      continue;
    }
    for (const a of liveAttempts(r)) {
      if (a.closed || a.ready || !isOpen(r)) continue;
      const w = workers.get(a.agentId)!;
      const o = observe(w, now, r.task.slug);
      if (w.endedAt !== null && w.endedAt <= now) a.agentEnded = w.endedAs ?? 'completed';
      a.patchSha = o.patch.sha;
      a.patchFiles = o.patch.files;
      // A diff passing D, P and S on a finished attempt: the task must not fail from here.
      if (o.checkpoint.parse?.ok && o.checkpoint.parse.checkpoint.statusCode === 'done' && (w.kind === 'good' || (w.kind === 'conflict' && w.rebased)))
        goodSeen = true;
      const acts = tickTask(r, a, o, now, t);
      firstEditMisses += acts.filter((x) => x.kind === 'replace' && x.reason.startsWith('first edit target missed')).length;
      for (const x of settleAttempt(r, a, acts, { budget: t.hedgeBudget, meshLive: liveAttempts(r).length, cap })) {
        if (x.kind === 'steer' && /^Your (final message|output)/.test(x.text)) w.pending.push({ at: now + rand() * 2 * stallAfterMs(t), what: 'reemit' });
        else if (x.kind === 'close') a.closed = true;
        else if (x.kind === 'spawn') spawn(x.attempt, now);
        else if (x.kind === 'fail') {
          for (const y of r.attempts) y.closed = true;
          markFailed(r, x.reason);
        }
      }
      maxLive = Math.max(maxLive, liveAttempts(r).length);
    }
    r.state = taskState(r);
    if (!isOpen(r)) break;
  }
  return end(isOpen(r) ? 'open' : 'failed', r.reason);
}

describe('mesh task policy over random worker behaviour', () => {
  test('every task ends within the stated bound, and no task with a diff passing D, P and S ends failed', () => {
    const ends = { integrated: 0, failed: 0, 'awaiting-input': 0, open: 0 };
    for (let seed = 1; seed <= 3000; seed++) {
      const { outcome: o, t } = play(seed);
      ends[o.end] += 1;
      const maxAttempts = 1 + MAX_RESTARTS + 1 + t.conflictBudget + 1;
      const perAttempt = t.ackSla + 2 * t.patchDraftTimeout + 3 * stallAfterMs(t) + 3 * o.gaps;
      const why = `seed ${seed}: ${JSON.stringify(o)}`;
      expect(o.end, why).not.toBe('open');
      expect(o.attempts, why).toBeLessThanOrEqual(maxAttempts);
      expect(o.at, why).toBeLessThanOrEqual(maxAttempts * perAttempt);
      if (o.goodSeen) expect(o.end, why).not.toBe('failed');
    }
    // The random behaviour reaches every ending.
    expect(ends.integrated).toBeGreaterThan(100);
    expect(ends.failed).toBeGreaterThan(100);
    expect(ends['awaiting-input']).toBeGreaterThan(10);
    expect(firstEditMisses).toBeGreaterThan(100);
  });

  test('workers that finish a good diff in time, in whatever words, ending their session or not: every task is integrated', () => {
    for (let seed = 1; seed <= 1000; seed++) {
      const { outcome: o } = play(10_000 + seed, ['good']);
      expect(o.end, `seed ${seed}: ${JSON.stringify(o)}`).toBe('integrated');
    }
  });

  test('hedge budgets 2 to 8: every task still ends within the same bound, never with more live attempts than the budget or the cap, and no good diff ends failed', () => {
    const ends = { integrated: 0, failed: 0, 'awaiting-input': 0, open: 0 };
    let hedged = 0;
    let several = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const budget = 2 + (seed % 7);
      const { outcome: o, t } = play(50_000 + seed, null, budget);
      ends[o.end] += 1;
      hedged += o.hedged ? 1 : 0;
      several += o.live > 1 ? 1 : 0;
      const maxAttempts = 1 + MAX_RESTARTS + 1 + t.conflictBudget + 1;
      const perAttempt = t.ackSla + 2 * t.patchDraftTimeout + 3 * stallAfterMs(t) + 3 * o.gaps;
      const why = `seed ${50_000 + seed} budget ${budget}: ${JSON.stringify(o)}`;
      expect(o.end, why).not.toBe('open');
      expect(o.attempts, why).toBeLessThanOrEqual(maxAttempts);
      expect(o.at, why).toBeLessThanOrEqual(maxAttempts * perAttempt);
      expect(o.live, why).toBeLessThanOrEqual(Math.min(budget, o.cap));
      if (o.goodSeen) expect(o.end, why).not.toBe('failed');
    }
    // Hedging happens, with several attempts live at once, and every ending is reached.
    expect(hedged).toBeGreaterThan(300);
    expect(several).toBeGreaterThan(300);
    expect(ends.integrated).toBeGreaterThan(100);
    expect(ends.failed).toBeGreaterThan(100);
    expect(ends['awaiting-input']).toBeGreaterThan(10);
  });

  test('hedge budget 2, workers that finish a good diff in time: every task is integrated', () => {
    for (let seed = 1; seed <= 1000; seed++) {
      const { outcome: o } = play(90_000 + seed, ['good'], 2);
      expect(o.end, `seed ${seed}: ${JSON.stringify(o)}`).toBe('integrated');
    }
  });
});
