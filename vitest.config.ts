import { defineConfig } from 'vitest/config';
import { DurationSequencer } from './test/vitest/durations.js';

/**
 * Two groups, one after the other (sequence.groupOrder):
 * - unit: pure logic, files in parallel;
 * - integration: each file owns its Temporal dev server, worker, ports (free ones), SQLite files and
 *   WARDEN_HOME, so files run side by side: WARDEN_TEST_WORKERS of them (default 3; on two cores
 *   most of a file's time is spent waiting on servers, processes and timers). No file needs to run
 *   alone today; one that does would get a third group with `fileParallelism: false`.
 * Files start longest first (test/durations.json); the run writes test-results/durations.json and
 * prints its slowest 15 files.
 */
const workers = Number(process.env.WARDEN_TEST_WORKERS ?? 3);
const shared = { testTimeout: 120_000, hookTimeout: 120_000, pool: 'forks' } as const;

export default defineConfig({
  test: {
    reporters: ['default', './test/vitest/durations.ts'],
    projects: [
      { test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'], sequence: { sequencer: DurationSequencer, groupOrder: 0 } } },
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          maxWorkers: workers,
          sequence: { sequencer: DurationSequencer, groupOrder: 1 },
        },
      },
    ],
  },
});
