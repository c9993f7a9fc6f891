/**
 * `blocked` on a real dev server: a driven agent (a real process through the `command` driver)
 * whose model is rate-limited for its first three calls. The agent shows `blocked` with the reason
 * and the retry time while it waits on a workflow timer, then runs again and finishes; three
 * rate-limited turns with `maxRestarts: 1` would have opened the circuit as ordinary failures.
 * A human's interrupt ends the wait and the steer that follows reaches the retried turn; a model
 * that never comes back opens the circuit once the agent was blocked for `safety.maxBlockedMs`.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { finalStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, eventually, useStack } from '../helpers/stack.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

const AGENT = join(ROOT, 'test/fixtures/rate-limited-agent.sh');
const UNTIL_STEERED = join(ROOT, 'test/fixtures/rate-limited-until-steered.sh');
process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

describe('a rate-limited model blocks the agent', () => {
  const stack = useStack();
  let hook: WebhookListener;
  beforeAll(async () => {
    hook = await startWebhookListener();
  });
  afterAll(async () => {
    await hook?.close();
  });

  test('blocked with the reason and retry time during the 429s, then running and done; restart intensity untouched', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'warden-ratelimited-'));
    await stack.warden.start({
      agentId: 'rl-agent',
      task: 'finish despite the rate limit',
      driver: { kind: 'command', command: ['sh', AGENT, '3'] },
      safety: { maxRestarts: 1, restartWindowMs: 600_000 },
      driven: { workDir, killGraceMs: 2_000 },
    });
    // Poll the status: every blocked answer names the rate limit and when the turn is retried.
    const seen: AgentStatus[] = [];
    const handle = stack.warden.handle('rl-agent');
    let done = false;
    const final = finalStatus(handle).finally(() => (done = true));
    while (!done) {
      try {
        seen.push(await stack.warden.status('rl-agent'));
      } catch {
        /* the run may be between tasks; the next poll answers */
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const end = await final;
    const blocked = seen.filter((s) => s.state === 'blocked');
    expect(blocked.length, `states seen: ${[...new Set(seen.map((s) => s.state))].join(', ')}`).toBeGreaterThan(0);
    for (const s of blocked)
      expect(s.stateReason).toMatch(/^model rate-limited \(agent command exited 75\); retrying at \d\d:\d\d:\d\d UTC \(attempt [123]\)$/);
    expect(new Set(blocked.map((s) => s.stateReason!.match(/attempt (\d)/)![1])).size).toBeGreaterThan(1);

    expect(end).toMatchObject({ state: 'done', turns: 1, restarts: 0 });
    expect(readFileSync(join(workDir, 'calls.log'), 'utf8').trim().split('\n')).toHaveLength(4);
    const moves = end.transitions.map((t) => `${t.from}->${t.to}`);
    expect(moves.filter((m) => m === 'running->blocked')).toHaveLength(3);
    expect(moves.filter((m) => m === 'blocked->running')).toHaveLength(3);
    expect(moves.at(-1)).toBe('running->done');
    expect(moves).not.toContain('running->failed');
    await recordHistory(stack.server.address, handle, 'driven-rate-limited-blocked');
  });

  test('interrupt while blocked ends the wait; the steer reaches the retried turn, which runs at once', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'warden-until-steered-'));
    await stack.warden.start({
      agentId: 'rl-steered',
      task: 'finish once a human says how',
      driver: { kind: 'command', command: ['sh', UNTIL_STEERED] },
      driven: { workDir, killGraceMs: 2_000 },
      supervisor: { idleAfterMs: 0 },
    });
    // Blocked on its second backoff (4 s or more), so the interrupt lands in the wait.
    await eventually(
      async () => {
        const s = await stack.warden.status('rl-steered');
        return s.state === 'blocked' && /attempt [2-9]\)$/.test(s.stateReason ?? '') ? s : null;
      },
      { what: 'blocked on a second backoff', timeoutMs: 60_000 },
    );
    await stack.warden.signal('rl-steered', 'interrupt', { reason: 'stop hammering the API' });
    const waiting = await eventually(
      async () => {
        const s = await stack.warden.status('rl-steered');
        return s.state === 'awaiting-input' ? s : null;
      },
      { what: 'awaiting-input after the interrupt' },
    );
    expect(waiting.stateReason).toBe('stop hammering the API');
    const calls = readFileSync(join(workDir, 'requests.log'), 'utf8').trim().split('\n').length;
    await stack.warden.signal('rl-steered', 'steer', { text: 'use the batch endpoint' });
    const end = await finalStatus(stack.warden.handle('rl-steered'));
    expect(end).toMatchObject({ state: 'done', turns: 1, restarts: 0 });
    const requests = readFileSync(join(workDir, 'requests.log'), 'utf8').trim().split('\n');
    expect(requests).toHaveLength(calls + 1); // the steered retry, and nothing before it
    expect(requests.at(-1)).toContain('[steering] use the batch endpoint');
    const moves = end.transitions.map((t) => `${t.from}->${t.to} (${t.event})`);
    expect(moves.slice(-3)).toEqual(['blocked->awaiting-input (interrupt)', 'awaiting-input->running (input)', 'running->done (complete)']);
    expect(end.refused).toEqual([]);
    await recordHistory(stack.server.address, stack.warden.handle('rl-steered'), 'driven-interrupt-while-blocked');
  });

  test('a model that never comes back: blocked for safety.maxBlockedMs in all, then the circuit opens and the alert is received', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'warden-never-back-'));
    await stack.warden.start({
      agentId: 'rl-forever',
      task: 'never gets a model',
      driver: { kind: 'command', command: ['sh', AGENT, '1000'] },
      driven: { workDir, killGraceMs: 2_000 },
      safety: { maxBlockedMs: '5s' },
      supervisor: { idleAfterMs: 0 },
      notify: { webhooks: [{ url: hook.url }] },
    });
    const end = await finalStatus(stack.warden.handle('rl-forever'));
    expect(end.state).toBe('failed');
    expect(end.stateReason).toMatch(
      /^circuit open: blocked for \d+ s \(\d+ rate-limited turns in a row; safety\.maxBlockedMs is 5 s\); last: model rate-limited \(agent command exited 75\)$/,
    );
    expect(end.restarts).toBe(0);
    const moves = end.transitions.map((t) => `${t.from}->${t.to}`);
    expect(moves.at(-1)).toBe('running->failed');
    expect(moves.filter((m) => m === 'running->blocked').length).toBeGreaterThanOrEqual(2);
    const [e] = await eventually(
      async () => {
        const got = hook
          .accepted()
          .filter((d) => (d.json as { agentId?: string; event?: string }).agentId === 'rl-forever' && (d.json as { event?: string }).event === 'circuit-open');
        return got.length ? got : null;
      },
      { what: 'circuit-open webhook' },
    );
    expect((e!.json as { reason: string }).reason).toBe(end.stateReason);
    await recordHistory(stack.server.address, stack.warden.handle('rl-forever'), 'driven-rate-limited-circuit-open');
  });
});
