import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseStat, readCpuMs, readTreeCpuMs, treeCpuMs, type ProcStat } from '../../bench/proc-cpu.js';

// A /proc/<pid>/stat line: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
const statLine = (pid: number, comm: string, ppid: number, utime: number, stime: number, cutime: number, cstime: number) =>
  `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 100 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 1 0 100 1000 50\n`;

describe('parseStat', () => {
  it('reads the parent, own and reaped-children ticks', () => {
    expect(parseStat(statLine(42, 'postgres', 1, 7, 3, 20, 5))).toEqual({ ppid: 1, ownTicks: 10, reapedChildTicks: 25 });
  });

  it('takes a process name with spaces and parentheses', () => {
    expect(parseStat(statLine(43, 'postgres: temporal (idle) x', 42, 1, 2, 0, 0))).toEqual({ ppid: 42, ownTicks: 3, reapedChildTicks: 0 });
  });

  it('refuses a line without the fields', () => {
    expect(parseStat('garbage')).toBeNull();
    expect(parseStat('12 (x) S 1 2 3')).toBeNull();
  });
});

describe('treeCpuMs', () => {
  const table = new Map<number, ProcStat>([
    [1, { ppid: 0, ownTicks: 1000, reapedChildTicks: 0 }], // init: not part of any tree asked for
    [100, { ppid: 1, ownTicks: 50, reapedChildTicks: 10 }], // postmaster (10 ticks of backends that exited)
    [101, { ppid: 100, ownTicks: 20, reapedChildTicks: 0 }], // backend
    [102, { ppid: 100, ownTicks: 30, reapedChildTicks: 0 }], // backend
    [103, { ppid: 102, ownTicks: 5, reapedChildTicks: 1 }], // its child
    [200, { ppid: 1, ownTicks: 400, reapedChildTicks: 0 }], // temporal-server
    [300, { ppid: 1, ownTicks: 9, reapedChildTicks: 0 }], // something else
  ]);

  it('sums each root and its live descendants, reaped children included, in ms (100 ticks a second)', () => {
    expect(treeCpuMs([100], table)).toBe((50 + 10 + 20 + 30 + 5 + 1) * 10);
    expect(treeCpuMs([100, 200], table)).toBe((116 + 400) * 10);
  });

  it('counts a process once when one root is inside another root tree', () => {
    expect(treeCpuMs([100, 102], table)).toBe(116 * 10);
  });

  it('is null when a root has exited', () => {
    expect(treeCpuMs([100, 999], table)).toBeNull();
  });

  it('keeps a difference right when a backend exits between two readings', () => {
    const before = treeCpuMs([100], table)!;
    // Backend 101 ran 5 more ticks, exited and was reaped by the postmaster.
    const after = new Map(table);
    after.delete(101);
    after.set(100, { ppid: 1, ownTicks: 50, reapedChildTicks: 10 + 25 });
    expect(treeCpuMs([100], after)! - before).toBe(5 * 10);
  });
});

describe('reading /proc', () => {
  it.runIf(process.platform === 'linux')('counts a child process in its parent tree while it runs and after it is reaped', async () => {
    const tree0 = readTreeCpuMs([process.pid])!;
    const own0 = readCpuMs(process.pid)!;
    // The child spins until it has used 200 ms of CPU (however loaded the box), says so, and waits.
    const child = spawn(process.execPath, ['-e', 'while (process.cpuUsage().user < 200_000); process.stdout.write("spun"); setTimeout(() => {}, 60_000);'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await new Promise((resolve) => child.stdout.once('data', resolve));
    const children = (tree: number, own: number) => tree - tree0 - (own - own0);
    // Alive: counted as a descendant (the parent's own time, which other test threads share, is taken out).
    expect(children(readTreeCpuMs([process.pid])!, readCpuMs(process.pid)!)).toBeGreaterThanOrEqual(150);
    child.kill('SIGKILL');
    await exited;
    // Reaped: its time moved into this process's cutime, not lost.
    expect(children(readTreeCpuMs([process.pid])!, readCpuMs(process.pid)!)).toBeGreaterThanOrEqual(150);
    expect(readTreeCpuMs([2 ** 31 - 2])).toBeNull();
  });
});
