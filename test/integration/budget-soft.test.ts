/**
 * Budgets that warn before they pause, on a real dev server with real worker processes and a real
 * HTTP listener: a warning at 80 % (a BUDGET whisper in the reply to the turn that crossed it, and
 * exactly one webhook carrying action links), a pause at 100 %, and `warden budget` letting the
 * agent run again, recorded with who raised it; then a driven agent whose worker is SIGKILLed
 * after the warning went out: the warning is not sent again, and the pause and the raise still work.
 */
import { execa } from 'execa';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, eventually, useWorkerProcesses } from '../helpers/stack.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const SECRET = 'k'.repeat(48);
const BASE = 'https://warden.example.test';
const AGENT = join(ROOT, 'test/fixtures/agent.py');
const stack = useWorkerProcesses({ WARDEN_HOME: HOME, WARDEN_LINK_SECRET: SECRET, WARDEN_LINK_BASE_URL: BASE });
let hook: WebhookListener;
beforeAll(async () => {
  hook = await startWebhookListener();
});
afterAll(async () => {
  await hook?.close();
});

interface Body {
  agentId: string;
  event: string;
  reason: string;
  deliveryId: string;
  actions?: Record<string, string>;
  actionsExpireAt?: string;
}
const bodies = (agentId: string, event: string): Body[] =>
  hook
    .accepted()
    .map((d) => d.json as Body)
    .filter((b) => b.agentId === agentId && b.event === event);
/** Distinct alerts (a webhook retried after a crash carries the same deliveryId). */
const alerts = (agentId: string, event: string) => [...new Map(bodies(agentId, event).map((b) => [b.deliveryId, b])).values()];
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cli = (...args: string[]) =>
  execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, '--namespace', stack.server.namespace, ...args], {
    reject: false,
    env: { WARDEN_LOG_LEVEL: 'warn', WARDEN_HOME: HOME },
  });

test('an external agent: warned once at 80 % (whisper and one webhook with links), paused at 100 %, `warden budget` lets it run again', async () => {
  const worker = stack.spawnWorker();
  const agentId = 'soft-ext';
  const w = stack.warden;
  await w.start({ agentId, task: 'Make the build pass.', budgets: { costUsd: 2 }, notify: { webhooks: [{ url: hook.url }] }, supervisor: { idleAfterMs: 0 } });
  expect((await w.reportTurn(agentId, { id: 't1', text: 'fixed the parser', costUsd: 1 })).whispers).toEqual([]);
  const r2 = await w.reportTurn(agentId, { id: 't2', text: 'fixed the lexer', costUsd: 0.625 });
  expect(r2.whispers.map((x) => [x.type, x.text])).toEqual([
    ['BUDGET', '81% of the cost budget is spent ($1.6250 of $2.0000): finish or ask. At 100% you are paused until a human raises the budget.'],
  ]);
  const [warning] = await eventually(async () => (alerts(agentId, 'budget-warning').length ? alerts(agentId, 'budget-warning') : null), {
    what: 'the budget-warning webhook',
  });
  expect(warning!.reason).toMatch(/^81% of the cost budget is spent/);
  expect(Object.keys(warning!.actions ?? {}).sort()).toEqual(['abort', 'pause', 'steer']);
  for (const [action, url] of Object.entries(warning!.actions!)) expect(url).toMatch(new RegExp(`^${BASE}/agents/soft-ext/${action}\\?token=w2\\.`));
  expect(warning!.actionsExpireAt).toMatch(/^\d{4}-/);

  // Still under the limit: no second warning.
  expect((await w.reportTurn(agentId, { id: 't3', text: 'fixed the emitter', costUsd: 0.125 })).whispers).toEqual([]);
  // The limit: the reply says paused; every channel hears, with an abort link.
  const r4 = await w.reportTurn(agentId, { id: 't4', text: 'fixed the linker', costUsd: 0.25 });
  expect(r4).toMatchObject({ accepted: true, paused: true, stop: false, state: 'paused-by-user' });
  const [exhausted] = await eventually(async () => (alerts(agentId, 'budget-exhausted').length ? alerts(agentId, 'budget-exhausted') : null), {
    what: 'the budget-exhausted webhook',
  });
  expect(exhausted!.reason).toMatch(/^budget exhausted: costUsd \$2\.0000 of \$2\.0000: paused until a human raises the budget/);
  expect(Object.keys(exhausted!.actions ?? {})).toEqual(['abort']);
  const paused = await w.status(agentId);
  expect(paused).toMatchObject({ state: 'paused-by-user', paused: true, budgetPaused: true, budgetWarnings: ['costUsd'] });
  expect(paused.pauseReason).toBe('budget exhausted: costUsd $2.0000 of $2.0000');

  // A limit not above the spend is refused, naming the budget; nothing changes.
  const low = await cli('budget', agentId, '--cost-usd', '1.5', '--by', 'alice');
  expect(low.exitCode).toBe(2);
  expect(low.stderr).toMatch(/costUsd: the new limit \$1\.5000 is not above what is already spent \(\$2\.0000\)/);
  const none = await cli('budget', agentId);
  expect(none.exitCode).toBe(2);
  expect(none.stderr).toMatch(/give at least one budget to raise/);

  const raised = await cli('budget', agentId, '--cost-usd', '5', '--by', 'alice');
  expect(raised.exitCode, raised.stderr).toBe(0);
  expect(raised.stdout).toMatch(/raised costUsd 2 → 5: the agent runs again \(now running\)/);
  const after = await w.status(agentId);
  expect(after).toMatchObject({ state: 'running', paused: false, budgetPaused: false, budgetWarnings: [] });
  expect(after.budgets.costUsd).toEqual({ used: 2, limit: 5 });
  expect(after.budgetRaises).toEqual([{ at: expect.any(String), by: 'alice', changes: { costUsd: { from: 2, to: 5 } } }]);
  const shown = await cli('status', agentId);
  expect(shown.stdout).toMatch(/budget raised by alice at .*: costUsd 2 → 5/);
  // It runs again: the next turn is taken, and no budget is near.
  expect(await w.reportTurn(agentId, { id: 't5', text: 'all green', costUsd: 0.25 })).toMatchObject({ accepted: true, paused: false, state: 'running' });
  await settle(1_500);
  expect(bodies(agentId, 'budget-warning')).toHaveLength(1); // exactly one webhook for the warning
  await recordHistory(stack.server.address, w.handle(agentId), 'budget-warn-pause-raise');
  await stack.kill(worker); // the next test's worker is alone on the queue
}, 120_000);

