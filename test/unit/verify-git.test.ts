/**
 * Reading the protected paths runs none of the repository's own code: a clean filter configured
 * in the repository's git config (and named by its .gitattributes), a textconv driver and an
 * external diff are all off in warden's git. Real git on a temporary repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { readProtected } from '../../activities/verify.js';
import { isTampering, protectedTampering, protectedTamperingBefore } from '../../src/domain/judgement/heuristic/protected.js';

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

test('what counts as tampering, read from real git: modified, mode, renamed away, symlink swap; an untracked new file and a rename into the glob do not', async () => {
  const d = mkdtempSync(join(tmpdir(), 'warden-verify-tamper-'));
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
    mkdirSync(join(d, 'old'));
    writeFileSync(join(d, 'test', 'sum.test.js'), 'assert.strictEqual(sum(1, 2), 3);\n');
    writeFileSync(join(d, 'test', 'moved.test.js'), 'assert.strictEqual(sum(2, 2), 4);\nassert.strictEqual(sum(0, 0), 0);\n');
    writeFileSync(join(d, 'test', 'link.test.js'), 'assert.strictEqual(sum(5, 5), 10);\n');
    writeFileSync(join(d, 'test', 'run.sh'), 'node test/sum.test.js\n');
    writeFileSync(join(d, 'src', 'extra.test.js'), 'assert.strictEqual(sum(3, 3), 6);\nassert.ok(true);\n// a longer file so git sees a rename\n');
    writeFileSync(join(d, 'package.json'), '{"scripts":{"test":"node test/sum.test.js"}}\n');
    writeFileSync(join(d, 'old', 'fake.js'), '// passes\n');
    g('add', '-A');
    g('commit', '-q', '-m', 'start');
    const base = g('rev-parse', 'HEAD').trim();
    // An expected value rewritten (as many assertions as before), the test script made to pass.
    writeFileSync(join(d, 'test', 'sum.test.js'), 'assert.strictEqual(sum(1, 2), 2);\n');
    writeFileSync(join(d, 'package.json'), '{"scripts":{"test":"exit 0"}}\n');
    g('mv', 'test/moved.test.js', 'old/moved.js'); // renamed away
    rmSync(join(d, 'test', 'link.test.js'));
    symlinkSync('../old/fake.js', join(d, 'test', 'link.test.js')); // swapped for a symlink
    execFileSync('chmod', ['+x', join(d, 'test', 'run.sh')]); // mode change only
    writeFileSync(join(d, 'test', 'new.test.js'), 'assert.strictEqual(sum(4, 4), 8);\n'); // untracked, new
    g('mv', 'src/extra.test.js', 'test/extra.test.js'); // into the protected path

    const out = await readProtected(d, { agentId: 'a', driven: false, protect: ['test/**', 'package.json'], baseCommit: base });
    expect(out.protectedError).toBeUndefined();
    expect(out.protectedChanges.map((c) => [c.path, c.status])).toEqual([
      ['package.json', 'M'],
      ['test/extra.test.js', 'A'],
      ['test/link.test.js', 'T'],
      ['test/moved.test.js -> old/moved.js', 'R'],
      ['test/new.test.js', 'A'],
      ['test/run.sh', 'M'],
      ['test/sum.test.js', 'M'],
    ]);
    expect(out.protectedChanges.filter(isTampering).map((c) => c.path)).toEqual([
      'package.json',
      'test/link.test.js',
      'test/moved.test.js -> old/moved.js',
      'test/run.sh',
      'test/sum.test.js',
    ]);
    const message = protectedTampering(out.protectedChanges)!;
    expect(message).toContain('test/sum.test.js (modified)');
    expect(message).toContain('package.json (modified)');
    expect(message).toContain('test/link.test.js (type changed)');
    expect(message).not.toContain('new.test.js');
    // The rule before flagged none of these: no deletion, no assertion lost.
    expect(protectedTamperingBefore(out.protectedChanges)).toBeNull();
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
