/**
 * The mesh's side effects: the run directory and manifest, git worktrees per attempt, reading the
 * attempts' artifacts on every tick (and drafting a patch from a worktree's diff when the worker
 * wrote none), applying patches to the integration branch, the validation command (gate V), and
 * merging the integration branch into the user's branch.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { appendFile, lstat, mkdir, mkdtemp, open, readdir, readFile, readlink, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Logger } from 'pino';
import { parseCheckpoint, type CheckpointParse } from '../../src/domain/mesh/checkpoint.js';
import { artifactPaths } from '../../src/domain/mesh/checkpoint.js';
import {
  binaryPatchBytes,
  conflictingFiles,
  deliverableCheck,
  gitSafetyRefusal,
  isUnifiedDiff,
  parseNumstatZ,
  unsafePatchPath,
} from '../../src/domain/mesh/gates.js';
import { renderManifest } from '../../src/domain/mesh/render.js';
import type { MeshActivities, ObserveResult, ObserveTarget } from '../../src/domain/mesh/activity-types.js';
import { MESH_CHECKPOINT_MAX_BYTES, MESH_PATCH_BINARY_MAX_BYTES, MESH_PATCH_FILES_MAX_BYTES, MESH_PATCH_MAX_BYTES } from '../../src/domain/contract/limits.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { UntrustedTreeError, WARDEN_DRAFT_HEADER, attemptBranch, git, gitOk, integrationBranch, runDir, userGit, worktreePlace, type GitPlace } from './git.js';
import { killMarked } from '../process-group.js';
import { currentActivity, runCheck, tailBytes } from '../verify.js';
import { statusQuery, windowQuery } from '../../src/messages/agent.js';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex').slice(0, 16);
const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

/** The repository an artifact or worktree path under `<repo>/.mesh/runs/<run>/<kind>/<name>` belongs to. */
const repoOf = (path: string) => resolve(path, '..', '..', '..', '..', '..');
/** The repository of an integration worktree `<repo>/.mesh/runs/<run>/integration`. */
const repoOfIntegration = (dir: string) => resolve(dir, '..', '..', '..', '..');

const kindOf = (st: Stats) =>
  st.isFIFO()
    ? 'a named pipe (FIFO)'
    : st.isCharacterDevice() || st.isBlockDevice()
      ? 'a device'
      : st.isSocket()
        ? 'a socket'
        : st.isDirectory()
          ? 'a directory'
          : st.isSymbolicLink()
            ? 'a symlink'
            : 'not a regular file';

/** `dir` is where it claims to be under `repo` (no directory on the way was swapped for a symlink). */
async function inTree(repo: string, dir: string): Promise<boolean> {
  const [real, want] = await Promise.all([
    realpath(dir).catch(() => null),
    realpath(repo)
      .then((r) => join(r, relative(repo, dir)))
      .catch(() => null),
  ]);
  return real !== null && real === want;
}

export type UntrustedRead = { kind: 'missing' } | { kind: 'refused'; reason: string } | { kind: 'ok'; bytes: Buffer; mtimeMs: number };

/**
 * Read a file a worker can write, safely: opened non-blocking without following a symlink, then
 * fstat: only a regular file, inside the repository, at most `maxBytes`. A FIFO, a device, a symlink
 * or an oversized (sparse) file is refused with the reason, never read: the read cannot block and
 * cannot build a payload past its budget.
 */
export async function readUntrusted(path: string, maxBytes: number, what: string, repo = repoOf(path)): Promise<UntrustedRead> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'refused', reason: `${what} is a symlink, not a regular file` };
    return { kind: 'refused', reason: `${what} could not be opened (${code ?? String(err)})` };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { kind: 'refused', reason: `${what} is ${kindOf(st)}, not a regular file` };
    if (st.size > maxBytes) return { kind: 'refused', reason: `${what} is ${st.size} bytes, over its budget of ${maxBytes}` };
    if (!(await inTree(repo, dirname(path)))) return { kind: 'refused', reason: `${what} is not inside the repository (a directory on its path is a symlink)` };
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > maxBytes) return { kind: 'refused', reason: `${what} grew past its budget of ${maxBytes} bytes` };
    return { kind: 'ok', bytes: buf.subarray(0, n), mtimeMs: st.mtimeMs };
  } finally {
    await fh.close();
  }
}

