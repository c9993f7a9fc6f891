/**
 * `warden server` owns its Temporal dev server: a SIGKILL of warden — of its whole process group,
 * or of the warden process alone — does not leave Temporal running on the port and the database.
 * Real processes throughout: the built CLI, the real temporal binary, real signals.
 */
import { Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { freePorts } from '../../src/devserver/ports.js';
import { ROOT, cleanup, eventually } from '../helpers/stack.js';

const MAIN = join(ROOT, 'dist/src/cli/main.js');
const scratch = mkdtempSync(join(tmpdir(), 'warden-own-'));
const started: ChildProcess[] = [];

afterAll(async () => {
  for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  // Nothing of ours may stay behind, whatever happened in the tests.
  for (const pid of temporalOn(scratch)) process.kill(pid, 'SIGKILL');
  cleanup(scratch);
});

/** The pids of `temporal server start-dev` processes whose command line names a path under `dir`. */
function temporalOn(dir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      if (cmd.includes('start-dev') && cmd.some((a) => a.startsWith(dir))) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `warden server` in a process group of its own (as a shell job is); resolves once it says it is up. */
async function wardenServer(port: number, uiPort: number, db: string): Promise<{ proc: ChildProcess; output: () => string }> {
  const proc = spawn(process.execPath, [MAIN, 'server', '--port', String(port), '--ui-port', String(uiPort), '--db', db], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  let out = '';
  proc.stdout!.on('data', (c) => (out += String(c)));
  proc.stderr!.on('data', (c) => (out += String(c)));
  const exited = new Promise<never>((_, reject) => proc.once('exit', (code, sig) => reject(new Error(`warden server exited (${code ?? sig}): ${out}`))));
  const up = eventually(async () => /Temporal dev server at /.test(out), { timeoutMs: 120_000, intervalMs: 200, what: `warden server up (${out})` });
  await Promise.race([up, exited]);
  return { proc, output: () => out };
}

async function answers(port: number): Promise<boolean> {
  const conn = await Connection.connect({ address: `127.0.0.1:${port}`, connectTimeout: 5_000 });
  try {
    await conn.workflowService.describeNamespace({ namespace: 'default' });
    return true;
  } finally {
    await conn.close();
  }
}

const exitOf = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => p.once('exit', () => r())));

async function killedThenRestarted(how: 'group' | 'warden only') {
  const dir = mkdtempSync(join(scratch, 'run-'));
  const db = join(dir, 'temporal.db');
  const [port, uiPort] = await freePorts(2);
  const first = await wardenServer(port!, uiPort!, db);
  expect(await answers(port!)).toBe(true);
  const temporalPids = temporalOn(dir);
  expect(temporalPids).toHaveLength(1);

  // kill -9 -PGID, or kill -9 PID: neither can be trapped.
  process.kill(how === 'group' ? -first.proc.pid! : first.proc.pid!, 'SIGKILL');
  await exitOf(first.proc);

  // The same port and database: it comes up and answers.
  const second = await wardenServer(port!, uiPort!, db);
  expect(await answers(port!)).toBe(true);
  expect(temporalOn(dir)).not.toContain(temporalPids[0]);
  expect(temporalOn(dir)).toHaveLength(1);

  // A normal stop leaves nothing behind either.
  second.proc.kill('SIGTERM');
  await exitOf(second.proc);
  await eventually(async () => temporalOn(dir).length === 0, { timeoutMs: 30_000, what: 'no temporal process left' });
  return second.output();
}

test("kill -9 of warden server's process group: Temporal goes too; a restart on the same port and db comes up", async () => {
  await killedThenRestarted('group');
}, 240_000);

test('kill -9 of the warden process alone: Temporal does not outlive it; a restart on the same port and db comes up', async () => {
  await killedThenRestarted('warden only');
}, 240_000);

test('a server whose warden and watchdog were both SIGKILLed is found through the pid file beside the db and stopped at the next start', async () => {
  const dir = mkdtempSync(join(scratch, 'run-'));
  const db = join(dir, 'temporal.db');
  const [port, uiPort] = await freePorts(2);
  const first = await wardenServer(port!, uiPort!, db);
  const record = JSON.parse(readFileSync(`${db}.pid`, 'utf8')) as { wardenPid: number; temporalPid: number; port: number };
  expect(record).toMatchObject({ wardenPid: first.proc.pid, port });
  expect(temporalOn(dir)).toEqual([record.temporalPid]);
  // The watchdog (a shell loop in its own session, naming both pids) goes first, then warden.
  const watchdogs = readdirSync('/proc').filter((n) => {
    try {
      const cmd = readFileSync(`/proc/${n}/cmdline`, 'utf8').split('\0');
      return cmd.includes('warden-watchdog') && cmd.includes(String(record.temporalPid));
    } catch {
      return false;
    }
  });
  expect(watchdogs).toHaveLength(1);
  process.kill(Number(watchdogs[0]), 'SIGKILL');
  process.kill(first.proc.pid!, 'SIGKILL');
  await exitOf(first.proc);
  expect(temporalOn(dir)).toEqual([record.temporalPid]); // nothing left to stop it: the leftover case

  const second = await wardenServer(port!, uiPort!, db);
  expect(second.output()).toContain(
    `a Temporal dev server (pid ${record.temporalPid}, port ${port}) was left running on ${db} by a warden that is gone (pid ${record.wardenPid}); stopping it`,
  );
  expect(await answers(port!)).toBe(true);
  expect(temporalOn(dir)).not.toContain(record.temporalPid);
  second.proc.kill('SIGTERM');
  await exitOf(second.proc);
  await eventually(async () => temporalOn(dir).length === 0, { timeoutMs: 30_000, what: 'no temporal process left' });
}, 240_000);

test('a second warden server on a database whose warden is still running is refused, naming it; the first one is untouched', async () => {
  const dir = mkdtempSync(join(scratch, 'run-'));
  const db = join(dir, 'temporal.db');
  const [port, uiPort, port2, uiPort2] = await freePorts(4);
  const first = await wardenServer(port!, uiPort!, db);
  const record = JSON.parse(readFileSync(`${db}.pid`, 'utf8')) as { wardenPid: number; temporalPid: number };
  const second = spawn(process.execPath, [MAIN, 'server', '--port', String(port2), '--ui-port', String(uiPort2), '--db', db], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(second);
  let out = '';
  second.stdout!.on('data', (c) => (out += String(c)));
  second.stderr!.on('data', (c) => (out += String(c)));
  const code = await new Promise<number | null>((r) => second.once('exit', (c) => r(c)));
  expect(code).toBe(1);
  expect(out).toContain(
    `the database ${db} is in use by a running warden (pid ${record.wardenPid}, its Temporal server pid ${record.temporalPid}, port ${port})`,
  );
  expect(await answers(port!)).toBe(true);
  first.proc.kill('SIGTERM');
  await exitOf(first.proc);
  await eventually(async () => temporalOn(dir).length === 0, { timeoutMs: 30_000, what: 'no temporal process left' });
}, 240_000);