test('a driven agent: the warning survives a worker SIGKILL without being sent twice; paused at its limit, it runs again once raised', async () => {
  const workDir = mkdtempSync(join(tmpdir(), 'warden-budget-soft-'));
  const inputs = () => {
    try {
      return readFileSync(join(workDir, 'inputs.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { turn: number; input: string });
    } catch {
      return [];
    }
  };
  const agentId = 'soft-driven';
  let worker = stack.spawnWorker();
  await stack.warden.start({
    agentId,
    task: 'slow:2 steady work',
    driver: { kind: 'command', command: ['python3', AGENT] },
    driven: { workDir, heartbeatTimeoutMs: 3_000 },
    budgets: { turns: 5, warnAt: 0.6 },
    safety: { maxRestarts: 3, restartWindowMs: 600_000 },
    notify: { webhooks: [{ url: hook.url }] },
    supervisor: { idleAfterMs: 0 },
  });
  // 3 of 5 turns done: the warning goes with turn 4's input; the worker dies during turn 4.
  await eventually(async () => inputs().some((i) => i.turn === 4) || null, { what: 'turn 4 started', timeoutMs: 90_000 });
  expect(inputs().find((i) => i.turn === 4)!.input).toMatch(/60% of the turns budget is spent \(3 of 5\): finish or ask/);
  await stack.kill(worker);
  worker = stack.spawnWorker();
  const paused = await eventually(
    async () => {
      const s = await stack.warden.status(agentId);
      return s.state === 'paused-by-user' ? s : null;
    },
    { what: 'paused at the turns budget', timeoutMs: 90_000 },
  );
  expect(paused).toMatchObject({ turns: 5, budgetPaused: true, pauseReason: 'budget exhausted: turns 5 of 5' });
  await eventually(async () => alerts(agentId, 'budget-exhausted').length === 1 || null, { what: 'the budget-exhausted webhook' });
  await settle(1_500);
  expect(alerts(agentId, 'budget-warning')).toHaveLength(1); // not sent again by the replay after the SIGKILL
  // Only turn 4 (the killed one, retried with the same input) ever carried the warning.
  expect([
    ...new Set(
      inputs()
        .filter((i) => /turns budget is spent/.test(i.input))
        .map((i) => i.turn),
    ),
  ]).toEqual([4]);

  const r = await stack.warden.raiseBudget(agentId, { turns: 7, by: 'bob' });
  expect(r).toMatchObject({ applied: true, resumed: true, state: 'running' });
  await eventually(async () => inputs().some((i) => i.turn === 6) || null, { what: 'turn 6 after the raise', timeoutMs: 60_000 });
  const again = await eventually(
    async () => {
      const s = await stack.warden.status(agentId);
      return s.state === 'paused-by-user' && s.turns === 7 ? s : null;
    },
    { what: 'paused again at the raised budget', timeoutMs: 60_000 },
  );
  expect(again.budgetRaises.map((x) => x.by)).toEqual(['bob']);
  await stack.warden.control(agentId, 'abort', { reason: 'test done' });
}, 240_000);
