/**
 * Checking a done-claim (src/domain/agent/verification.ts): the verify command, run with `sh -c` in
 * the agent's working directory, in its own process group with the operator's subprocess
 * environment (never the worker's), killed as a group at its timeout; and the working tree's changes
 * to protected paths since the agent's start commit, read with the same hardened git as the mesh
 * (hooks, fsmonitor, external diff, textconv and the tree's filter drivers off; activities/mesh/git.ts). The activity heartbeats, so a worker that dies mid-check is noticed and
 * the check runs again; leftovers of an earlier attempt are killed first.
 */
import { Context } from '@temporalio/activity';
import { existsSync } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { BaselineOutput, ProtectedDiffInput, ProtectedDiffOutput, VerifyInput, VerifyOutput, VerifyPlace } from '../src/domain/contract/activity-types.js';
import { matchesProtect, parseNameStatusZ, protectedChanges, withUntracked } from '../src/domain/judgement/heuristic/protected.js';
import { MAX_PROTECTED_CHANGES } from '../src/domain/contract/limits.js';
import { VERIFY_OUTPUT_TAIL_BYTES, utf8Bytes } from '../src/domain/contract/limits.js';
import { subprocessEnv } from '../src/config/worker.js';
import { checkContainment, killMarked, runInGroup } from './process-group.js';
import { agentDirs } from './turn.js';
import { git as hardenedGit } from './mesh/git.js';

/** SIGTERM, then SIGKILL of the command's group this long after its timeout. */
const KILL_GRACE_MS = 2_000;
const GIT_TIMEOUT_MS = 30_000;

/** verify.cwd, else a driven agent's working directory, else spec.driven.workDir, else the worker's. */
export function checkDir(p: VerifyPlace): string {
  if (p.cwd) return resolve(p.cwd);
  if (p.driven) return agentDirs(p.agentId, p.workDir).workDir;
  return resolve(p.workDir ?? process.cwd());
}

/** The last `maxBytes` of `text` (UTF-8), marked when cut. */
export function tailBytes(text: string, maxBytes = VERIFY_OUTPUT_TAIL_BYTES): string {
  if (utf8Bytes(text) <= maxBytes) return text;
  const buf = Buffer.from(text, 'utf8');
  let start = buf.length - maxBytes + 2;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start += 1; // not inside a character
  return `…${buf.subarray(start).toString('utf8')}`;
}

