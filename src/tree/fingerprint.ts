/**
 * The working tree's fingerprint when a turn ends (TreeFingerprintSchema in the contract): HEAD,
 * a hash of what `git status` and `git diff HEAD` print, and how many paths differ from HEAD. Read
 * by the hook handler (hooked agents, in the session's directory) and the driven-turn activity
 * (driven agents, in their working directory).
 *
 * Cheap and bounded, because a hook waits for it: two git processes at once (status and diff; two
 * before them find the top of the tree and list the filter drivers to switch off), each read up to `maxBytes` and killed
 * there (the fingerprint is then `partial`), all of it under `timeoutMs` (past it: no fingerprint,
 * never a wait). Untracked files count by name, size and modification time (their content is not
 * in any diff), at most MAX_UNTRACKED of them.
 *
 * The tree is the agent's, so untrusted: git runs with no hooks, no fsmonitor, no external diff or
 * textconv, every configured filter driver emptied, no optional locks (the agent's own git never
 * finds an index.lock of warden's), and the operator-allowed environment only (subprocessEnv).
 */
import { spawn } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { subprocessEnv } from '../config/worker.js';
import type { TreeFingerprint } from '../domain/contract/schemas.js';

/** The whole read gives up after this long: the turn goes without a fingerprint. */
export const TREE_TIMEOUT_MS = 200;
const MAX_TIMEOUT_MS = 10_000;

/**
 * The read's time limit from `WARDEN_TREE_TIMEOUT_MS` (of the process that reads: `warden serve`,
 * `warden hook`, the worker): whole milliseconds up to 10000, `0` switches fingerprints off;
 * anything else is the default, TREE_TIMEOUT_MS.
 */
export function treeTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.WARDEN_TREE_TIMEOUT_MS?.trim();
  if (!v || !/^\d+$/.test(v)) return TREE_TIMEOUT_MS;
  return Math.min(Number(v), MAX_TIMEOUT_MS);
}
/** Bytes read of each git output; past it the output is cut and the fingerprint `partial`. */
export const TREE_MAX_BYTES = 512 * 1024;
/** Untracked files whose size and modification time are hashed. */
export const MAX_UNTRACKED = 200;

const HARDENING = ['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'core.untrackedCache=false', 'diff.external=', 'core.quotePath=false'].flatMap((c) => [
  '-c',
  c,
]);

interface Run {
  ok: boolean;
  out: Buffer;
  capped: boolean;
}

/** git in `cwd`: stdout up to `maxBytes` (then killed), into `hash` as well when given. Never throws. */
function git(cwd: string, args: string[], signal: AbortSignal, maxBytes: number, hash?: Hash): Promise<Run> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let capped = false;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('git', args, {
        cwd,
        signal,
        stdio: ['ignore', 'pipe', 'ignore'],
        env: subprocessEnv({
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_ATTR_NOSYSTEM: '1',
          GIT_TERMINAL_PROMPT: '0',
          GIT_OPTIONAL_LOCKS: '0',
          GIT_PAGER: 'cat',
          GIT_NO_REPLACE_OBJECTS: '1',
        }),
      });
    } catch {
      return resolve({ ok: false, out: Buffer.alloc(0), capped: false });
    }
    child.stdout!.on('data', (chunk: Buffer) => {
      if (capped) return;
      const room = maxBytes - size;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      size += part.length;
      hash?.update(part);
      if (!hash) chunks.push(part);
      if (chunk.length > room) {
        capped = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', () => resolve({ ok: false, out: Buffer.concat(chunks), capped }));
    child.on('close', (code) => resolve({ ok: capped || code === 0, out: Buffer.concat(chunks), capped }));
  });
}

/** `-c filter.<driver>.*=` for every filter driver configured for this tree (git would run them on its files). */
async function filterOff(cwd: string, signal: AbortSignal): Promise<string[]> {
  const r = await git(cwd, [...HARDENING, 'config', '--null', '--name-only', '--get-regexp', '^filter\\.'], signal, 64 * 1024);
  const drivers = new Set<string>();
  for (const name of r.out.toString('utf8').split('\0')) {
    const m = /^filter\.(.+)\.[^.]+$/s.exec(name);
    if (m) drivers.add(m[1]!);
  }
  return [...drivers].flatMap((d) => [...['clean', 'smudge', 'process'].flatMap((k) => ['-c', `filter.${d}.${k}=`]), '-c', `filter.${d}.required=false`]);
}

