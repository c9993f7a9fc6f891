/**
 * Per-file durations of a test run. The reporter writes them to test-results/durations.json
 * (milliseconds, slowest first) and prints the slowest 15 at the end of the run, so a slow file has a
 * number; the sequencer starts files longest-first from the committed copy test/durations.json, so
 * the long files do not start last and leave one worker running alone at the end.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

const ROOT = join(import.meta.dirname, '../..');
export const COMMITTED = join(ROOT, 'test/durations.json');
export const WRITTEN = join(ROOT, 'test-results/durations.json');
const SHOWN = 15;

/** { "test/integration/x.test.ts": ms }: the committed durations, or none. */
export function readDurations(file = COMMITTED): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!parsed || typeof parsed !== 'object') return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number'));
  } catch {
    return {};
  }
}

/** Files longest first; a file with no committed duration counts as long (it may be). */
export function longestFirst<T>(items: T[], fileOf: (t: T) => string, durations: Record<string, number>): T[] {
  const unknown = Math.max(0, ...Object.values(durations));
  const of = (t: T) => durations[fileOf(t)] ?? unknown;
  return [...items].sort((a, b) => of(b) - of(a) || fileOf(a).localeCompare(fileOf(b)));
}

export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return longestFirst(files, (f) => relative(ROOT, f.moduleId), readDurations());
  }
}

export default class DurationReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules.map((m) => [relative(ROOT, m.moduleId), Math.round(m.diagnostic().duration)] as const).sort((a, b) => b[1] - a[1]);
    if (!rows.length) return;
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    writeFileSync(WRITTEN, `${JSON.stringify(Object.fromEntries(rows), null, 1)}\n`);
    const lines = rows.slice(0, SHOWN).map(([f, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${f}`);
    process.stdout.write(`\nslowest ${Math.min(SHOWN, rows.length)} of ${rows.length} test files (all in ${relative(ROOT, WRITTEN)}):\n${lines.join('\n')}\n`);
  }
}
