/**
 * The mesh's side effects: the run directory and manifest, git worktrees per attempt, reading the
 * attempts' artifacts on every tick (and drafting a patch from a worktree's diff when the worker
 * wrote none), applying patches to the integration branch, the validation command (gate V), and
 * merging the integration branch into the user's branch.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { execa } from 'execa';
import type { Logger } from 'pino';
import { subprocessEnv } from '../../src/config/worker.js';
import { parseCheckpoint } from '../../src/domain/mesh/checkpoint.js';
import { artifactPaths } from '../../src/domain/mesh/checkpoint.js';
import { conflictingFiles, deliverableCheck, isUnifiedDiff, touchedFiles } from '../../src/domain/mesh/gates.js';
import { renderManifest } from '../../src/domain/mesh/render.js';
import type { MeshActivities, ObserveResult, ObserveTarget } from '../../src/domain/mesh/activity-types.js';
import type { AgentStatus } from '../../src/domain/status.js';
import type { Turn } from '../../src/domain/schemas.js';
import { WARDEN_DRAFT_HEADER, attemptBranch, git, gitOk, integrationBranch, runDir } from './git.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

async function ensureWorktree(repo: string, dir: string, branch: string, from: string): Promise<void> {
  if (existsSync(join(dir, '.git'))) return;
  const exists = (await git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).ok;
  await gitOk(repo, exists ? ['worktree', 'add', dir, branch] : ['worktree', 'add', '-b', branch, dir, from]);
}

/** The worktree's changes against `base`, untracked files included, without touching its index. */
export async function worktreeDiff(worktree: string, base: string): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), 'warden-mesh-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(tmp, 'index') };
    await gitOk(worktree, ['read-tree', base], { env });
    await gitOk(worktree, ['add', '-A', '.'], { env });
    return (await git(worktree, ['diff', '--cached', '--binary', base], { env })).stdout;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function observe(t: ObserveTarget, log: Logger): Promise<ObserveResult> {
  const cp = existsSync(t.checkpointPath) ? { text: readFileSync(t.checkpointPath, 'utf8'), mtimeMs: statSync(t.checkpointPath).mtimeMs } : null;
  let patchText = existsSync(t.patchPath) ? readFileSync(t.patchPath, 'utf8') : null;
  let by: 'worker' | 'warden' | null = patchText === null ? null : patchText.startsWith(WARDEN_DRAFT_HEADER) ? 'warden' : 'worker';
  // A claimed patch always exists: with no draft of the worker's own, warden drafts one from the worktree.
  const parsed = cp ? parseCheckpoint(cp.text) : null;
  const pmtime = patchText !== null ? statSync(t.patchPath).mtimeMs : 0;
  const finished = parsed?.ok === true && parsed.checkpoint.statusCode === 'done' && cp!.mtimeMs > t.draftNotBefore && cp!.mtimeMs > pmtime;
  const draft = t.draftFromWorktree === 'always' || (t.draftFromWorktree === 'when-done' && finished);
  if (draft && by !== 'worker' && existsSync(t.worktree)) {
    const diff = await worktreeDiff(t.worktree, t.diffBase).catch((err: unknown) => {
      log.warn({ err: String(err), key: t.key }, 'could not diff the worktree');
      return '';
    });
    if (diff.trim()) {
      const text = `${WARDEN_DRAFT_HEADER} ${t.diffBase}\n${diff}`;
      if (text !== patchText) writeAtomic(t.patchPath, text);
      patchText = text;
      by = 'warden';
    } else if (by === 'warden' && t.draftFromWorktree === 'always') {
      rmSync(t.patchPath, { force: true });
      patchText = null;
      by = null;
    }
  }
  const pst = patchText !== null ? statSync(t.patchPath) : null;
  let agentState: string | null = null;
  let lastTurn: ObserveResult['lastTurn'] = null;
  let turns: number | null = null;
  try {
    const handle = Context.current().client.workflow.getHandle(t.workflowId);
    const status = await handle.query<AgentStatus>('status');
    agentState = status.state;
    turns = status.turns;
    const window = await handle.query<Turn[]>('window');
    const final = [...window].reverse().find((x) => deliverableCheck(x.text, t.kind).ok) ?? window.at(-1);
    if (final) lastTurn = { text: final.text.slice(0, 4_000), at: status.lastTurnAt };
  } catch (err) {
    log.debug({ err: String(err), key: t.key }, 'could not query the agent');
  }
  return {
    key: t.key,
    checkpoint: cp ? { exists: true, mtimeMs: cp.mtimeMs, parse: parsed } : { exists: false, mtimeMs: null, parse: null },
    patch:
      patchText !== null
        ? { exists: true, size: patchText.length, mtimeMs: pst!.mtimeMs, sha: sha(patchText), unified: isUnifiedDiff(patchText), files: touchedFiles(patchText), by }
        : { exists: false, size: 0, mtimeMs: null, sha: null, unified: false, files: [], by: null },
    lastTurn,
    turns,
    agentState,
    patchText: null,
  };
}

