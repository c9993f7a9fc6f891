/**
 * CPU time of processes from /proc, for the benchmarks' `cpuMsPerTurn`: one process (a worker, the
 * dev server), or a server that is a tree of processes (PostgreSQL's postmaster and its backends,
 * given with `fleet --server-pid`). Linux only; null where /proc cannot be read.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 1/100 s on Linux. */
const MS_PER_TICK = 10;

export interface ProcStat {
  ppid: number;
  /** utime + stime (fields 14 and 15): the process's own CPU time, in ticks. */
  ownTicks: number;
  /** cutime + cstime (fields 16 and 17): CPU time of its children that exited and were reaped. */
  reapedChildTicks: number;
}

/** Parses /proc/<pid>/stat; null when it does not have the fields. The name (field 2) may hold spaces and parentheses. */
export function parseStat(text: string): ProcStat | null {
  const end = text.lastIndexOf(')');
  if (end < 0) return null;
  const f = text
    .slice(end + 2)
    .trim()
    .split(' '); // f[0] is field 3 (state)
  const n = (i: number) => Number(f[i]);
  const stat = { ppid: n(1), ownTicks: n(11) + n(12), reapedChildTicks: n(13) + n(14) };
  return Object.values(stat).every(Number.isFinite) ? stat : null;
}

/**
 * CPU time, in ms, used so far by the processes `roots` and every live descendant of them, counting
 * each one's reaped children too: a backend that exits between two readings moves its time into
 * its parent's, so differences between readings stay right while the tree changes. Null when a
 * root is not in `table` (it exited).
 */
export function treeCpuMs(roots: readonly number[], table: ReadonlyMap<number, ProcStat>): number | null {
  const children = new Map<number, number[]>();
  for (const [pid, s] of table) {
    const siblings = children.get(s.ppid);
    if (siblings) siblings.push(pid);
    else children.set(s.ppid, [pid]);
  }
  if (roots.some((r) => !table.has(r))) return null;
  let ticks = 0;
  const seen = new Set<number>();
  const stack = [...roots];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue; // a root inside another root's tree counts once
    seen.add(pid);
    const s = table.get(pid);
    if (!s) continue;
    ticks += s.ownTicks + s.reapedChildTicks;
    stack.push(...(children.get(pid) ?? []));
  }
  return ticks * MS_PER_TICK;
}

function readStat(pid: number): ProcStat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null; // exited, or no /proc
  }
}

/** CPU time, in ms, one process has used so far (its own, not its children's); null when unreadable. */
export function readCpuMs(pid: number | undefined): number | null {
  const s = pid ? readStat(pid) : null;
  return s ? s.ownTicks * MS_PER_TICK : null;
}

/** `treeCpuMs` over the live /proc table; null when a root is gone or /proc is unreadable. */
export function readTreeCpuMs(roots: readonly number[]): number | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const table = new Map<number, ProcStat>();
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const s = readStat(Number(e));
    if (s) table.set(Number(e), s);
  }
  return treeCpuMs(roots, table);
}
