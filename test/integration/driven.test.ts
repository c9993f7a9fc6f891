/**
 * Driven mode on a real dev server: warden runs the agent's turns as heartbeating, cancellable
 * activities. The agent here is a real Python program speaking the `command` driver protocol.
 * Whispers reach the agent's next turn input; escalation pauses it (no new turn starts) until a
 * resume from the real temporal CLI; interrupt and stop signal the process group with a grace
 * period; a SIGKILLed worker's turn is retried on a new worker.
 */
import { readFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResultPromise } from 'execa';
import { describe, expect, test } from 'vitest';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { recordHistory } from '../helpers/histories.js';
import { running } from '../helpers/procs.js';
import { ROOT, clientFor, eventually, startTestServer, useStack, workerProcess, type Stack } from '../helpers/stack.js';
import { temporalCli } from '../helpers/temporal-cli.js';
import { waitForStatus, finalStatus } from '../helpers/agents.js';

const AGENT = join(ROOT, 'test/fixtures/agent.py');
process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

interface Input {
  turn: number;
  input: string;
  pid: number;
}
const inputs = (dir: string): Input[] =>
  existsSync(join(dir, 'inputs.log'))
    ? readFileSync(join(dir, 'inputs.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Input)
    : [];
const signals = (dir: string): string[] => (existsSync(join(dir, 'signals.log')) ? readFileSync(join(dir, 'signals.log'), 'utf8').trim().split('\n') : []);

function pythonAgent(agentId: string, task: string, extra: Partial<AgentSpecInput> = {}): AgentSpecInput & { driven: { workDir: string } } {
  const workDir = mkdtempSync(join(tmpdir(), `warden-${agentId}-`));
  return {
    agentId,
    task,
    driver: { kind: 'command', command: ['python3', AGENT] },
    ...extra,
    driven: { workDir, killGraceMs: 2_000, ...(extra.driven ?? {}) },
  };
}

const statusWhere = (stack: Stack, agentId: string, pred: (s: AgentStatus) => boolean, what: string, timeoutMs?: number) =>
  waitForStatus(stack.warden, agentId, pred, what, timeoutMs);

describe('with an in-process worker', () => {
  const stack = useStack();

  test('a spiraling driven agent: whispers reach its next turn, escalation stops new turns, the temporal CLI resumes it', async () => {
    const spec = pythonAgent('py-spiral', 'spiral: make npm run build pass', { supervisor: { evalInterval: 3, idleAfterMs: 0 } });
    await stack.warden.start(spec);
    const escalated = await statusWhere(stack, 'py-spiral', (s) => s.state === 'awaiting-input', 'escalation', 60_000);
    expect(escalated).toMatchObject({ escalationStep: 3, paused: true, turns: 9, driver: 'command' });
    const seen = inputs(spec.driven.workDir);
    expect(seen).toHaveLength(9);
    expect(seen[0]!.input).toContain('Your task:\nspiral: make npm run build pass');
    // Evaluation after turn 3 → the CORRECTION arrives in turn 4's input, marked, never mid-turn.
    expect(seen[3]!.input).toMatch(/\[CORRECTION\] You have run the same failing call 3 times/);
    expect(seen[6]!.input).toMatch(/\[CORRECTION\] Warning 2 of 2/);
    expect(seen.filter((x) => /\[CORRECTION\]/.test(x.input)).map((x) => x.turn)).toEqual([4, 7]);

    // Paused: no further turn starts.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(inputs(spec.driven.workDir)).toHaveLength(9);
    expect((await stack.warden.status('py-spiral')).turnRunning).toBe(false);

    // A steer while escalated is queued, and delivered with the ESCALATION whisper after resume.
    await stack.warden.signal('py-spiral', 'steer', { text: 'Read the error message first.' });
    const cli = await temporalCli(stack.server.address, ['workflow', 'signal', '--workflow-id', 'agent-py-spiral', '--name', 'resume']);
    expect(cli.exitCode, cli.all).toBe(0);
    await eventually(async () => inputs(spec.driven.workDir).length >= 10, { what: 'a turn after resume' });
    const next = inputs(spec.driven.workDir)[9]!;
    expect(next.input).toMatch(/\[ESCALATION\] Still no progress after 2 warnings[\s\S]*\[steering\] Read the error message first\./);
    await stack.warden.signal('py-spiral', 'abort', { reason: 'test over' });
    const final = await finalStatus(stack.warden.handle('py-spiral'));
    expect(final.state).toBe('failed');
    await recordHistory(stack.server.address, stack.warden.handle('py-spiral'), 'driven-spiral-resume');
  });

  test('interrupt: the process gets SIGTERM and is gone within the grace period; partial output kept; steer continues the session', async () => {
    const spec = pythonAgent('py-interrupt', 'slow:60 a long turn', { supervisor: { idleAfterMs: 0 } });
    await stack.warden.start(spec);
    const first = await eventually(async () => inputs(spec.driven.workDir)[0], { what: 'turn 1 started' });
    await new Promise((r) => setTimeout(r, 1_500));
    const t0 = Date.now();
    await stack.warden.signal('py-interrupt', 'interrupt', { reason: 'wrong approach' });
    const s = await statusWhere(stack, 'py-interrupt', (x) => x.state === 'awaiting-input' && !x.turnRunning && x.turns === 1, 'interrupted');
    expect(Date.now() - t0).toBeLessThan(2_000 + 3_000);
    expect(running(first.pid)).toBe(false);
    expect(signals(spec.driven.workDir)).toEqual(['turn 1: SIGTERM']); // asked nicely first
    expect(s.pauseReason).toBe('wrong approach');
    // The partial turn is in the window the supervisor sees.
    expect(s.turns).toBe(1);
    const window = await stack.warden.window('py-interrupt');
    expect(window.at(-1)!.text).toMatch(/^working, step \d+$/);
    // No new turn starts while waiting for input.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(inputs(spec.driven.workDir)).toHaveLength(1);
    await stack.warden.signal('py-interrupt', 'steer', { text: 'Do the short version.' });
    const second = await eventually(async () => inputs(spec.driven.workDir)[1], { what: 'turn 2 after steer' });
    expect(second.input).toContain('[steering] Do the short version.');
    expect(second.input).toContain('Continue working on your task.');
    await stack.warden.signal('py-interrupt', 'abort', {});
    await finalStatus(stack.warden.handle('py-interrupt'));
  });

  test('stop drains: a turn that ends in time completes; one that does not is cancelled after the drain timeout', async () => {
    const inTime = pythonAgent('py-drain', 'slow:2 a short turn', { supervisor: { idleAfterMs: 0 } });
    await stack.warden.start(inTime);
    await eventually(async () => inputs(inTime.driven.workDir)[0], { what: 'turn 1 started' });
    await stack.warden.signal('py-drain', 'stop', { reason: 'end of shift', drainTimeoutMs: 30_000 });
    const done = await finalStatus(stack.warden.handle('py-drain'));
    expect(done).toMatchObject({ state: 'done', stateReason: 'stopped: end of shift', turns: 1 });
    expect(signals(inTime.driven.workDir)).toEqual([]);
    expect(inputs(inTime.driven.workDir)).toHaveLength(1);

    const late = pythonAgent('py-late', 'slow:60 a very long turn', { supervisor: { idleAfterMs: 0 } });
    await stack.warden.start(late);
    const turn = await eventually(async () => inputs(late.driven.workDir)[0], { what: 'turn 1 started' });
    const t0 = Date.now();
    await stack.warden.signal('py-late', 'stop', { drainTimeoutMs: 1_500 });
    const ended = await finalStatus(stack.warden.handle('py-late'));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_400);
    expect(ended.state).toBe('done');
    expect(ended.stateReason).toMatch(/drain timeout/);
    expect(ended.turns).toBe(1);
    expect(signals(late.driven.workDir)).toEqual(['turn 1: SIGTERM']);
    expect(running(turn.pid)).toBe(false);
    expect(ended.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['spawning>running', 'running>cancelling', 'cancelling>done']);
    await recordHistory(stack.server.address, stack.warden.handle('py-late'), 'driven-stop-drain-timeout');
  });

  test('an agent that reports the task complete ends done; the scripted driver plays its script', async () => {
    const spec = pythonAgent('py-finish', 'finish:3 three parts', { supervisor: { idleAfterMs: 0 } });
    await stack.warden.start(spec);
    const done = await finalStatus(stack.warden.handle('py-finish'));
    expect(done).toMatchObject({ state: 'done', turns: 3 });
    expect(done.stateReason).toMatch(/task complete/);

    await stack.warden.start({
      agentId: 'scripted',
      task: 'demo',
      driver: { kind: 'scripted', turns: [{ text: 'one', toolCalls: [{ name: 'shell', args: 'ls', ok: true }] }, { text: 'two' }] },
    });
    const played = await finalStatus(stack.warden.handle('scripted'));
    expect(played).toMatchObject({ state: 'done', turns: 2, driver: 'scripted' });
  });

  test('a driven agent refuses reported turns; a protocol violation fails the agent with the field named', async () => {
    const spec = pythonAgent('py-strict', 'slow:30 busy', { supervisor: { idleAfterMs: 0 } });
    await stack.warden.start(spec);
    await expect(stack.warden.reportTurn('py-strict', { text: 'hello' })).rejects.toThrow(/driven by warden/);
    await stack.warden.signal('py-strict', 'abort', {});
    await finalStatus(stack.warden.handle('py-strict'));

    await stack.warden.start({
      agentId: 'liar',
      task: 'x',
      driver: { kind: 'command', command: ['sh', '-c', 'cat >/dev/null; echo \'{"turn":{"text":5}}\''] },
    });
    const failed = await finalStatus(stack.warden.handle('liar'));
    expect(failed.state).toBe('failed');
    expect(failed.stateReason).toMatch(/turn 1 failed: invalid turn result: turn\.text/);
  });
});

describe('worker crash in the middle of a driven turn', () => {
  test('SIGKILL the worker mid-turn: the turn is retried on a new worker, the session continues, nothing queued is lost', async () => {
    const server = await startTestServer();
    const warden = await clientFor(server);
    const workers: ResultPromise[] = [];
    const spawnWorker = () => {
      const w = workerProcess(server, { WARDEN_HOME: process.env.WARDEN_HOME! });
      workers.push(w);
      return w;
    };
    try {
      // Turn 2 is a quiet 30 s build (no output, so a dead reader does not end it): the dead worker's
      // agent process is still running when the retry starts, unless warden kills it first.
      const spec = pythonAgent('py-crash', 'quiet:30@2 a long build', { supervisor: { idleAfterMs: 0 }, driven: { heartbeatTimeoutMs: 3_000 } as never });
      let worker = spawnWorker();
      await warden.start(spec);
      await eventually(async () => inputs(spec.driven.workDir).length >= 2, { what: 'turn 2 started', timeoutMs: 60_000 });
      const victim = inputs(spec.driven.workDir)[1]!;
      worker.kill('SIGKILL');
      await worker;
      // The orphaned agent process of the dead worker's turn is killed with it or finishes on its own;
      // either way warden does not count it: the turn is retried.
      await warden.signal('py-crash', 'steer', { text: 'Steer sent while no worker ran.' });
      worker = spawnWorker();
      const retried = await eventually(async () => inputs(spec.driven.workDir).filter((x) => x.turn === 2).length >= 2, {
        what: 'turn 2 retried',
        timeoutMs: 60_000,
        intervalMs: 50,
      });
      expect(retried).toBe(true);
      // Never two copies of one agent: the dead worker's agent process was killed before the retry began.
      expect(running(victim.pid)).toBe(false);
      const attempts = inputs(spec.driven.workDir).filter((x) => x.turn === 2);
      expect(attempts[1]!.pid).not.toBe(victim.pid);
      expect(attempts[1]!.input).toBe(victim.input); // same turn, same input: nothing delivered twice or lost
      const turn3 = await eventually(async () => inputs(spec.driven.workDir).find((x) => x.turn === 3), { what: 'turn 3', timeoutMs: 60_000 });
      expect(turn3.input).toContain('[steering] Steer sent while no worker ran.');
      const s = await warden.status('py-crash');
      expect(s.turns).toBeGreaterThanOrEqual(2);
      expect(s.whispersDelivered).toBe(1);
      await warden.signal('py-crash', 'abort', {});
      await finalStatus(warden.handle('py-crash'));
      await recordHistory(server.address, warden.handle('py-crash'), 'driven-worker-crash-retry');
    } finally {
      await warden.close();
      for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
      await server.stop();
    }
  });
});
