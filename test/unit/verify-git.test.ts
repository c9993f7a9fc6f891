/**
 * Reading the protected paths runs none of the repository's own code: a clean filter configured
 * in the repository's git config (and named by its .gitattributes), a textconv driver and an
 * external diff are all off in warden's git. Real git on a temporary repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { readProtected } from '../../activities/verify.js';

const dir = mkdtempSync(join(tmpdir(), 'warden-verify-git-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });

test("protected paths are read without running the tree's filter, textconv or external diff", async () => {
  git('init', '-q');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  mkdirSync(join(dir, 'test'));
  writeFileSync(join(dir, 'test', 'a.test.js'), 'expect(1).toBe(1);\nexpect(2).toBe(2);\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  const base = git('rev-parse', 'HEAD').trim();
  // The agent's tree now sets up its own drivers, each of which would leave a marker if run.
  const marker = (n: string) => join(dir, `${n}.ran`);
  git('config', 'filter.evil.clean', `sh -c 'touch ${marker('clean')}; cat'`);
  git('config', 'diff.evil.textconv', `sh -c 'touch ${marker('textconv')}; cat "$0"'`);
  git('config', 'diff.external', `sh -c 'touch ${marker('external')}'`);
  writeFileSync(join(dir, '.gitattributes'), '*.js filter=evil diff=evil\n');
  writeFileSync(join(dir, 'test', 'a.test.js'), 'expect(1).toBe(1);\n');

  const out = await readProtected(dir, { agentId: 'a', driven: false, protect: ['test/**'], baseCommit: base });
  expect(out.protectedError).toBeUndefined();
  expect(out.protectedChanges.map((c) => c.path)).toEqual(['test/a.test.js']);
  for (const n of ['clean', 'textconv', 'external']) expect(existsSync(marker(n)), `${n} driver ran`).toBe(false);

  // The probe can fail: plain git on the same tree runs the drivers.
  git('diff');
  expect(existsSync(marker('external'))).toBe(true);
  git('add', '-A');
  expect(existsSync(marker('clean'))).toBe(true);
});

test('deleted protected files and new untracked ones are both read; ignored and unprotected files are not', async () => {
  const d = mkdtempSync(join(tmpdir(), 'warden-verify-untracked-'));
  try {
    const g = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
        cwd: d,
        encoding: 'utf8',
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
      });
    g('init', '-q');
    mkdirSync(join(d, 'test'));
    mkdirSync(join(d, 'src'));
    writeFileSync(join(d, 'test', 'old.test.js'), 'expect(1).toBe(1);\nexpect(2).toBe(2);\n');
    writeFileSync(join(d, '.gitignore'), 'test/ignored.js\n');
    g('add', '-A');
    g('commit', '-q', '-m', 'start');
    const base = g('rev-parse', 'HEAD').trim();
    rmSync(join(d, 'test', 'old.test.js'));
    writeFileSync(join(d, 'test', 'new.test.js'), 'it("x", () => {\n  expect(true).toBe(true);\n});\n');
    writeFileSync(join(d, 'test', 'ignored.js'), 'expect(0);\n');
    writeFileSync(join(d, 'src', 'free.js'), 'x\n');
    // From a subdirectory of the repository, paths are still from its root.
    const out = await readProtected(join(d, 'src'), { agentId: 'a', driven: false, protect: ['test/**'], baseCommit: base });
    expect(out.protectedError).toBeUndefined();
    expect(out.protectedChanges).toEqual([
      { path: 'test/new.test.js', status: 'A', added: 3, deleted: 0, assertionsRemoved: 0, assertionsAdded: 1 },
      { path: 'test/old.test.js', status: 'D', added: 0, deleted: 2, assertionsRemoved: 2, assertionsAdded: 0 },
    ]);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
