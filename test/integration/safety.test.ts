/**
 * Safety rails, enforced by the workflow, on a real dev server: budgets pause an agent
 * before its next turn and notify; restart intensity opens the circuit; a silent external agent
 * becomes orphaned and stale-generation reports are dropped; a done agent refuses a resume.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { productiveTurn, finalStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, eventually, useStack } from '../helpers/stack.js';
import { temporalCli } from '../helpers/temporal-cli.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const AGENT = join(ROOT, 'test/fixtures/agent.py');
const stack = useStack();
let hook: WebhookListener;
beforeAll(async () => {
  hook = await startWebhookListener();
});
afterAll(async () => {
  await hook?.close();
});

const events = (agentId: string, event: string) =>
  hook.accepted().filter((d) => (d.json as { agentId?: string; event?: string }).agentId === agentId && (d.json as { event?: string }).event === event);
const result = (agentId: string) => finalStatus(stack.warden.handle(agentId));
/** The agent paused at a budget (it stays paused until a human raises the budget). */
const pausedAtBudget = (agentId: string) =>
  eventually(
    async () => {
      const s = await stack.warden.status(agentId);
      return s.state === 'paused-by-user' ? s : null;
    },
    { what: `${agentId} paused at its budget`, timeoutMs: 60_000 },
  );
const scripted = (n: number, extra: Record<string, unknown> = {}) => ({
  kind: 'scripted' as const,
  turns: Array.from({ length: n }, (_, i) => ({
    text: `part ${i + 1} done, moving on`,
    toolCalls: [{ name: 'shell', args: `make part${i + 1}`, ok: true }],
    ...extra,
  })),
});

describe('budgets', () => {
  test.each([
    ['turns', { turns: 3 }, scripted(10), /budget exhausted: turns 3 of 3/],
    ['tokens', { tokens: 250 }, { kind: 'command' as const, command: ['python3', AGENT] }, /budget exhausted: tokens 330 of 250/],
    ['costUsd', { costUsd: 1 }, scripted(10, { costUsd: 0.4 }), /budget exhausted: costUsd \$1\.2000 of \$1\.0000/],
  ])('a driven agent pauses at its %s budget, before the next turn, and the webhook hears it', async (name, budgets, driver, reason) => {
    const agentId = `budget-${name}`;
    await stack.warden.start({
      agentId,
      task: 'spiral: keep working',
      driver,
      budgets,
      supervisor: { idleAfterMs: 0, evalInterval: 100 },
      notify: { webhooks: [{ url: hook.url }] },
    });
    const done = await pausedAtBudget(agentId);
    expect(done).toMatchObject({ paused: true, budgetPaused: true });
    expect(done.pauseReason).toMatch(reason);
    expect(done.turns).toBe(3);
    expect(done.transitions.map((t) => t.to)).toEqual(['running', 'paused-by-user']);
    const budget = done.budgets[name as keyof AgentStatus['budgets']];
    expect(budget.limit).not.toBeNull();
    expect(budget.used).toBeGreaterThanOrEqual(budget.limit!);
    const [e] = await eventually(async () => (events(agentId, 'budget-exhausted').length ? events(agentId, 'budget-exhausted') : null), {
      what: 'budget webhook',
    });
    expect((e!.json as { reason: string }).reason).toMatch(reason);
    await stack.warden.control(agentId, 'abort', { reason: 'test done' });
    expect((await result(agentId)).state).toBe('failed');
    if (name === 'tokens') await recordHistory(stack.server.address, stack.warden.handle(agentId), 'safety-budget-tokens');
  });

  test('wall-clock budget', async () => {
    await stack.warden.start({
      agentId: 'budget-clock',
      task: 'x',
      driver: { ...scripted(20), turnDelayMs: 400 },
      budgets: { wallClockMs: 1_500 },
      supervisor: { idleAfterMs: 0 },
    });
    const done = await pausedAtBudget('budget-clock');
    expect(done.pauseReason).toMatch(/budget exhausted: wallClockMs \d+ s of 2 s/);
    expect(done.turns).toBeGreaterThanOrEqual(2);
    expect(done.turns).toBeLessThan(20);
    await stack.warden.control('budget-clock', 'abort', { reason: 'test done' });
  });

  test('an external agent: the reply to the turn that spends the budget says paused', async () => {
    await stack.warden.start({ agentId: 'budget-ext', task: 'x', budgets: { tokens: 2_000 }, supervisor: { idleAfterMs: 0 } });
    const r1 = await stack.warden.reportTurn('budget-ext', { ...productiveTurn(1), tokensIn: 900, tokensOut: 100 });
    expect(r1.stop).toBe(false);
    const r2 = await stack.warden.reportTurn('budget-ext', { ...productiveTurn(2), tokensIn: 900, tokensOut: 100 });
    expect(r2).toMatchObject({ stop: false, paused: true, state: 'paused-by-user' });
    const done = await pausedAtBudget('budget-ext');
    expect(done).toMatchObject({ turns: 2, budgetPaused: true });
    expect(done.pauseReason).toMatch(/budget exhausted: tokens 2000 of 2000/);
    await stack.warden.control('budget-ext', 'abort', { reason: 'test done' });
  });
});

