/**
 * The stall rule over random tick timings (a seeded PRNG, so a failure reproduces): a worker whose
 * checkpoint changes at least every X seconds (X no more than the stall time) is never declared
 * stalled, however the ticks fall (regular ticks, wake-up ticks milliseconds apart, long gaps while
 * no warden worker ran); a silent worker is declared stalled at the first tick once the stall time
 * has passed since a tick saw its last change, and never before.
 */
import { describe, expect, test } from 'vitest';
import { TunablesSchema } from '../../src/domain/mesh/config.js';
import { stallAfterMs, tickAttempt, type Observation } from '../../src/domain/mesh/rules.js';
import { prng, record } from '../helpers/mesh-fixtures.js';

const checkpointAt = (detail: string, mtimeMs: number, withPatch: boolean): Observation => ({
  checkpoint: {
    exists: true,
    mtimeMs,
    parse: {
      ok: true,
      checkpoint: { statusCode: 'drafting_patch', statusDetail: detail, plan: ['a', 'b', 'c'], intendedFiles: ['a'], blockers: [], artifacts: [] },
    },
  },
  patch: withPatch
    ? { exists: true, size: 10, mtimeMs: 1, sha: 'p1', unified: true, files: ['a'], by: 'worker' }
    : { exists: false, size: 0, mtimeMs: null, sha: null, unified: false, files: [], by: null },
  lastTurn: null,
  turns: null,
});

/** The index of the last change at or before `now`. */
const lastAtOrBefore = (changes: number[], now: number) => changes.filter((c) => c <= now).length - 1;

/** Tick times from 0 to `until`: mostly regular, some wake-ups a few ms after a tick, some long gaps (a dead warden worker). */
function tickTimes(rand: () => number, tick: number, until: number): number[] {
  const out: number[] = [];
  for (let at = rand() * tick; at < until; ) {
    out.push(Math.round(at));
    const r = rand();
    at += r < 0.3 ? 1 + rand() * 50 : r < 0.9 ? tick * (0.5 + rand()) : tick * (2 + rand() * 20);
  }
  return out;
}

describe('stall rule over random tick timings', () => {
  test('a worker whose checkpoint changes at least every X seconds is never stalled', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = prng(seed);
      const t = TunablesSchema.parse({
        tickInterval: `${1 + Math.floor(rand() * 5)}s`,
        stallThreshold: 2 + Math.floor(rand() * 4),
        ackSla: '30s',
        checkpointInterval: '10m',
        patchDraftTimeout: '1h',
      });
      const stall = stallAfterMs(t);
      const every = Math.max(1, Math.round(stall * (0.05 + rand() * 0.95))); // X ≤ the stall time
      // The worker writes a new status at 0, then each time within `every` ms of the last.
      const changes = [0];
      while (changes.at(-1)! < 600_000) changes.push(changes.at(-1)! + 1 + Math.floor(rand() * every));
      const { task, a } = record();
      const withPatch = rand() < 0.5; // an unchanged patch draft beside a moving status is not a stall
      for (const now of tickTimes(rand, t.tickInterval as number, 600_000)) {
        const k = lastAtOrBefore(changes, now);
        const act = tickAttempt(task, a, checkpointAt(`step ${k}`, changes[k]!, withPatch), now, t);
        expect(act.kind, `seed ${seed} at ${now}ms: ${JSON.stringify(act)}`).not.toMatch(/^(restart|takeover|fail)$/);
      }
    }
  });

  test('a silent worker is stalled at the first tick once the stall time has passed, and not before', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = prng(1000 + seed);
      const t = TunablesSchema.parse({
        tickInterval: `${1 + Math.floor(rand() * 5)}s`,
        stallThreshold: 2 + Math.floor(rand() * 4),
        ackSla: '30s',
        checkpointInterval: '10m',
        patchDraftTimeout: '1h',
      });
      const stall = stallAfterMs(t);
      // It works for a while (changes), then goes silent at `silentFrom` and never writes again.
      const silentFrom = Math.floor(rand() * 60_000);
      const changes = [0];
      while (changes.at(-1)! + 1000 <= silentFrom) changes.push(changes.at(-1)! + 1000);
      const { task, a } = record();
      let seenLast: number | null = null; // the first tick that saw the last status
      let stalledAt: number | null = null;
      for (const now of tickTimes(rand, t.tickInterval as number, silentFrom + 100 * stall)) {
        const k = lastAtOrBefore(changes, now);
        if (k === changes.length - 1) seenLast ??= now;
        const act = tickAttempt(task, a, checkpointAt(`step ${k}`, changes[k]!, false), now, t);
        if (act.kind === 'restart') {
          stalledAt = now;
          expect(act).toMatchObject({ event: expect.stringMatching(/^STALL DETECTED: no progress for/) });
          break;
        }
        expect(act.kind, `seed ${seed} at ${now}ms`).toBe('none');
        // Not stalled yet: the stall time since the tick that saw the last change has not passed.
        expect(
          seenLast === null || now - seenLast < stall,
          `seed ${seed}: not stalled at ${now}ms (last change seen at ${seenLast}ms, stall time ${stall}ms)`,
        ).toBe(true);
      }
      expect(stalledAt, `seed ${seed}`).not.toBeNull();
      // Never before the stall time has passed since the worker's last write.
      expect(stalledAt! - changes.at(-1)!).toBeGreaterThanOrEqual(stall);
      expect(stalledAt! - seenLast!).toBeGreaterThanOrEqual(stall);
    }
  });
});
