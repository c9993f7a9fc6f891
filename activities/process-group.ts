/**
 * Run a child process in its own process group and stop it properly: on abort the whole group gets
 * SIGTERM, then SIGKILL after a grace period (never a hard kill without the grace period), and the
 * call returns only once every process of the group — and every process still carrying `marker` in
 * its environment (a sandboxed child may start its own session) — is gone.
 * Used by the codex evaluator and by the drivers. The child's environment is explicit (`options.env`,
 * else src/config/worker.ts's minimal one): it never inherits the worker's.
 */
import { execa, type Options, type Result } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { subprocessEnv } from '../src/config/worker.js';

export interface GroupRunOptions {
  signal: AbortSignal;
  killGraceMs: number;
  /** `NAME=value` present in the child's environment, used to find stragglers outside the group. */
  marker?: string;
  /** Called once the child has a pid. */
  onSpawn?: (pid: number) => void;
  /** Each complete line of stdout, as it arrives (for streaming JSON events). */
  onStdoutLine?: (line: string) => void;
}

export type GroupRunResult = Result<Options> & { aborted: boolean; pid: number | undefined };

/** Process groups still running: killed if the worker process exits under them. */
const live = new Set<number>();
process.once('exit', () => {
  for (const pgid of live) signalGroup(pgid, 'SIGKILL');
});

export function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* ESRCH: the group is already gone */
  }
}

export async function runInGroup(file: string, args: readonly string[], options: Options, run: GroupRunOptions): Promise<GroupRunResult> {
  // Never the worker's whole environment: the caller's explicit `env`, or the minimal one (src/config/worker.ts).
  const env = options.env ?? subprocessEnv();
  const child = execa(file, args, { ...options, env, extendEnv: false, detached: true, reject: false, buffer: true } as Options);
  const pid = child.pid;
  if (pid !== undefined) {
    live.add(pid);
    run.onSpawn?.(pid);
  }
  if (run.onStdoutLine && child.stdout) {
    let buf = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) run.onStdoutLine!(line);
      }
    });
  }
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    if (pid === undefined) return;
    signalGroup(pid, 'SIGTERM');
    timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), run.killGraceMs);
    timer.unref();
  };
  run.signal.addEventListener('abort', onAbort, { once: true });
  if (run.signal.aborted) onAbort();
  try {
    const result = (await child) as Result<Options>;
    return Object.assign(result, { aborted: run.signal.aborted, pid });
  } finally {
    run.signal.removeEventListener('abort', onAbort);
    if (timer) clearTimeout(timer);
    // The leader may be gone while its children linger: make sure the whole tree is dead.
    if (pid !== undefined) {
      await reapTree(pid, run.marker);
      live.delete(pid);
    }
  }
}

/**
 * Living processes (not zombies) of group `pgid`, plus any process carrying one of `markers` in
 * its environment — one pass over /proc. Linux only; elsewhere, `null`.
 */
export function groupMembers(pgid: number, marker?: string | readonly string[]): number[] | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const needles = (marker === undefined ? [] : typeof marker === 'string' ? [marker] : marker).map((m) => `${m}\0`);
  const found: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ... — comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') continue;
    if (Number(fields[2]) === pgid) {
      found.push(Number(e));
      continue;
    }
    if (needles.length === 0) continue;
    try {
      const environ = readFileSync(`/proc/${e}/environ`, 'latin1');
      if (needles.some((n) => environ.includes(n))) found.push(Number(e));
    } catch {
      /* not ours to read */
    }
  }
  return found;
}

/** SIGKILL whatever is left of the group (and marked stragglers), and wait (bounded) until none runs. */
async function reapTree(pgid: number, marker?: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const members = groupMembers(pgid, marker);
    if (members === null) {
      signalGroup(pgid, 'SIGKILL');
      return;
    }
    if (members.length === 0) return;
    // Signal the members found, not the group id: once the group is empty its id could be reused.
    for (const p of members) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await new Promise((r) => setTimeout(r, 30));
  }
}

/**
 * Kill (SIGKILL) every living process whose environment carries one of `markers` (`NAME=value`),
 * and wait until they are gone. Used before a retried turn: a worker that died by SIGKILL leaves
 * its agent's process group running (same host only), and two copies of one agent must not work
 * in the same directory.
 */
export async function killMarked(markers: readonly string[]): Promise<number[]> {
  // pgid -1 matches no group: only the markers count.
  const find = () => (groupMembers(-1, markers) ?? []).filter((p) => p !== process.pid);
  const killed = find();
  for (let i = 0; i < 100; i++) {
    const left = find();
    if (left.length === 0) break;
    for (const p of left) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await new Promise((r) => setTimeout(r, 30));
  }
  return killed;
}
