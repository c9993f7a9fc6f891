/**
 * What a user reads names the behaviour, never an internal tracker: no "seed 003", "issue 12" or
 * "issue #12" in the README, the changelog, docs/, or the source (help text, messages and code
 * comments) of src/, workflows/ and activities/. A link to a public upstream issue cited as a
 * source is the one exception: the line carries the issue's URL.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const INTERNAL = /seed 0\d\d|\bseed's\b|issue \d+|issue #\d+/i;
/** A line that cites a public upstream issue by its URL may name it. */
const CITES_PUBLIC_ISSUE = /https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/issues\/\d+/;
const TEXT = /\.(ts|tsx|js|mjs|md|json|yaml|yml|txt)$/;

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full, { throwIfNoEntry: false })) return [];
  if (statSync(full).isFile()) return [full];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && TEXT.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

function internalReferences(paths: string[]): string[] {
  const hits: string[] = [];
  for (const file of paths.flatMap(files)) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const m = INTERNAL.exec(line);
        if (m && !CITES_PUBLIC_ISSUE.test(line)) hits.push(`${relative(ROOT, file)}:${i + 1}: ${m[0]}`);
      });
  }
  return hits;
}

test('no internal tracker references in the README, CHANGELOG, docs/ and the source a user reads', () => {
  expect(internalReferences(['README.md', 'CHANGELOG.md', 'docs', 'src', 'workflows', 'activities'])).toEqual([]);
});

test('the check finds each form, and lets a cited upstream issue URL through', () => {
  const lines = ["Defaults are the seed's: cap 4", 'as seed 003 says', 'see issue 12', 'fixed in Issue #7', 'see the issues list'];
  expect(lines.map((l) => INTERNAL.test(l))).toEqual([true, true, true, true, false]);
  expect(CITES_PUBLIC_ISSUE.test('a known bug (issue 1234: https://github.com/temporalio/sdk-core/issues/1234)')).toBe(true);
});