async function git(cwd: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const r = await hardenedGit(cwd, ['-c', 'core.quotePath=false', ...args], { timeoutMs: GIT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  return { ok: r.ok, stdout: r.stdout, stderr: r.stderr };
}

export function makeStartCommit(log: Logger) {
  return async function startCommit(input: VerifyPlace): Promise<BaselineOutput> {
    const cwd = checkDir(input);
    if (!existsSync(cwd)) return { commit: null, reason: `${cwd} does not exist`, cwd };
    const r = await git(cwd, ['rev-parse', '--verify', 'HEAD^{commit}']);
    const commit = r.stdout.trim();
    if (!r.ok || !/^[0-9a-f]{40,64}$/.test(commit))
      return { commit: null, reason: `not a git repository with a commit (${r.stderr.trim().slice(0, 200)})`, cwd };
    log.info({ agentId: input.agentId, cwd, commit }, 'start commit recorded for protected paths');
    return { commit, cwd };
  };
}

/** An untracked protected file is read for its line and assertion counts only up to this size. */
const UNTRACKED_READ_MAX_BYTES = 1024 * 1024;

/**
 * Untracked files (not ignored) under the repository, by path from its root, and for the protected
 * ones their text (a regular file up to UNTRACKED_READ_MAX_BYTES; else null: counted, not read).
 */
async function untrackedProtected(cwd: string, globs: readonly string[]): Promise<Array<{ path: string; text: string | null }>> {
  const top = await git(cwd, ['rev-parse', '--show-toplevel']);
  if (!top.ok || !top.stdout.trim()) return [];
  const root = top.stdout.trim();
  const list = await git(root, ['ls-files', '--others', '--exclude-standard', '-z']);
  if (!list.ok) return [];
  const paths = list.stdout
    .split('\0')
    .filter((p) => p && matchesProtect(p, globs))
    .slice(0, MAX_PROTECTED_CHANGES);
  return Promise.all(
    paths.map(async (path) => {
      try {
        const st = await lstat(join(root, path));
        if (!st.isFile() || st.size > UNTRACKED_READ_MAX_BYTES) return { path, text: null };
        return { path, text: await readFile(join(root, path), 'utf8') };
      } catch {
        return { path, text: null };
      }
    }),
  );
}

/**
 * The working tree's changes to protected paths since `baseCommit`: tracked files changed, renamed
 * or deleted (`git diff <base>`), and new untracked files (which `git diff` does not show).
 */
export async function readProtected(cwd: string, input: ProtectedDiffInput): Promise<ProtectedDiffOutput> {
  if (input.protect.length === 0) return { protectedChanges: [] };
  if (!input.baseCommit) return { protectedChanges: [], protectedError: 'no start commit (not a git repository when the agent started)' };
  const base = ['diff', '--no-ext-diff', '--no-textconv', '--no-color', '-M', input.baseCommit];
  const [names, nums] = await Promise.all([git(cwd, [...base, '--name-status', '-z']), git(cwd, [...base, '--numstat', '-z'])]);
  if (!names.ok || !nums.ok) return { protectedChanges: [], protectedError: `git diff failed: ${(names.stderr || nums.stderr).trim().slice(0, 300)}` };
  // Only the protected files' text is read, for their assertion counts.
  const first = protectedChanges(names.stdout, nums.stdout, '', input.protect);
  const paths = parseNameStatusZ(names.stdout)
    .filter((e) => first.some((c) => c.path === e.paths.join(' -> ') || c.path === e.paths.at(-1)))
    .flatMap((e) => e.paths);
  const diff = paths.length ? await git(cwd, [...base, '-U0', '--', ...paths.map((p) => `:(top,literal)${p}`)]) : { ok: true, stdout: '', stderr: '' };
  const tracked = protectedChanges(names.stdout, nums.stdout, diff.ok ? diff.stdout : '', input.protect);
  return { protectedChanges: withUntracked(tracked, await untrackedProtected(cwd, input.protect), input.protect) };
}

/** Before an evaluation (AgentSpec.protect): the protected paths' changes, as evidence for the evaluator. */
export function makeProtectedDiff(log: Logger) {
  return async function protectedDiff(input: ProtectedDiffInput): Promise<ProtectedDiffOutput> {
    const cwd = checkDir(input);
    if (!existsSync(cwd)) return { protectedChanges: [], protectedError: `${cwd} does not exist` };
    const out = await readProtected(cwd, input);
    if (out.protectedChanges.length || out.protectedError)
      log.info({ agentId: input.agentId, cwd, changes: out.protectedChanges.length, error: out.protectedError }, 'protected paths read for an evaluation');
    return out;
  };
}

/** One check: `sh -c command` in `cwd`, in its own process group, with the operator's subprocess environment. */
export interface CheckInput {
  command: string;
  cwd: string;
  timeoutMs: number;
  /** `NAME=value` in the command's environment, by which leftovers of a dead attempt are found. */
  marker: string;
  env: Record<string, string>;
  /** `auto` (the default): the best this host offers (process-group.ts checkContainment); `track`: the /proc fallback only. */
  containment?: 'auto' | 'track';
}

export interface CheckOutput {
  exitCode: number | null;
  passed: boolean;
  timedOut: boolean;
  outputTail: string;
}

/**
 * Run a check command the way every check runs (a done-claim's `verify`, the mesh's gate V and task
 * checks): its own process group, killed as a group (SIGTERM, then SIGKILL) at its timeout or when
 * the activity is cancelled, and contained (process-group.ts checkContainment): in its own PID
 * namespace where the host allows one, else with its descendants tracked through /proc, so that
 * nothing it started outlives it, not even a process that left its group and session (`setsid`).
 * stdout and stderr interleaved, the tail kept within the byte budget. Passes only on exit 0 within
 * the time.
 */
export async function runCheck(input: CheckInput): Promise<CheckOutput> {
  const ctx = currentActivity();
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, input.timeoutMs);
  const cancel = () => abort.abort();
  ctx?.cancellationSignal.addEventListener('abort', cancel, { once: true });
  try {
    const contain = input.containment === 'track' ? ({ kind: 'track' } as const) : await checkContainment();
    // In a PID namespace the first process is its init, which ignores a SIGTERM it has no handler
    // for: the command runs as its child, so that the timeout's SIGTERM ends it as anywhere else.
    const [file, ...args] =
      contain.kind === 'pid-namespace' ? [...contain.prefix, 'sh', '-c', 'sh -c "$1"; exit $?', 'sh', input.command] : ['sh', '-c', input.command];
    const r = await runInGroup(
      file!,
      args,
      { cwd: input.cwd, all: true, stdin: 'ignore', env: subprocessEnv(input.env), maxBuffer: 64 * 1024 * 1024 },
      { signal: abort.signal, killGraceMs: KILL_GRACE_MS, marker: input.marker, track: true },
    );
    // Killed at its timeout, a check has no exit code of its own: in a PID namespace the wrapper
    // shell would report the killed command's 143 instead.
    const exitCode = !timedOut && typeof r.exitCode === 'number' ? r.exitCode : null;
    const all = typeof r.all === 'string' ? r.all : `${String(r.stdout ?? '')}${String(r.stderr ?? '')}`;
    const note = timedOut ? `\n[warden: killed after ${Math.round(input.timeoutMs / 1000)} s]` : r.signal ? `\n[warden: ended by ${r.signal}]` : '';
    return { exitCode, passed: !timedOut && exitCode === 0, timedOut, outputTail: tailBytes(`${all}${note}`) };
  } finally {
    clearTimeout(timer);
    ctx?.cancellationSignal.removeEventListener('abort', cancel);
  }
}

/** The running activity's context; none when a check is called outside an activity (a unit test calling it directly). */
export function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

export function makeVerifyDone(log: Logger) {
  return async function verifyDone(input: VerifyInput): Promise<VerifyOutput> {
    const ctx = Context.current();
    const started = Date.now();
    const cwd = checkDir(input);
    const vlog = log.child({ agentId: input.agentId, attempt: ctx.info.attempt, cwd });
    const beat = setInterval(() => ctx.heartbeat(), 1_000);
    try {
      const marker = `WARDEN_VERIFY_AGENT=${input.agentId}`;
      // A worker that died mid-check left its command running (same host): never two at once.
      const stale = await killMarked([marker]);
      if (stale.length) vlog.warn({ pids: stale }, 'killed a verification left running by an earlier attempt');
      if (!existsSync(cwd)) {
        return {
          exitCode: null,
          passed: false,
          timedOut: false,
          outputTail: `working directory ${cwd} does not exist`,
          durationMs: 0,
          cwd,
          protectedChanges: [],
        };
      }
      const prot = await readProtected(cwd, input);
      if (!input.command) return { exitCode: null, passed: true, timedOut: false, outputTail: '', durationMs: Date.now() - started, cwd, ...prot };
      vlog.info({ command: input.command }, 'verification started');
      const r = await runCheck({ command: input.command, cwd, timeoutMs: input.timeoutMs, marker, env: { WARDEN_VERIFY_AGENT: input.agentId } });
      vlog.info({ exitCode: r.exitCode, passed: r.passed, timedOut: r.timedOut }, 'verification finished');
      return { ...r, durationMs: Date.now() - started, cwd, ...prot };
    } finally {
      clearInterval(beat);
    }
  };
}