test('restart intensity: a driver that fails every turn opens the circuit after maxRestarts; the alert is received', async () => {
  await stack.warden.start({
    agentId: 'flaky',
    task: 'x',
    driver: { kind: 'command', command: ['sh', '-c', 'cat >/dev/null; echo "disk full" >&2; exit 1'] },
    safety: { maxRestarts: 2, restartWindowMs: 60_000 },
    supervisor: { idleAfterMs: 0 },
    notify: { webhooks: [{ url: hook.url }] },
  });
  const failed = await result('flaky');
  expect(failed.state).toBe('failed');
  expect(failed.stateReason).toMatch(/^circuit open: 3 failed turns within 60 s \(max 2\); last: agent command exited with code 1: disk full/);
  expect(failed.turns).toBe(0);
  const [e] = await eventually(async () => (events('flaky', 'circuit-open').length ? events('flaky', 'circuit-open') : null), { what: 'circuit webhook' });
  expect((e!.json as { reason: string }).reason).toMatch(/circuit open/);
  await recordHistory(stack.server.address, stack.warden.handle('flaky'), 'safety-circuit-open');
  // A second start of a running id is refused, not doubled (the CLI test covers exit codes).
  await stack.warden.start({ agentId: 'single', task: 'x', supervisor: { idleAfterMs: 0 } });
  await expect(stack.warden.start({ agentId: 'single', task: 'y' })).rejects.toThrow(/already running/);
  await stack.warden.signal('single', 'abort', {});
});

test('orphans: silence for twice the heartbeat interval makes an external agent orphaned (alert); stale generations are dropped', async () => {
  await stack.warden.start({
    agentId: 'ghosty',
    task: 'x',
    safety: { heartbeatIntervalMs: 1_000 },
    supervisor: { idleAfterMs: 0 },
    notify: { webhooks: [{ url: hook.url }] },
  });
  await stack.warden.signal('ghosty', 'heartbeat', { generation: 2 });
  await stack.warden.reportTurn('ghosty', { ...productiveTurn(1), generation: 2 });
  const t0 = Date.now();
  const orphaned = await eventually(
    async () => {
      const s = await stack.warden.status('ghosty');
      return s.state === 'orphaned' ? s : null;
    },
    { what: 'orphaned', timeoutMs: 15_000 },
  );
  expect(Date.now() - t0).toBeLessThan(2_000 + 2_500);
  expect(orphaned.stateReason).toMatch(/no heartbeat for \d+ s \(expected every 1 s\)/);
  const [e] = await eventually(async () => (events('ghosty', 'orphaned').length ? events('ghosty', 'orphaned') : null), { what: 'orphan webhook' });
  expect((e!.json as { reason: string }).reason).toMatch(/no heartbeat/);
  // A report from the generation before the restart is dropped.
  const stale = await stack.warden.reportTurn('ghosty', { ...productiveTurn(2), generation: 1 });
  expect(stale).toMatchObject({ accepted: false, stale: true });
  expect((await stack.warden.status('ghosty')).turns).toBe(1);
  const rows = await eventually(
    async () => {
      const r = await stack.warden.list({ query: `WardenState = 'orphaned'` });
      return r.some((x) => x.agentId === 'ghosty') ? r : null;
    },
    { what: 'orphaned in visibility' },
  );
  expect(rows.length).toBeGreaterThanOrEqual(1);
  await stack.warden.signal('ghosty', 'abort', {});
  await result('ghosty');
  await recordHistory(stack.server.address, stack.warden.handle('ghosty'), 'safety-orphaned');
});

test('a done agent refuses resume through the real temporal CLI', async () => {
  await stack.warden.start({ agentId: 'finished', task: 'x', driver: scripted(1) });
  expect((await result('finished')).state).toBe('done');
  const r = await temporalCli(stack.server.address, ['workflow', 'signal', '--workflow-id', 'agent-finished', '--name', 'resume']);
  expect(r.exitCode).not.toBe(0);
  expect(r.all).toMatch(/already completed|not found/i);
});
