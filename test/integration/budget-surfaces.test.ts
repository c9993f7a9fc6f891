/**
 * Budgets from every surface, on a real dev server and worker: `warden start --budget-turns 2` (the
 * built CLI) pauses an external agent at its second reported turn, as a budget in the spec does; a
 * bad budget flag is a usage error (exit 2) naming the flag; and a session started by its hooks
 * (`warden hook claude`, a real process) in a project whose untrusted warden.yaml tries to lift
 * the cap gets the user's `budgets.turns` from ~/.config/warden/warden.yaml in its agent's spec.
 */
import { execa } from 'execa';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { productiveTurn } from '../helpers/agents.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const scratch = mkdtempSync(join(tmpdir(), 'warden-budget-surfaces-'));
afterAll(() => cleanup(scratch));

const cli = (args: string[], input?: string) =>
  execa(process.execPath, [WARDEN, '--address', stack.server.address, '--namespace', stack.server.namespace, ...args], {
    reject: false,
    timeout: 60_000,
    ...(input !== undefined ? { input } : { stdin: 'ignore' as const }),
  });

/** The spec an agent's workflow was started with (its first history event). */
async function startedSpec(agentId: string): Promise<{ budgets?: Record<string, number>; safety?: Record<string, number> }> {
  const history = await stack.warden.client.workflow.getHandle(`agent-${agentId}`).fetchHistory();
  const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
  return JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString('utf8'));
}

describe('budgets on the CLI and in the config file', () => {
  test('warden start --budget-turns 2: the second reported turn spends it, the reply says paused, the agent waits paused', async () => {
    const start = await cli(['start', 'cli-budget', '--task', 'Fix the flaky test', '--budget-turns', '2', '--idle-after', '0', '--json']);
    expect(start.exitCode, start.stderr).toBe(0);
    expect(JSON.parse(start.stdout).spec.budgets).toEqual({ turns: 2 });
    expect((await startedSpec('cli-budget')).budgets).toEqual({ turns: 2 });

    const r1 = JSON.parse((await cli(['report', 'cli-budget', '--json'], JSON.stringify(productiveTurn(1)))).stdout);
    expect(r1).toMatchObject({ accepted: true, stop: false });
    const r2 = JSON.parse((await cli(['report', 'cli-budget', '--json'], JSON.stringify(productiveTurn(2)))).stdout);
    expect(r2).toMatchObject({ accepted: true, stop: false, paused: true, state: 'paused-by-user' });

    const done = await stack.warden.status('cli-budget');
    expect(done).toMatchObject({ state: 'paused-by-user', turns: 2, budgetPaused: true });
    expect(done.pauseReason).toMatch(/budget exhausted: turns 2 of 2/);
    expect(done.budgets.turns).toEqual({ used: 2, limit: 2 });
    await stack.warden.control('cli-budget', 'abort', { reason: 'test done' });

    // A summary line says what caps the agent.
    const text = await cli(['start', 'cli-budget-text', '--task', 'x', '--budget-cost-usd', '2.5', '--budget-wall-clock', '90m']);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain('  budgets: pauses at $2.5, 90m of wall-clock time; warns at 80% of each');
    await stack.warden.signal('cli-budget-text', 'abort', {});
  });

  test('a bad budget flag or config key: exit 2 naming it, and no agent', async () => {
    const bad = await cli(['start', 'cli-budget-bad', '--task', 'x', '--budget-turns', '0']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--budget-turns must be a whole number above 0, got "0"');
    const config = join(scratch, 'bad.yaml');
    writeFileSync(config, 'budgets:\n  cost_usd: lots\n');
    const badFile = await cli(['start', 'cli-budget-bad', '--task', 'x', '--config', config]);
    expect(badFile.exitCode).toBe(2);
    expect(badFile.stderr).toContain(`${config}: budgets.cost_usd: Invalid input: expected number, received string`);
    await expect(stack.warden.status('cli-budget-bad')).rejects.toThrow(/no such agent/);
  });

  test("a hooked session: the user's budgets.turns is in its agent's spec, and an untrusted project cannot lift it", async () => {
    const home = join(scratch, 'home');
    mkdirSync(join(home, 'config', 'warden'), { recursive: true });
    writeFileSync(join(home, 'config', 'warden', 'warden.yaml'), 'supervisor:\n  idle_after: 0\nbudgets:\n  turns: 2\nsafety:\n  max_restarts: 1\n');
    const project = join(scratch, 'capped-repo');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'warden.yaml'), 'budgets:\n  turns: 100000\n  tokens: 50000\nsafety:\n  max_restarts: 100\n');
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      WARDEN_CACHE_DIR: join(home, 'cache'),
      TEMPORAL_ADDRESS: stack.server.address,
      TEMPORAL_NAMESPACE: stack.server.namespace,
    };
    const sessionId = randomUUID();
    const agentId = `capped-repo-${sessionId.replace(/-/g, '').slice(-12)}`;
    const hook = (i: number) =>
      execa(process.execPath, [WARDEN, 'hook', 'claude'], {
        env,
        extendEnv: false,
        reject: false,
        timeout: 60_000,
        input: JSON.stringify({
          session_id: sessionId,
          cwd: project,
          transcript_path: '/nonexistent',
          hook_event_name: 'PostToolUse',
          tool_name: 'Bash',
          tool_input: { command: `echo ${i}` },
          tool_response: { stdout: `${i}\n`, stderr: '', interrupted: false },
          tool_use_id: `toolu_budget_${i}`,
        }),
      });

    const first = await hook(1);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stderr).toContain('is not trusted, so warden ignored budgets.turns (100000 turns would lift your cap of 2 turns), safety;');
    const spec = await startedSpec(agentId);
    expect(spec.budgets).toEqual({ turns: 2, tokens: 50_000 });
    expect(spec.safety).toMatchObject({ maxRestarts: 1 });

    expect((await hook(2)).exitCode).toBe(0);
    const done = await eventually(async () => {
      const s = await stack.warden.status(agentId);
      return s.state === 'paused-by-user' ? s : null;
    });
    expect(done.pauseReason).toMatch(/budget exhausted: turns 2 of 2/);
    expect(done.turns).toBe(2);
    // The session's next hook does not start a fresh agent with a fresh budget: the same agent stays paused.
    expect((await hook(3)).exitCode).toBe(0);
    const after = await stack.warden.status(agentId);
    expect(after).toMatchObject({ state: 'paused-by-user', budgetPaused: true, runs: done.runs });
    expect(after.budgets.turns.limit).toBe(2);
    await stack.warden.control(agentId, 'abort', { reason: 'test done' });
  });
});
