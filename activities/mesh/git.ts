/** git for the mesh: one small runner, and the repository layout under `.mesh/runs/<run_id>/`. */
import { execa } from 'execa';
import { join } from 'node:path';

export interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
  exitCode: number | null;
}

/** Run git in `cwd`; never throws for a non-zero exit (callers decide). No pager, no prompts. */
export async function git(cwd: string, args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<GitResult> {
  const r = await execa('git', args, {
    cwd,
    reject: false,
    stdin: opts.input === undefined ? 'ignore' : 'pipe',
    ...(opts.input !== undefined ? { input: opts.input } : {}),
    env: { GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', ...opts.env },
    stripFinalNewline: false,
  });
  return { ok: r.exitCode === 0, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), exitCode: r.exitCode ?? null };
}

/** Like git(), but a failure throws with git's stderr. */
export async function gitOk(cwd: string, args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<string> {
  const r = await git(cwd, args, opts);
  if (!r.ok) throw new Error(`git ${args.join(' ')} failed (exit ${r.exitCode}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout.trim();
}

export const runDir = (repo: string, runId: string) => join(repo, '.mesh', 'runs', runId);
export const integrationBranch = (runId: string) => `mesh/${runId}/integration`;
export const attemptBranch = (runId: string, slug: string, attempt: number) => `mesh/${runId}/${slug}-a${attempt}`;
export const WARDEN_DRAFT_HEADER = '# patch draft written by warden from the worktree diff against';
