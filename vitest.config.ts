import { defineConfig } from 'vitest/config';

// Integration tests start real Temporal dev servers and processes: one file at a time, in forks.
export default defineConfig({
  test: {
    pool: 'forks',
    fileParallelism: false,
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
