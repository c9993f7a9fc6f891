/**
 * Cost of one heuristic evaluation: the offline evaluator (heuristicVerdict, every detector) on
 * the real-trajectory windows of test/cases/real/cases.jsonl, each window cut to its last 20 turns
 * (warden's default window).
 *
 *   node dist/bench/heuristic.js [--rounds 5] [--cases test/cases/real/cases.jsonl]
 *
 * One warm-up pass over every window, then `--rounds` timed passes; each window's time is the
 * median of its rounds. Prints one JSON object: windows, rounds, the median and p90 and max of the
 * per-window times in ms, the same over the windows that hold a full 20 turns, and the machine
 * (cpus, load average). Exit 0 ok, 1 failure, 2 bad usage.
 * No Temporal, no network.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { heuristicVerdict } from '../src/domain/judgement/heuristic/index.js';
import { parseCases } from '../src/domain/judgement/scoring.js';
import { round, wholeArg } from './common.js';

const WINDOW = 20;

function options(argv: string[]): { rounds: number; cases: string } {
  const { values: v } = parseArgs({ args: argv, options: { rounds: { type: 'string' }, cases: { type: 'string' } } });
  return {
    rounds: v.rounds === undefined ? 5 : wholeArg('--rounds', v.rounds, 1, 100),
    cases: v.cases ?? join(import.meta.dirname, '../../test/cases/real/cases.jsonl'),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const nearestRank = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]!;
};

function main(): number {
  let o: ReturnType<typeof options>;
  try {
    o = options(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`heuristic: ${(err as Error).message}\nusage: node dist/bench/heuristic.js [--rounds N] [--cases FILE.jsonl]\n`);
    return 2;
  }
  try {
    const windows = parseCases(readFileSync(o.cases, 'utf8')).map((c) => ({
      task: c.task,
      turns: c.turns.slice(-WINDOW),
      reason: c.reason ?? ('interval' as const),
    }));
    for (const w of windows) heuristicVerdict(w); // warm-up
    const times: number[][] = windows.map(() => []);
    for (let r = 0; r < o.rounds; r++)
      windows.forEach((w, i) => {
        const t0 = performance.now();
        heuristicVerdict(w);
        times[i]!.push(performance.now() - t0);
      });
    const perWindow = times.map(median);
    const full = perWindow.filter((_, i) => windows[i]!.turns.length === WINDOW);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'heuristic',
        windows: windows.length,
        turnsPerWindow: { max: WINDOW, mean: round(windows.reduce((n, w) => n + w.turns.length, 0) / windows.length) },
        rounds: o.rounds,
        msPerWindow: { p50: round(median(perWindow), 3), p90: round(nearestRank(perWindow, 90), 3), max: round(Math.max(...perWindow), 3) },
        fullWindows: full.length,
        msPer20TurnWindow: full.length ? { p50: round(median(full), 3), p90: round(nearestRank(full, 90), 3), max: round(Math.max(...full), 3) } : null,
        node: process.version,
        cpus: cpus().length,
        loadavg1m: round(loadavg()[0]!),
      })}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`heuristic: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}

process.exit(main());
