/**
 * git for the mesh, as a tool on untrusted trees: everything a mesh worker writes (its worktree, its
 * patch draft) is treated as hostile. Every call here runs git
 *  - with hooks off (`core.hooksPath=/dev/null`), no fsmonitor, no external diff, no filter drivers
 *    (every `filter.<driver>` configured anywhere is emptied with `-c`), no commit signing;
 *  - with the operator-allowed environment only (subprocessEnv) plus the GIT_ variables set here,
 *    no system config (GIT_CONFIG_NOSYSTEM) and no system attributes;
 *  - on worktrees by warden's own admin directory: `--git-dir=<repo>/.git/worktrees/<name>` and
 *    `--work-tree=<dir>`, so a worktree's `.git` file (which its worker can replace) is never read.
 * Only `userGit` (for `mesh apply`, in the user's own checkout) runs with the user's hooks.
 */
import { execa } from 'execa';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { subprocessEnv } from '../../src/config/worker.js';

export interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  /** The output went past `maxBuffer` (the call was stopped). */
  overflow?: boolean;
}

/** Where git runs: a directory, and for a worktree warden made, its admin dir and work tree. */
export interface GitPlace {
  cwd: string;
  gitDir?: string;
  workTree?: string;
}

export interface GitOpts {
  env?: Record<string, string>;
  input?: string | Buffer;
  /** Bytes of stdout past which the call is stopped and reported as `overflow`. */
  maxBuffer?: number;
  /** Kill git after this many milliseconds (reported as a failure). */
  timeoutMs?: number;
}

/** Config that makes git run nothing of a tree's own: hooks, fsmonitor, external diff, signing. */
export const HARDENING: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'diff.external=',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'core.sshCommand=',
  'protocol.allow=never',
].flatMap((c) => ['-c', c]);

/** The environment of warden's git: the operator-allowed one, no system config or attributes, no prompts or pager. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return subprocessEnv({
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    ...extra,
  });
}

const placeArgs = (p: GitPlace) => [...(p.gitDir ? [`--git-dir=${p.gitDir}`] : []), ...(p.workTree ? [`--work-tree=${p.workTree}`] : [])];

async function run(p: GitPlace, args: string[], opts: GitOpts): Promise<GitResult> {
  const r = await execa('git', args, {
    cwd: p.cwd,
    reject: false,
    stdin: opts.input === undefined ? 'ignore' : 'pipe',
    ...(opts.input !== undefined ? { input: opts.input } : {}),
    extendEnv: false,
    env: gitEnv(opts.env),
    stripFinalNewline: false,
    maxBuffer: opts.maxBuffer ?? 64 * 1024 * 1024,
    ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
  });
  const overflow = (r as { isMaxBuffer?: boolean }).isMaxBuffer === true || /maxBuffer exceeded/i.test(String((r as { message?: string }).message ?? ''));
  return {
    ok: r.exitCode === 0 && !overflow,
    stdout: String(r.stdout ?? ''),
    stderr: String(r.stderr ?? ''),
    exitCode: r.exitCode ?? null,
    ...(overflow ? { overflow } : {}),
  };
}

/** The `-c filter.<driver>.*=` that empty every filter driver configured for this place (clean, smudge, process). */
async function filterOverrides(p: GitPlace): Promise<string[]> {
  const r = await run(p, [...HARDENING, ...placeArgs(p), 'config', '--null', '--name-only', '--get-regexp', '^filter\\.'], {});
  const drivers = new Set<string>();
  for (const name of r.stdout.split('\0')) {
    const m = /^filter\.(.+)\.[^.]+$/s.exec(name);
    if (m) drivers.add(m[1]!);
  }
  return [...drivers].flatMap((d) => ['clean', 'smudge', 'process'].flatMap((k) => ['-c', `filter.${d}.${k}=`]).concat(['-c', `filter.${d}.required=false`]));
}

/** Hardened git (see the file comment); never throws for a non-zero exit (callers decide). */
export async function git(place: string | GitPlace, args: string[], opts: GitOpts = {}): Promise<GitResult> {
  const p = typeof place === 'string' ? { cwd: place } : place;
  return run(p, [...HARDENING, ...(await filterOverrides(p)), ...placeArgs(p), ...args], opts);
}

/** Like git(), but a failure throws with git's stderr. */
export async function gitOk(place: string | GitPlace, args: string[], opts: GitOpts = {}): Promise<string> {
  const r = await git(place, args, opts);
  if (!r.ok)
    throw new Error(`git ${args.join(' ')} failed (exit ${r.exitCode}): ${r.overflow ? 'output over its budget' : r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout.trim();
}

/**
 * git in the user's own checkout, for `mesh apply` only: the user's config and hooks run (it is
 * their step), but with the operator-allowed environment, never the worker process's secrets.
 */
export async function userGit(cwd: string, args: string[]): Promise<GitResult> {
  const r = await execa('git', args, {
    cwd,
    reject: false,
    stdin: 'ignore',
    extendEnv: false,
    env: subprocessEnv({ GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat' }),
    stripFinalNewline: false,
  });
  return { ok: r.exitCode === 0, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), exitCode: r.exitCode ?? null };
}

export class UntrustedTreeError extends Error {
  override name = 'UntrustedTreeError';
}

/**
 * The place to run git on a worktree warden made under `repo`: its admin directory
 * (<common dir>/worktrees/<name>, whose `gitdir` file names `<dir>/.git`) and the directory as the
 * work tree. Refuses a directory that is not a real directory (a symlink, say) or that no admin
 * directory of the repository claims: the worktree's own `.git` is never consulted.
 */
export async function worktreePlace(repo: string, dir: string): Promise<GitPlace> {
  const st = await lstat(dir).catch(() => null);
  if (!st?.isDirectory())
    throw new UntrustedTreeError(`${dir} is not a directory warden made (${st ? (st.isSymbolicLink() ? 'a symlink' : 'not a directory') : 'missing'})`);
  const common = resolve(repo, (await gitOk(repo, ['rev-parse', '--git-common-dir'])).trim());
  const want = join(resolve(dir), '.git');
  const names = await readdir(join(common, 'worktrees')).catch(() => [] as string[]);
  for (const name of names) {
    const admin = join(common, 'worktrees', name);
    const gitdir = await readFile(join(admin, 'gitdir'), 'utf8').catch(() => null);
    if (gitdir !== null && resolve(admin, gitdir.trim()) === want) return { cwd: resolve(dir), gitDir: admin, workTree: resolve(dir) };
  }
  throw new UntrustedTreeError(`${dir} is not a worktree of ${repo} that warden made (no admin directory under ${join(common, 'worktrees')} names it)`);
}

export const runDir = (repo: string, runId: string) => join(repo, '.mesh', 'runs', runId);
export const integrationBranch = (runId: string) => `mesh/${runId}/integration`;
export const attemptBranch = (runId: string, slug: string, attempt: number) => `mesh/${runId}/${slug}-a${attempt}`;
export const WARDEN_DRAFT_HEADER = '# patch draft written by warden from the worktree diff against';
