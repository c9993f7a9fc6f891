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
  /**
   * Record every descendant of the child while it runs (DescendantTracker) and kill those left
   * when it ends, also one that left the group and session (`setsid`).
   */
  track?: boolean;
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
  const tracker = run.track && pid !== undefined ? new DescendantTracker(pid) : undefined;
  // Contained (a check): once the leader exits, whatever it started goes, at once, so that a
  // leftover holding the output pipes open cannot keep the call (and the check) waiting.
  let contained: Promise<unknown> | undefined;
  if (tracker && pid !== undefined)
    child.once('exit', () => {
      contained = reapTree(pid, run.marker).then(() => tracker.killAll());
    });
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
      await contained;
      await reapTree(pid, run.marker);
      await tracker?.killAll();
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

/**
 * How a check's processes are contained, so that every descendant dies with the check, including one
 * that left the check's process group and session (`setsid … &`):
 *  - `pid-namespace`: the command runs as the first process of its own PID namespace
 *    (util-linux `unshare --pid --fork --kill-child`, with `--user --map-current-user` when the
 *    worker may not create one otherwise). When that process ends, or `unshare` is killed, the
 *    kernel kills every process left in the namespace: nothing can outlive the check.
 *  - `track`: where no namespace can be made (no `unshare`, user namespaces off), warden polls
 *    /proc while the check runs (every TRACK_INTERVAL_MS) and records every process descended from
 *    the check (by parent, process group or session), then kills what is left of them at the end. A
 *    process that detaches and whose parent exits between two polls is not seen.
 * In both, the check's process group and every process carrying its marker are killed too.
 */
export type Containment = { kind: 'pid-namespace'; prefix: string[] } | { kind: 'track' };

const NAMESPACE_FLAGS: readonly string[][] = [
  ['--pid', '--fork', '--kill-child'],
  ['--user', '--map-current-user', '--pid', '--fork', '--kill-child'],
];
let probed: Promise<Containment> | undefined;

/** The best containment this host offers (probed once per process: `unshare … sh -c 'exit 0'`). */
export function checkContainment(): Promise<Containment> {
  probed ??= (async () => {
    if (process.platform !== 'linux') return { kind: 'track' } as const;
    for (const flags of NAMESPACE_FLAGS) {
      const r = await execa('unshare', [...flags, 'sh', '-c', 'exit 0'], {
        reject: false,
        stdin: 'ignore',
        timeout: 10_000,
        env: subprocessEnv(),
        extendEnv: false,
      });
      if (r.exitCode === 0) return { kind: 'pid-namespace', prefix: ['unshare', ...flags] } as const;
    }
    return { kind: 'track' } as const;
  })();
  return probed;
}

/** How often the `track` layer looks at /proc while a check runs. */
export const TRACK_INTERVAL_MS = 50;

interface ProcRow {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  start: string;
}

/** Living processes from /proc (not zombies); null off Linux. */
function procTable(): ProcRow[] | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const rows: ProcRow[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] === 'Z' || f[0] === 'X') continue;
      rows.push({ pid: Number(e), ppid: Number(f[1]), pgrp: Number(f[2]), session: Number(f[3]), start: f[19] ?? '' });
    } catch {
      /* gone */
    }
  }
  return rows;
}

/**
 * The `track` layer: every process descended from `root` (a session and group leader: spawned
 * detached) seen while it runs, by pid and start time (a reused pid is never taken for one of them).
 */
export class DescendantTracker {
  private readonly seen = new Map<number, string>();
  private readonly timer: NodeJS.Timeout;
  private rootStart: string | undefined;
  constructor(private readonly root: number) {
    this.scan();
    this.timer = setInterval(() => this.scan(), TRACK_INTERVAL_MS);
    this.timer.unref();
  }

  /**
   * One pass: the root, its group and session while the root lives (so a reused id is never
   * taken for them), and, to a fixpoint, the children of any process already seen.
   */
  scan(): ProcRow[] {
    const rows = procTable() ?? [];
    const byPid = new Map(rows.map((r) => [r.pid, r]));
    if (this.rootStart === undefined) this.rootStart = byPid.get(this.root)?.start ?? '';
    const rootAlive = this.rootStart !== '' && byPid.get(this.root)?.start === this.rootStart;
    if (rootAlive) this.seen.set(this.root, this.rootStart);
    const ours = (r: ProcRow | undefined) => r !== undefined && this.seen.get(r.pid) === r.start;
    let grew = true;
    while (grew) {
      grew = false;
      for (const r of rows) {
        if (ours(r)) continue;
        if ((rootAlive && (r.pgrp === this.root || r.session === this.root)) || ours(byPid.get(r.ppid))) {
          this.seen.set(r.pid, r.start);
          grew = true;
        }
      }
    }
    return rows.filter((r) => ours(r));
  }

  /** Stop looking; SIGKILL every process seen (and its descendants) still alive, and wait (bounded) until none is. */
  async killAll(): Promise<number[]> {
    clearInterval(this.timer);
    const killed = new Set<number>();
    for (let i = 0; i < 100; i++) {
      const left = this.scan();
      if (left.length === 0) break;
      for (const r of left) {
        killed.add(r.pid);
        try {
          process.kill(r.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      await new Promise((res) => setTimeout(res, 30));
    }
    return [...killed];
  }
}