export function makeMeshActivities(log: Logger): MeshActivities {
  const mlog = log.child({ component: 'mesh' });
  return {
    async meshSetup(input) {
      const repo = resolve(input.repo);
      const top = await git(repo, ['rev-parse', '--show-toplevel']);
      if (!top.ok) throw ApplicationFailure.nonRetryable(`not a git repository: ${repo}`, 'MeshSetupError');
      const root = top.stdout.trim();
      const dir = runDir(root, input.runId);
      const baseFile = join(dir, 'base');
      let base: string, userBranch: string;
      if (existsSync(baseFile)) [base, userBranch] = readFileSync(baseFile, 'utf8').trim().split(' ') as [string, string];
      else {
        const head = await git(root, ['rev-parse', 'HEAD']);
        if (!head.ok) throw ApplicationFailure.nonRetryable(`repository ${root} has no commit yet`, 'MeshSetupError');
        base = head.stdout.trim();
        userBranch = (await git(root, ['symbolic-ref', '--short', 'HEAD'])).stdout.trim() || 'HEAD';
        for (const d of ['checkpoints', 'patches', 'worktrees']) mkdirSync(join(dir, d), { recursive: true });
        writeAtomic(baseFile, `${base} ${userBranch}\n`);
      }
      const exclude = resolve(root, (await gitOk(root, ['rev-parse', '--git-path', 'info/exclude'])));
      if (!existsSync(exclude) || !readFileSync(exclude, 'utf8').split('\n').includes('.mesh/')) {
        mkdirSync(dirname(exclude), { recursive: true });
        appendFileSync(exclude, '\n.mesh/\n');
      }
      const branch = integrationBranch(input.runId);
      const integrationDir = join(dir, 'integration');
      await ensureWorktree(root, integrationDir, branch, base);
      const manifestPath = join(dir, 'manifest.md');
      writeAtomic(manifestPath, renderManifest({ runId: input.runId, repo: root, base, userBranch, tasks: input.tasks, tunables: input.tunables, validate: input.validate, driver: input.driver }));
      const integrationHead = await gitOk(integrationDir, ['rev-parse', 'HEAD']);
      mlog.info({ runId: input.runId, repo: root, base }, 'mesh run set up');
      return { repo: root, base, userBranch, integrationBranch: branch, integrationDir, integrationHead, runDir: dir, manifestPath };
    },

    async meshPrepareAttempt(input) {
      const dir = runDir(input.repo, input.runId);
      const worktree = join(dir, 'worktrees', `${input.slug}--a${input.attempt}`);
      const branch = attemptBranch(input.runId, input.slug, input.attempt);
      await ensureWorktree(input.repo, worktree, branch, input.from);
      const rel = artifactPaths(input.runId, input.slug, input.attempt);
      const checkpointPath = join(input.repo, rel.checkpoint);
      const patchPath = join(input.repo, rel.patch);
      mkdirSync(dirname(checkpointPath), { recursive: true });
      mkdirSync(dirname(patchPath), { recursive: true });
      return { worktree, branch, checkpointPath, patchPath };
    },

    async meshObserve({ targets }) {
      return Promise.all(targets.map((t) => observe(t, mlog)));
    },

    async meshIntegrate(input) {
      const trailer = `Mesh-Attempt: ${input.key}`;
      // Idempotent: a retry after the commit finds it and reports the same head.
      const recent = await gitOk(input.integrationDir, ['log', '-n', '100', '--format=%H %(trailers:key=Mesh-Attempt,valueonly,separator=)']);
      const done = recent.split('\n').find((l) => l.trim().endsWith(` ${input.key}`));
      if (done) return { applied: true, head: done.split(' ')[0]!, already: true };
      const check = await git(input.integrationDir, ['apply', '--check', '--index', input.patchPath]);
      if (!check.ok) return { applied: false, error: check.stderr.trim() || check.stdout.trim(), conflictingFiles: conflictingFiles(check.stderr) };
      await gitOk(input.integrationDir, ['apply', '--index', input.patchPath]);
      await gitOk(input.integrationDir, ['-c', 'user.name=warden-mesh', '-c', 'user.email=mesh@warden.local', 'commit', '--allow-empty', '-q', '-m', `${input.message}\n\n${trailer}`]);
      return { applied: true, head: await gitOk(input.integrationDir, ['rev-parse', 'HEAD']), already: false };
    },

    async meshValidate(input) {
      // The user's command runs with the explicit subprocess environment, never the worker's secrets.
      const r = await execa('sh', ['-c', input.command], { cwd: input.integrationDir, reject: false, all: true, timeout: input.timeoutMs, stdin: 'ignore', extendEnv: false, env: subprocessEnv() });
      const output = String(r.all ?? '').slice(-2_000);
      return { ok: r.exitCode === 0, exitCode: r.exitCode ?? null, output };
    },

    async meshApply(input) {
      const current = (await git(input.repo, ['symbolic-ref', '--short', 'HEAD'])).stdout.trim();
      if (current !== input.userBranch)
        throw ApplicationFailure.nonRetryable(`the repository is on ${current || 'a detached HEAD'}, not ${input.userBranch}: check out ${input.userBranch} and apply again`, 'MeshApplyError');
      const head = await gitOk(input.repo, ['rev-parse', input.integrationBranch]);
      if ((await git(input.repo, ['merge-base', '--is-ancestor', head, 'HEAD'])).ok) return { commit: await gitOk(input.repo, ['rev-parse', 'HEAD']), branch: current };
      const merge = await git(input.repo, ['-c', 'user.name=warden-mesh', '-c', 'user.email=mesh@warden.local', 'merge', '--no-ff', '--no-edit', '-m', `mesh ${input.runId}: merge ${input.integrationBranch}`, input.integrationBranch]);
      if (!merge.ok) {
        await git(input.repo, ['merge', '--abort']);
        throw ApplicationFailure.nonRetryable(`merge of ${input.integrationBranch} into ${current} failed: ${merge.stderr.trim() || merge.stdout.trim()}`, 'MeshApplyError');
      }
      return { commit: await gitOk(input.repo, ['rev-parse', 'HEAD']), branch: current };
    },
  };
}
