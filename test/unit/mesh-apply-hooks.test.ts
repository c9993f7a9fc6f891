/**
 * What `mesh apply` refuses to merge (activities/mesh/index.ts hookOrConfigChanges): a change under
 * the configured core.hooksPath when it lies in the work tree (or to a parent of it), or to a config
 * file git reads from the work tree (include.path). Real git on temporary repositories.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { hookOrConfigChanges } from '../../activities/mesh/index.js';

/** A repository on main with `files`, and a branch `work` that changes `change` from it. */
function repo(files: Record<string, string>, change: Record<string, string>, config: string[][] = []): { dir: string; head: string } {
  const dir = mkdtempSync(join(tmpdir(), 'warden-apply-hooks-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  for (const [k, v] of [['user.name', 't'], ['user.email', 't@example.com'], ['commit.gpgSign', 'false'], ...config]) git('config', k!, v!);
  const put = (fs: Record<string, string>) => {
    for (const [f, text] of Object.entries(fs)) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), text);
    }
  };
  put(files);
  git('add', '-A');
  git('commit', '-qm', 'base');
  git('checkout', '-qb', 'work');
  put(change);
  git('add', '-A');
  git('commit', '-qm', 'change', '--no-verify');
  const head = git('rev-parse', 'HEAD');
  git('checkout', '-q', 'main');
  return { dir, head };
}

test('a change under the hooks path in the work tree is named; other changes are not', async () => {
  const hooked = repo({ 'a.txt': 'a\n' }, { 'a.txt': 'A\n', '.githooks/pre-merge-commit': '#!/bin/sh\n' }, [['core.hooksPath', '.githooks']]);
  expect(await hookOrConfigChanges(hooked.dir, hooked.head)).toBe('.githooks/pre-merge-commit (the hooks path (core.hooksPath=.githooks))');
  const plain = repo({ 'a.txt': 'a\n' }, { 'a.txt': 'A\n', 'tools/hooks/x': 'y\n' }, [['core.hooksPath', 'tools/hooks/git']]);
  expect(await hookOrConfigChanges(plain.dir, plain.head)).toBeNull(); // tools/hooks/x is beside tools/hooks/git, not under it
});

test('a file that replaces a parent of the hooks path is named', async () => {
  const r = repo({ 'a.txt': 'a\n' }, { tools: 'now a file\n' }, [['core.hooksPath', 'tools/hooks']]);
  expect(await hookOrConfigChanges(r.dir, r.head)).toBe('tools (the hooks path (core.hooksPath=tools/hooks))');
});

test('a hooks path outside the work tree, or none, guards nothing', async () => {
  const outside = repo({ 'a.txt': 'a\n' }, { '.githooks/pre-commit': '#!/bin/sh\n' }, [['core.hooksPath', join(tmpdir(), 'elsewhere-hooks')]]);
  expect(await hookOrConfigChanges(outside.dir, outside.head)).toBeNull();
  const none = repo({ 'a.txt': 'a\n' }, { '.githooks/pre-commit': '#!/bin/sh\n' });
  expect(await hookOrConfigChanges(none.dir, none.head)).toBeNull();
});

test('a config file git reads from the work tree (include.path) is named', async () => {
  const r = repo({ 'team.gitconfig': '[core]\n\tautocrlf = false\n' }, { 'team.gitconfig': '[core]\n\thooksPath = evil\n' }, [
    ['include.path', '../team.gitconfig'],
  ]);
  expect(await hookOrConfigChanges(r.dir, r.head)).toBe('team.gitconfig (a git config file in the work tree)');
});
