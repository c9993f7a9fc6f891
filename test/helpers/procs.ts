/** Looking at real processes through /proc (Linux): is it running, who carries a marker, its argv. */
import { readdirSync, readFileSync } from 'node:fs';

/** Is `pid` a running (non-zombie) process? */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Running processes with `needle` (NAME=value) in their environment, e.g. `CODEX_HOME=/tmp/x`. */
export function processesWithEnv(needle: string): number[] {
  const marker = `${needle}\0`;
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/environ`, 'latin1').includes(marker) && running(Number(e))) pids.push(Number(e));
    } catch {
      /* gone or not readable */
    }
  }
  return pids;
}

export function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** Running processes whose command line contains `needle` (e.g. a unique tag in a daemon's script). */
export function processesWithArg(needle: string): number[] {
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(needle) && running(Number(e))) pids.push(Number(e));
    } catch {
      /* gone or not readable */
    }
  }
  return pids;
}
