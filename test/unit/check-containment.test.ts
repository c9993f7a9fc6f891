/**
 * A check leaves nothing running: a command that starts a daemon in a session of its own and with
 * an empty environment (`setsid env -i sh -c '…' &`, out of the check's process group and without
 * its marker) and exits. After runCheck returns no such process is left, whichever containment
 * runs it: the host's best (a PID namespace here) and the /proc tracking fallback. Real processes.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, expect, test } from 'vitest';
import { checkContainment } from '../../activities/process-group.js';
import { runCheck } from '../../activities/verify.js';
import { processesWithArg as withArg } from '../helpers/procs.js';

const strays: number[] = [];
afterEach(() => {
  for (const p of strays.splice(0)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

/** A daemon that leaves the check's group and session and drops its environment, then the check exits. */
const daemon = (tag: string, then = '') => `setsid env -i sh -c 'while sleep 1; do :; done # ${tag}' ${then} echo started`;

test.runIf(process.platform === 'linux')("the host's containment kills a setsid daemon the check leaves behind", async () => {
  const tag = `warden-daemon-${randomUUID()}`;
  const r = await runCheck({
    command: daemon(tag, '>/dev/null 2>&1 &'),
    cwd: process.cwd(),
    timeoutMs: 30_000,
    marker: `WARDEN_TEST_CHECK=${tag}`,
    env: { WARDEN_TEST_CHECK: tag },
  });
  strays.push(...withArg(tag));
  expect(r).toMatchObject({ passed: true, exitCode: 0 });
  expect(r.outputTail).toContain('started');
  expect(withArg(tag)).toEqual([]);
  expect((await checkContainment()).kind).toBe('pid-namespace'); // this host offers one (root, util-linux unshare)
});

test.runIf(process.platform === 'linux')('the /proc tracking fallback kills a setsid daemon it saw while the check ran', async () => {
  const tag = `warden-daemon-${randomUUID()}`;
  const r = await runCheck({
    command: daemon(tag, '& sleep 0.5;'), // its output pipes stay open: the check must not wait for them
    cwd: process.cwd(),
    timeoutMs: 30_000,
    marker: `WARDEN_TEST_CHECK=${tag}`,
    env: { WARDEN_TEST_CHECK: tag },
    containment: 'track',
  });
  strays.push(...withArg(tag));
  expect(r).toMatchObject({ passed: true, exitCode: 0 });
  expect(withArg(tag)).toEqual([]);
});

test.runIf(process.platform === 'linux')('a contained check still times out, and its exit code and output come through', async () => {
  const fail = await runCheck({ command: 'echo out; echo err >&2; exit 7', cwd: process.cwd(), timeoutMs: 30_000, marker: 'WARDEN_TEST_CHECK=x', env: {} });
  expect(fail).toMatchObject({ passed: false, exitCode: 7, timedOut: false });
  expect(fail.outputTail).toContain('out\nerr');
  // The timeout's SIGTERM ends the command (not only its children): nothing after them runs.
  const t0 = Date.now();
  const slow = await runCheck({ command: 'sleep 30; echo finished', cwd: process.cwd(), timeoutMs: 500, marker: 'WARDEN_TEST_CHECK=y', env: {} });
  expect(slow).toMatchObject({ passed: false, timedOut: true });
  expect(slow.outputTail).not.toContain('finished');
  expect(Date.now() - t0).toBeLessThan(2_000);
});