/**
 * The porcelain v2 status (`-z`, `--branch`) read: HEAD, the number of paths that differ from HEAD
 * (changed, unmerged or untracked; ignored files are not listed), and the untracked paths. Pure.
 */
export function parseStatus(text: string): { head: string | null; files: number; untracked: string[] } {
  let head: string | null = null;
  let files = 0;
  const untracked: string[] = [];
  const entries = text.split('\0');
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.startsWith('# branch.oid ')) {
      const oid = e.slice('# branch.oid '.length).trim();
      head = /^[0-9a-f]{7,64}$/.test(oid) ? oid : null; // "(initial)": no commit yet
    } else if (e.startsWith('1 ') || e.startsWith('u ')) files++;
    else if (e.startsWith('2 ')) {
      files++;
      i++; // a rename's original path follows as its own entry
    } else if (e.startsWith('? ')) {
      files++;
      untracked.push(e.slice(2));
    }
  }
  return { head, files, untracked };
}

/**
 * The fingerprint of the working tree at `cwd`, or null: not a git work tree, git missing or
 * failing, slower than `timeoutMs` (default: treeTimeoutMs()), or switched off. Never throws.
 */
export async function treeFingerprint(cwd: string, opts: { timeoutMs?: number; maxBytes?: number } = {}): Promise<TreeFingerprint | null> {
  const timeoutMs = opts.timeoutMs ?? treeTimeoutMs();
  const maxBytes = opts.maxBytes ?? TREE_MAX_BYTES;
  if (timeoutMs <= 0) return null; // switched off
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  try {
    const read = async (): Promise<TreeFingerprint | null> => {
      const [off, top] = await Promise.all([filterOff(cwd, ac.signal), git(cwd, [...HARDENING, 'rev-parse', '--show-toplevel'], ac.signal, 64 * 1024)]);
      if (!top.ok) return null; // not a work tree
      const root = top.out.toString('utf8').replace(/\n$/, '');
      const base = [...HARDENING, ...off];
      const diffHash = createHash('sha256');
      const [status, diff] = await Promise.all([
        git(
          cwd,
          [...base, 'status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=dirty'],
          ac.signal,
          maxBytes,
        ),
        git(
          cwd,
          [...base, 'diff', 'HEAD', '--no-ext-diff', '--no-textconv', '--no-color', '--no-renames', '--ignore-submodules=dirty'],
          ac.signal,
          maxBytes,
          diffHash,
        ),
      ]);
      if (!status.ok || ac.signal.aborted) return null;
      const text = status.out.toString('utf8');
      const s = parseStatus(text);
      const h = createHash('sha256');
      // The branch name and upstream counts are not the tree: only the entries and HEAD are hashed.
      h.update(text.replace(/# branch\.(?:head|upstream|ab) [^\0]*\0/g, ''));
      h.update('\0diff\0');
      h.update(diff.ok ? diffHash.digest() : Buffer.alloc(0));
      h.update('\0untracked\0');
      const stats = await Promise.all(
        s.untracked.slice(0, MAX_UNTRACKED).map((p) =>
          stat(join(root, p)).then(
            (st) => `${p}\0${st.size}\0${st.mtimeMs}`,
            () => `${p}\0?`,
          ),
        ),
      );
      h.update(stats.join('\0'));
      if (ac.signal.aborted) return null;
      const partial = status.capped || diff.capped || s.untracked.length > MAX_UNTRACKED;
      return { head: s.head, hash: h.digest('hex').slice(0, 16), files: s.files, ...(partial ? { partial: true } : {}) };
    };
    const aborted = new Promise<null>((resolve) => ac.signal.addEventListener('abort', () => resolve(null), { once: true }));
    return await Promise.race([read().catch(() => null), aborted]);
  } finally {
    clearTimeout(timer);
    ac.abort(); // anything still running is killed
  }
}