/** Write a file warden owns (a patch draft) atomically, only into a directory that is really in the repository. */
async function writeAtomic(path: string, text: string, repo?: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  if (repo && !(await inTree(repo, dirname(path))))
    throw new UntrustedTreeError(`${dirname(path)} is not inside ${repo} (a directory on its path is a symlink)`);
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, text, { flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
    await rm(tmp, { force: true });
    await writeFile(tmp, text, { flag: 'wx' });
  });
  await rename(tmp, path);
}

async function ensureWorktree(repo: string, dir: string, branch: string, from: string): Promise<void> {
  if (await exists(join(dir, '.git'))) return;
  const exists_ = (await git(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).ok;
  await gitOk(repo, exists_ ? ['worktree', 'add', dir, branch] : ['worktree', 'add', '-b', branch, dir, from]);
}

export type WorktreeDiff = { ok: true; diff: string } | { ok: false; refused: string };

/**
 * The worktree's changes against `base`, untracked files included, without touching its index:
 * git runs on warden's own admin directory for the worktree (its `.git` file is never read), with
 * hooks, fsmonitor, filters and external diff off, into a temporary index; output past the patch
 * budget is refused, not read.
 */
export async function worktreeDiff(repo: string, worktree: string, base: string): Promise<WorktreeDiff> {
  let place: GitPlace;
  try {
    place = await worktreePlace(repo, worktree);
  } catch (err) {
    if (err instanceof UntrustedTreeError) return { ok: false, refused: err.message };
    throw err;
  }
  const tmp = await mkdtemp(join(tmpdir(), 'warden-mesh-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(tmp, 'index') };
    await gitOk(place, ['read-tree', base], { env });
    await gitOk(place, ['add', '-A', '.'], { env });
    const r = await git(place, ['diff', '--cached', '--binary', '--no-ext-diff', '--no-textconv', '--no-color', base], {
      env,
      maxBuffer: MESH_PATCH_MAX_BYTES,
    });
    if (r.overflow) return { ok: false, refused: `the worktree diff is over the patch budget of ${MESH_PATCH_MAX_BYTES} bytes` };
    if (!r.ok) throw new Error(`git diff failed: ${r.stderr.trim()}`);
    return { ok: true, diff: r.stdout };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * What git would touch with this patch, from git itself, and why warden refuses it if it does: a
 * path that leaves the repository or enters a `.git` directory (gate P), or more file names than
 * the budget (gate D). `git apply --numstat -z` names what each file becomes; the same with `-R`
 * names what it was (a rename's source, which `--numstat` alone leaves out: moving a file out of
 * the scope touches it). Nothing is applied.
 */
export async function patchFiles(
  repo: string,
  patch: Buffer,
): Promise<{ ok: true; files: string[] } | { ok: false; error: string } | { ok: false; refused: string }> {
  const files: string[] = [];
  for (const reverse of [false, true]) {
    const r = await git(repo, ['apply', ...(reverse ? ['-R'] : []), '--numstat', '-z', '-'], { input: patch, maxBuffer: 4 * MESH_PATCH_FILES_MAX_BYTES });
    if (r.overflow) return { ok: false, refused: `gate D: the patch touches more files than its budget (${MESH_PATCH_FILES_MAX_BYTES} bytes of file names)` };
    if (!r.ok) {
      const refusal = gitSafetyRefusal(r.stderr);
      return refusal ? { ok: false, refused: `gate P: git refuses the patch: ${refusal}` } : { ok: false, error: r.stderr.trim() };
    }
    const parsed = parseNumstatZ(r.stdout);
    if (!parsed.ok) return { ok: false, error: parsed.error };
    for (const f of parsed.files) if (!files.includes(f)) files.push(f);
  }
  const inflated = binaryPatchBytes(patch.toString('latin1'));
  if (inflated > MESH_PATCH_BINARY_MAX_BYTES)
    return { ok: false, refused: `gate D: the patch's binary files are ${inflated} bytes, over their budget of ${MESH_PATCH_BINARY_MAX_BYTES}` };
  const unsafe = files.map(unsafePatchPath).find((x) => x !== null);
  if (unsafe) return { ok: false, refused: `gate P: the patch touches a path git must not write: ${unsafe}` };
  if (Buffer.byteLength(files.join('\n')) > MESH_PATCH_FILES_MAX_BYTES)
    return { ok: false, refused: `gate D: the patch touches ${files.length} files, more than its budget (${MESH_PATCH_FILES_MAX_BYTES} bytes of file names)` };
  return { ok: true, files };
}

/**
 * The parsed checkpoint as the tick's result carries it: the workflow uses its status code and
 * detail; the lists are cut short, so that a cap of attempts stays far inside one payload.
 */
function slim(p: CheckpointParse): CheckpointParse {
  if (!p.ok) return { ok: false, error: p.error.slice(0, 300) };
  const list = (xs: string[]) => xs.slice(0, 10).map((x) => x.slice(0, 160));
  const c = p.checkpoint;
  return {
    ok: true,
    checkpoint: {
      statusCode: c.statusCode.slice(0, 100),
      statusDetail: c.statusDetail.slice(0, 500),
      plan: list(c.plan),
      intendedFiles: list(c.intendedFiles),
      blockers: list(c.blockers),
      artifacts: list(c.artifacts),
    },
  };
}

/** What the agent's status says about it needing a human (escalated, paused), or null. */
function agentNote(status: AgentStatus): string | null {
  const parts: string[] = [];
  if (status.state === 'awaiting-input') parts.push(`escalated${status.stateReason ? ` (${status.stateReason.slice(0, 160)})` : ''}`);
  if (status.paused) parts.push(`paused${status.pauseReason ? ` (${status.pauseReason.slice(0, 160)})` : ''}`);
  return parts.length ? parts.join(' and ') : null;
}

async function observe(t: ObserveTarget, log: Logger): Promise<ObserveResult> {
  const repo = repoOf(t.checkpointPath);
  const cpr = await readUntrusted(t.checkpointPath, MESH_CHECKPOINT_MAX_BYTES, 'the checkpoint', repo);
  const pr = await readUntrusted(t.patchPath, MESH_PATCH_MAX_BYTES, 'the patch draft', repo);
  let refused: string | null = pr.kind === 'refused' ? `gate D: ${pr.reason}` : null;
  let patch: Buffer | null = pr.kind === 'ok' ? pr.bytes : null;
  let pmtime = pr.kind === 'ok' ? pr.mtimeMs : 0;
  const header = Buffer.from(WARDEN_DRAFT_HEADER);
  let by: 'worker' | 'warden' | null = patch === null ? null : patch.subarray(0, header.length).equals(header) ? 'warden' : 'worker';
  // A claimed patch always exists: with no draft of the worker's own, warden drafts one from the worktree.
  const cp = cpr.kind === 'ok' ? { text: cpr.bytes.toString('utf8'), mtimeMs: cpr.mtimeMs } : null;
  const parsed = cp ? slim(parseCheckpoint(cp.text)) : null;
  const finished = parsed?.ok === true && parsed.checkpoint.statusCode === 'done' && cp!.mtimeMs > t.draftNotBefore && cp!.mtimeMs > pmtime;
  const draft = t.draftFromWorktree === 'always' || (t.draftFromWorktree === 'when-done' && finished);
  if (draft && !refused && by !== 'worker' && (await exists(t.worktree))) {
    const d = await worktreeDiff(repoOf(t.worktree), t.worktree, t.diffBase).catch((err: unknown) => {
      log.warn({ err: String(err), key: t.key }, 'could not diff the worktree');
      return { ok: true, diff: '' } as const;
    });
    if (!d.ok) refused = `gate D: ${d.refused}`;
    else if (d.diff.trim()) {
      const text = Buffer.from(`${WARDEN_DRAFT_HEADER} ${t.diffBase}\n${d.diff}`);
      try {
        if (!patch || !text.equals(patch)) {
          await writeAtomic(t.patchPath, text.toString('utf8'), repo);
          pmtime = Date.now();
        }
        patch = text;
        by = 'warden';
      } catch (err) {
        if (!(err instanceof UntrustedTreeError)) throw err;
        refused = `gate D: warden cannot write the patch draft: ${err.message}`;
      }
    } else if (by === 'warden' && t.draftFromWorktree === 'always') {
      await rm(t.patchPath, { force: true });
      patch = null;
      by = null;
    }
  }
  let files: string[] = [];
  let unified = false;
  if (patch && !refused) {
    const pf = await patchFiles(repo, patch);
    if (pf.ok) [files, unified] = [pf.files, isUnifiedDiff(patch.toString('utf8'))];
    else if ('refused' in pf) refused = pf.refused;
  }
  let agentState: string | null = null;
  let note: string | null = null;
  let lastTurn: ObserveResult['lastTurn'] = null;
  let turns: number | null = null;
  try {
    const handle = Context.current().client.workflow.getHandle(t.workflowId);
    const status = await handle.query(statusQuery);
    agentState = status.state;
    note = agentNote(status);
    turns = status.turns;
    const window = await handle.query(windowQuery);
    const final = [...window].reverse().find((x) => deliverableCheck(x.text, t.kind).ok) ?? window.at(-1);
    if (final) lastTurn = { text: final.text.slice(0, 4_000), at: status.lastTurnAt };
  } catch (err) {
    log.debug({ err: String(err), key: t.key }, 'could not query the agent');
  }
  const present = patch !== null || pr.kind === 'refused';
  return {
    key: t.key,
    checkpoint:
      cpr.kind === 'ok'
        ? { exists: true, mtimeMs: cpr.mtimeMs, parse: parsed }
        : cpr.kind === 'refused'
          ? { exists: true, mtimeMs: null, parse: null, refused: cpr.reason }
          : { exists: false, mtimeMs: null, parse: null },
    patch: present
      ? {
          exists: true,
          size: patch?.length ?? 0,
          mtimeMs: patch ? pmtime : null,
          sha: patch ? sha(patch) : null,
          unified,
          files,
          by,
          ...(refused ? { refused } : {}),
        }
      : { exists: false, size: 0, mtimeMs: null, sha: null, unified: false, files: [], by: null, ...(refused ? { refused } : {}) },
    lastTurn,
    turns,
    agentState,
    agentNote: note,
    patchText: null,
  };
}

/** The commit on the integration branch whose `Mesh-Attempt` trailer is `key`, or null. */
async function integratedCommit(place: GitPlace, key: string): Promise<string | null> {
  const recent = await gitOk(place, ['log', '-n', '200', '--format=%H %(trailers:key=Mesh-Attempt,valueonly,separator=)']);
  const line = recent.split('\n').find((l) => l.trim().endsWith(` ${key}`));
  return line ? line.split(' ')[0]! : null;
}

/** Live processes whose working directory is `dir` or under it (Linux /proc; elsewhere none are seen). */
async function processesIn(dir: string): Promise<number[]> {
  const root = await realpath(dir).catch(() => resolve(dir));
  const pids: number[] = [];
  for (const e of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    const cwd = await readlink(`/proc/${e}/cwd`).catch(() => null);
    if (cwd !== null && (cwd === root || cwd.startsWith(`${root}/`))) pids.push(Number(e));
  }
  return pids;
}

/**
 * Remove the integration worktree's `index.lock` left by a git that died holding it. The workflow
 * runs one integration at a time, and Temporal starts an activity's retry only after the previous
 * attempt has failed or timed out, so a lock present when this activity starts was left by a dead
 * process. One case is not dead: a git from a timed-out attempt on a worker that is still alive.
 * warden runs git with the work tree as its working directory, so a live process there means the
 * lock may be held: the activity then fails (and is retried, a bounded number of times) rather
 * than removing a lock that is in use.
 */
async function clearStaleIndexLock(place: GitPlace, dir: string, log: Logger): Promise<void> {
  const lock = join(place.gitDir ?? join(dir, '.git'), 'index.lock');
  if (!(await exists(lock))) return;
  const live = await processesIn(dir);
  if (live.length) throw new Error(`${lock} is held and processes ${live.join(', ')} still run in ${dir}; not removing it`);
  log.warn({ lock }, 'removing a stale index.lock left by a git that died');
  await rm(lock, { force: true });
}

/**
 * What `mesh apply` must not merge, as a phrase naming it, or null: a file the integration changes
 * (since its merge base with HEAD) that is under, or is a parent of, the configured
 * `core.hooksPath` when that lies in the work tree, or that is a config file git reads (an
 * `include.path` into the work tree). Config is read as the user's git reads it.
 */
export async function hookOrConfigChanges(repo: string, head: string): Promise<string | null> {
  const root = (await gitOk(repo, ['rev-parse', '--show-toplevel'])).trim();
  const inTree = (abs: string): string | null => {
    const rel = relative(root, abs);
    return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? null : rel;
  };
  const guarded: Array<{ rel: string; what: string }> = [];
  const hooks = await userGit(repo, ['config', '--get', 'core.hooksPath']);
  const hooksPath = hooks.ok ? hooks.stdout.trim() : '';
  if (hooksPath) {
    const abs = hooksPath.startsWith('~/') ? join(homedir(), hooksPath.slice(2)) : resolve(root, hooksPath);
    const rel = inTree(abs);
    if (rel) guarded.push({ rel, what: `the hooks path (core.hooksPath=${hooksPath})` });
  }
  const origins = await userGit(repo, ['config', '--list', '--show-origin', '-z']);
  if (origins.ok)
    for (const [i, field] of origins.stdout.split('\0').entries()) {
      if (i % 2 !== 0 || !field.startsWith('file:')) continue;
      const rel = inTree(resolve(root, field.slice('file:'.length)));
      if (rel && rel !== '.' && !rel.split('/').includes('.git') && !guarded.some((g) => g.rel === rel))
        guarded.push({ rel, what: 'a git config file in the work tree' });
    }
  if (guarded.length === 0) return null;
  const base = (await gitOk(repo, ['merge-base', 'HEAD', head])).trim();
  const changed = (await gitOk(repo, ['diff', '--name-only', '-z', '--no-renames', base, head])).split('\0').filter(Boolean);
  for (const f of changed)
    for (const g of guarded) if (g.rel === '.' || f === g.rel || f.startsWith(`${g.rel}/`) || g.rel.startsWith(`${f}/`)) return `${f} (${g.what})`;
  return null;
}

/** Remove a worktree warden made (a check's) and git's record of it; nothing is followed through a symlink. */
async function removeWorktree(repo: string, dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => null);
  if (st) {
    const dirOk = st.isDirectory();
    if (!dirOk || !(await git(repo, ['worktree', 'remove', '--force', '--force', dir])).ok) await rm(dir, { recursive: dirOk, force: true });
  }
  await gitOk(repo, ['worktree', 'prune']);
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
      if (await exists(baseFile)) [base, userBranch] = (await readFile(baseFile, 'utf8')).trim().split(' ') as [string, string];
      else {
        const head = await git(root, ['rev-parse', 'HEAD']);
        if (!head.ok) throw ApplicationFailure.nonRetryable(`repository ${root} has no commit yet`, 'MeshSetupError');
        base = head.stdout.trim();
        userBranch = (await git(root, ['symbolic-ref', '--short', 'HEAD'])).stdout.trim() || 'HEAD';
        for (const d of ['checkpoints', 'patches', 'worktrees']) await mkdir(join(dir, d), { recursive: true });
        await writeAtomic(baseFile, `${base} ${userBranch}\n`);
      }
      const exclude = resolve(root, await gitOk(root, ['rev-parse', '--git-path', 'info/exclude']));
      if (!(await exists(exclude)) || !(await readFile(exclude, 'utf8')).split('\n').includes('.mesh/')) {
        await mkdir(dirname(exclude), { recursive: true });
        await appendFile(exclude, '\n.mesh/\n');
      }
      const branch = integrationBranch(input.runId);
      const integrationDir = join(dir, 'integration');
      await ensureWorktree(root, integrationDir, branch, base);
      const manifestPath = join(dir, 'manifest.md');
      await writeAtomic(
        manifestPath,
        renderManifest({
          runId: input.runId,
          repo: root,
          base,
          userBranch,
          tasks: input.tasks,
          tunables: input.tunables,
          validate: input.validate,
          driver: input.driver,
        }),
      );
      const integrationHead = await gitOk(await worktreePlace(root, integrationDir), ['rev-parse', 'HEAD']);
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
      await mkdir(dirname(checkpointPath), { recursive: true });
      await mkdir(dirname(patchPath), { recursive: true });
      return { worktree, branch, checkpointPath, patchPath };
    },

    async meshObserve({ targets }) {
      return Promise.all(targets.map((t) => observe(t, mlog)));
    },

    async meshIntegrate(input) {
      // git runs on warden's own admin directory of the integration worktree, hooks and filters off.
      const place = await worktreePlace(repoOfIntegration(input.integrationDir), input.integrationDir).catch((err: unknown) => {
        throw ApplicationFailure.nonRetryable(String(err instanceof Error ? err.message : err), 'MeshIntegrateError');
      });
      const trailer = `Mesh-Attempt: ${input.key}`;
      // Idempotent by construction: every step's effect is checked before it is redone, so a crash
      // between any two git commands ends in the same history as no crash.
      // 1. A stale index.lock (a git killed mid-command) would make every git below fail: cleared.
      await clearStaleIndexLock(place, input.integrationDir, mlog);
      // 2. The commit, if a dead attempt made it, is found by its trailer: nothing is redone.
      const done = await integratedCommit(place, input.key);
      if (done) return { applied: true, head: done, already: true };
      // 3. The work tree and index go back to the recorded integration head: nothing a dead attempt
      //    staged (or left half-applied) is swept into this commit or checked against.
      if (input.head) await gitOk(place, ['reset', '-q', '--hard', input.head]);
      const refuse = (error: string) => ({ applied: false as const, error, conflictingFiles: [], refused: true });
      // The patch is read once, safely, and git applies exactly those bytes (from stdin).
      const read = await readUntrusted(input.patchPath, MESH_PATCH_MAX_BYTES, 'the patch draft');
      if (read.kind === 'missing') return { applied: false, error: 'the patch draft does not exist', conflictingFiles: [] };
      if (read.kind === 'refused') return refuse(`gate D: ${read.reason}`);
      if (input.expectSha && sha(read.bytes) !== input.expectSha) return refuse('gate D: the patch draft changed after its gates passed');
      const pf = await patchFiles(repoOfIntegration(input.integrationDir), read.bytes);
      if (!pf.ok && 'refused' in pf) return refuse(pf.refused);
      const check = await git(place, ['apply', '--check', '--index', '-'], { input: read.bytes });
      if (!check.ok) {
        const refusal = gitSafetyRefusal(check.stderr);
        if (refusal) return refuse(`gate P: git refuses the patch: ${refusal}`);
        return { applied: false, error: check.stderr.trim() || check.stdout.trim(), conflictingFiles: conflictingFiles(check.stderr) };
      }
      await gitOk(place, ['apply', '--index', '-'], { input: read.bytes });
      // No --allow-empty: should an attempt that timed out but still runs reach its commit after a
      // retry committed this change, it finds nothing staged and fails (its result is dropped)
      // rather than committing this trailer twice.
      await gitOk(place, [
        '-c',
        'user.name=warden-mesh',
        '-c',
        'user.email=mesh@warden.local',
        'commit',
        '--no-verify',
        '-q',
        '-m',
        `${input.message}\n\n${trailer}`,
      ]);
      return { applied: true, head: await gitOk(place, ['rev-parse', 'HEAD']), already: false };
    },

    async meshValidate(input) {
      // Only in the integration worktree warden made (not a directory a worker swapped in for it).
      await worktreePlace(repoOfIntegration(input.integrationDir), input.integrationDir).catch((err: unknown) => {
        throw ApplicationFailure.nonRetryable(String(err instanceof Error ? err.message : err), 'MeshValidateError');
      });
      // Gate V runs like a done-claim's verify (activities/verify.ts runCheck): the user's command in
      // its own process group, with the explicit subprocess environment (never the worker's secrets),
      // killed as a group at its timeout or on cancel; a check left running by a dead worker is killed first.
      const marker = `WARDEN_MESH_VALIDATE=${input.integrationDir}`;
      await killMarked([marker]);
      const activity = currentActivity();
      const beat = setInterval(() => activity?.heartbeat(), 1_000);
      try {
        const r = await runCheck({
          command: input.command,
          cwd: input.integrationDir,
          timeoutMs: input.timeoutMs,
          marker,
          env: { WARDEN_MESH_VALIDATE: input.integrationDir },
        });
        return { ok: r.passed, exitCode: r.exitCode, output: tailBytes(r.outputTail, 2_000) };
      } finally {
        clearInterval(beat);
      }
    },

    async meshTaskCheck(input) {
      // Never in the worker's worktree (it can change tests, scripts and runners outside its patch):
      // a worktree warden makes from the integration head with exactly the gated patch bytes applied.
      const repo = repoOfIntegration(input.integrationDir);
      const cantRun = (why: string) => ({
        exitCode: null,
        passed: false,
        timedOut: false,
        outputTail: `warden could not run the check: ${why}`,
        checkedOn: null,
      });
      const read = await readUntrusted(input.patchPath, MESH_PATCH_MAX_BYTES, 'the patch draft');
      if (read.kind !== 'ok') return cantRun(read.kind === 'missing' ? 'the patch draft does not exist' : read.reason);
      if (input.expectSha && sha(read.bytes) !== input.expectSha) return cantRun('the patch draft changed after its gates passed');
      const pf = await patchFiles(repo, read.bytes);
      if (!pf.ok) return cantRun('refused' in pf ? pf.refused : pf.error);
      const marker = `WARDEN_MESH_CHECK=${input.key}`;
      await killMarked([marker]); // a check left running by a dead worker
      const dir = join(input.integrationDir, '..', 'checks', input.key.replace(/[^A-Za-z0-9._-]/g, '_'));
      await removeWorktree(repo, dir);
      const activity = currentActivity();
      const beat = setInterval(() => activity?.heartbeat(), 1_000);
      try {
        const integrationHead = input.head ?? (await gitOk(await worktreePlace(repo, input.integrationDir), ['rev-parse', 'HEAD']));
        let on: string | null = null;
        for (const base of [integrationHead, input.diffBase]) {
          await removeWorktree(repo, dir);
          await gitOk(repo, ['worktree', 'add', '--detach', '-q', dir, base]);
          const place = await worktreePlace(repo, dir);
          if ((await git(place, ['apply', '--index', '-'], { input: read.bytes })).ok) {
            on = base;
            break;
          }
        }
        if (on === null)
          return cantRun(`the gated patch applies neither on the integration head ${integrationHead.slice(0, 12)} nor on ${input.diffBase.slice(0, 12)}`);
        mlog.info({ key: input.key, dir, on }, 'task check on the integration head plus the gated patch');
        const r = await runCheck({ command: input.command, cwd: dir, timeoutMs: input.timeoutMs, marker, env: { WARDEN_MESH_CHECK: input.key } });
        return { ...r, checkedOn: on };
      } finally {
        clearInterval(beat);
        await removeWorktree(repo, dir).catch((err: unknown) => mlog.warn({ err: String(err), dir }, 'could not remove a check worktree'));
      }
    },

    async meshApply(input) {
      // The only step that runs the user's own config and hooks: in the user's checkout, on their command.
      const current = (await git(input.repo, ['symbolic-ref', '--short', 'HEAD'])).stdout.trim();
      if (current !== input.userBranch)
        throw ApplicationFailure.nonRetryable(
          `the repository is on ${current || 'a detached HEAD'}, not ${input.userBranch}: check out ${input.userBranch} and apply again`,
          'MeshApplyError',
        );
      const head = await gitOk(input.repo, ['rev-parse', input.integrationBranch]);
      if ((await git(input.repo, ['merge-base', '--is-ancestor', head, 'HEAD'])).ok)
        return { commit: await gitOk(input.repo, ['rev-parse', 'HEAD']), branch: current };
      // The merge runs the hooks (and reads the config) in the checkout: never ones the run's patches
      // wrote. An integration that changes a file under core.hooksPath, or a config file that lies in
      // the work tree (an include.path), is refused before anything changes.
      const touched = await hookOrConfigChanges(input.repo, head);
      if (touched)
        throw ApplicationFailure.nonRetryable(
          `${input.integrationBranch} changes ${touched}, whose hooks or config would run in your checkout at the merge; not merged, nothing changed. Review the change and merge ${input.integrationBranch} yourself if you trust it`,
          'MeshApplyError',
        );
      const merge = await userGit(input.repo, [
        '-c',
        'user.name=warden-mesh',
        '-c',
        'user.email=mesh@warden.local',
        'merge',
        '--no-ff',
        '--no-edit',
        '-m',
        `mesh ${input.runId}: merge ${input.integrationBranch}`,
        input.integrationBranch,
      ]);
      if (!merge.ok) {
        await userGit(input.repo, ['merge', '--abort']);
        throw ApplicationFailure.nonRetryable(
          `merge of ${input.integrationBranch} into ${current} failed: ${merge.stderr.trim() || merge.stdout.trim()}`,
          'MeshApplyError',
        );
      }
      return { commit: await gitOk(input.repo, ['rev-parse', 'HEAD']), branch: current };
    },

    async meshCleanup(input) {
      // Idempotent: each step looks at what is there now, so a retry after a worker died half-way
      // removes only what is left (and a second run finds nothing).
      const top = await git(input.repo, ['rev-parse', '--show-toplevel']);
      if (!top.ok) return { worktrees: [], branches: [] }; // the repository is gone: nothing of ours to remove
      const root = top.stdout.trim();
      const dir = runDir(root, input.runId);
      const listed = await gitOk(root, ['worktree', 'list', '--porcelain']);
      const ours = listed
        .split('\n')
        .filter((l) => l.startsWith('worktree '))
        .map((l) => l.slice('worktree '.length))
        .filter((p) => p.startsWith(`${dir}/`));
      const worktrees: string[] = [];
      for (const p of ours) {
        // --force twice: also a worktree with changes or a lock (a worker killed mid-edit). A path a
        // worker swapped for a symlink is only unlinked: nothing is removed through it.
        const st = await lstat(p).catch(() => null);
        const dirOk = st?.isDirectory() === true;
        if (!dirOk || !(await git(root, ['worktree', 'remove', '--force', '--force', p])).ok) await rm(p, { recursive: dirOk, force: true });
        worktrees.push(p);
      }
      // Directories git no longer lists (a removal interrupted between its steps), then git's records of them.
      for (const d of ['worktrees', 'integration', 'checks']) await rm(join(dir, d), { recursive: true, force: true });
      await gitOk(root, ['worktree', 'prune']);
      const refs = (await gitOk(root, ['for-each-ref', '--format=%(refname)', `refs/heads/mesh/${input.runId}/`])).split('\n').filter(Boolean);
      for (const ref of refs) await gitOk(root, ['update-ref', '-d', ref]);
      const branches = refs.map((r) => r.replace(/^refs\/heads\//, ''));
      mlog.info({ runId: input.runId, worktrees, branches }, 'mesh worktrees and branches removed');
      return { worktrees, branches };
    },

    async meshRemoveAttempt(input) {
      // One replaced attempt's worktree and branch; the path is warden's own (as meshPrepareAttempt
      // made it), never one from the attempt's output. Idempotent like meshCleanup.
      const top = await git(input.repo, ['rev-parse', '--show-toplevel']);
      if (!top.ok) return { worktree: null, branch: null };
      const root = top.stdout.trim();
      const p = join(runDir(root, input.runId), 'worktrees', `${input.slug}--a${input.attempt}`);
      const branch = attemptBranch(input.runId, input.slug, input.attempt);
      const st = await lstat(p).catch(() => null);
      let worktree: string | null = null;
      if (st) {
        const dirOk = st.isDirectory();
        if (!dirOk || !(await git(root, ['worktree', 'remove', '--force', '--force', p])).ok) await rm(p, { recursive: dirOk, force: true });
        worktree = p;
      }
      await gitOk(root, ['worktree', 'prune']);
      const had = (await git(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).ok;
      if (had) await gitOk(root, ['update-ref', '-d', `refs/heads/${branch}`]);
      mlog.info({ runId: input.runId, worktree, branch: had ? branch : null }, 'replaced attempt removed');
      return { worktree, branch: had ? branch : null };
    },
  };
}
