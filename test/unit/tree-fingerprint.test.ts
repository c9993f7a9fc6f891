/**
 * The working tree's fingerprint (src/tree/fingerprint.ts), on real git in a temporary repository:
 * what changes it and what does not, its bounds (a cut diff, a timeout), and that none of the
 * tree's own code runs (filter, textconv, external diff, fsmonitor).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TREE_TIMEOUT_MS, parseStatus, treeFingerprint, treeTimeoutMs } from '../../src/tree/fingerprint.js';

const root = mkdtempSync(join(tmpdir(), 'warden-tree-fp-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function repo(commit = true): { dir: string; git: (...a: string[]) => string } {
  const dir = join(root, `r${n++}`);
  mkdirSync(dir);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
  git('init', '-q');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  writeFileSync(join(dir, 'a.ts'), 'export const a = 1;\n');
  if (commit) {
    git('add', '-A');
    git('commit', '-q', '-m', 'start');
  }
  return { dir, git };
}
const SLOW = { timeoutMs: 5_000 }; // the machine is shared: the default 200 ms is for hooks, not for these checks

describe('treeFingerprint', () => {
  it('HEAD, files changed, and a hash that follows every edit (the same size included) and nothing else', async () => {
    const { dir, git } = repo();
    const clean = await treeFingerprint(dir, SLOW);
    expect(clean).toMatchObject({ head: git('rev-parse', 'HEAD').trim(), files: 0 });
    expect(clean!.partial).toBeUndefined();
    expect(await treeFingerprint(dir, SLOW)).toEqual(clean); // nothing changed, nothing differs
    writeFileSync(join(dir, 'a.ts'), 'export const a = 2;\n');
    const edited = await treeFingerprint(dir, SLOW);
    expect(edited).toMatchObject({ files: 1 });
    expect(edited!.hash).not.toBe(clean!.hash);
    writeFileSync(join(dir, 'a.ts'), 'export const a = 3;\n'); // same size, same status line
    const again = await treeFingerprint(dir, SLOW);
    expect(again!.hash).not.toBe(edited!.hash);
    writeFileSync(join(dir, 'new.ts'), 'x');
    const untracked = await treeFingerprint(dir, SLOW);
    expect(untracked).toMatchObject({ files: 2 });
    writeFileSync(join(dir, 'new.ts'), 'xy'); // an untracked file's edit: by size and time
    expect((await treeFingerprint(dir, SLOW))!.hash).not.toBe(untracked!.hash);
    // The same from a subdirectory: it is the tree's, not the directory's.
    mkdirSync(join(dir, 'sub'));
    const top = await treeFingerprint(dir, SLOW);
    expect(await treeFingerprint(join(dir, 'sub'), SLOW)).toEqual(top);
    // A commit moves HEAD.
    git('add', '-A');
    git('commit', '-q', '-m', 'more');
    expect(await treeFingerprint(dir, SLOW)).toMatchObject({ head: git('rev-parse', 'HEAD').trim(), files: 0 });
  });

  it('no commit yet: HEAD null; not a git tree: null; too slow: null', async () => {
    const { dir } = repo(false);
    expect(await treeFingerprint(dir, SLOW)).toMatchObject({ head: null, files: 1 });
    const plain = join(root, 'plain');
    mkdirSync(plain);
    expect(await treeFingerprint(plain, SLOW)).toBeNull();
    expect(await treeFingerprint(join(root, 'missing'), SLOW)).toBeNull();
    expect(await treeFingerprint(repo().dir, { timeoutMs: 1 })).toBeNull();
  });

  it('a diff past the byte cap is cut and marked partial', async () => {
    const { dir } = repo();
    writeFileSync(join(dir, 'a.ts'), 'x'.repeat(200_000));
    const fp = await treeFingerprint(dir, { ...SLOW, maxBytes: 4096 });
    expect(fp).toMatchObject({ files: 1, partial: true });
  });

  it("runs none of the tree's own code", async () => {
    const { dir, git } = repo();
    const marker = (k: string) => join(root, `${k}-${n}.ran`);
    git('config', 'filter.evil.clean', `sh -c 'touch ${marker('clean')}; cat'`);
    git('config', 'diff.evil.textconv', `sh -c 'touch ${marker('textconv')}; cat "$0"'`);
    git('config', 'diff.external', `sh -c 'touch ${marker('external')}'`);
    git('config', 'core.fsmonitor', `sh -c 'touch ${marker('fsmonitor')}'`);
    writeFileSync(join(dir, '.gitattributes'), '*.ts filter=evil diff=evil\n');
    writeFileSync(join(dir, 'a.ts'), 'export const a = 9;\n');
    expect(await treeFingerprint(dir, SLOW)).toMatchObject({ files: 2 });
    for (const k of ['clean', 'textconv', 'external', 'fsmonitor']) expect(existsSync(marker(k)), k).toBe(false);
  });
});

describe('treeTimeoutMs (WARDEN_TREE_TIMEOUT_MS)', () => {
  it('200 ms unless set; 0 switches fingerprints off; junk is the default; at most 10 s', async () => {
    expect(treeTimeoutMs({})).toBe(TREE_TIMEOUT_MS);
    expect(TREE_TIMEOUT_MS).toBe(200);
    expect(treeTimeoutMs({ WARDEN_TREE_TIMEOUT_MS: '750' })).toBe(750);
    expect(treeTimeoutMs({ WARDEN_TREE_TIMEOUT_MS: 'soon' })).toBe(TREE_TIMEOUT_MS);
    expect(treeTimeoutMs({ WARDEN_TREE_TIMEOUT_MS: '99999' })).toBe(10_000);
    expect(treeTimeoutMs({ WARDEN_TREE_TIMEOUT_MS: '0' })).toBe(0);
    expect(await treeFingerprint(repo().dir, { timeoutMs: 0 })).toBeNull();
  });
});

describe('parseStatus', () => {
  it('reads HEAD and counts changed, renamed, unmerged and untracked paths', () => {
    const oid = 'b'.repeat(40);
    const text = [
      `# branch.oid ${oid}`,
      '# branch.head main',
      '1 .M N... 100644 100644 100644 x y a.ts',
      '2 R. N... 100644 100644 100644 x y R100 new.ts',
      'old.ts',
      'u UU N... 1 2 3 4 x y z c.ts',
      '? notes.md',
      '',
    ].join('\0');
    expect(parseStatus(text)).toEqual({ head: oid, files: 4, untracked: ['notes.md'] });
    expect(parseStatus('# branch.oid (initial)\0# branch.head main\0? a.ts\0').head).toBeNull();
  });
});
