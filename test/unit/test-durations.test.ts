import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { longestFirst, readDurations } from '../vitest/durations.js';

test('files start longest first; a file with no duration counts as the longest; ties by name', () => {
  const d = { 'a.test.ts': 5, 'b.test.ts': 50, 'c.test.ts': 5 };
  expect(longestFirst(['c.test.ts', 'a.test.ts', 'new.test.ts', 'b.test.ts'], (f) => f, d)).toEqual(['b.test.ts', 'new.test.ts', 'a.test.ts', 'c.test.ts']);
  expect(longestFirst(['b', 'a'], (f) => f, {})).toEqual(['a', 'b']);
});

test('the durations file: numbers kept, anything else dropped; a missing or broken file is none', () => {
  const dir = mkdtempSync(join(tmpdir(), 'durations-'));
  const file = join(dir, 'd.json');
  writeFileSync(file, JSON.stringify({ 'x.test.ts': 12, 'y.test.ts': 'slow', 'z.test.ts': null }));
  expect(readDurations(file)).toEqual({ 'x.test.ts': 12 });
  writeFileSync(file, '{ not json');
  expect(readDurations(file)).toEqual({});
  expect(readDurations(join(dir, 'missing.json'))).toEqual({});
});

test('the committed durations name test files that exist', () => {
  const d = readDurations();
  expect(Object.keys(d).length).toBeGreaterThan(100);
  for (const f of Object.keys(d)) expect(f).toMatch(/^test\/(unit|integration)\/.+\.test\.ts$/);
});
