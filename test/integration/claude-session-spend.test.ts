/**
 * A hooked Claude Code session's own spend, with the real Claude Code binary (`claude -p`) against
 * the scripted Anthropic Messages API, its project hooks wired to the built `warden hook claude`,
 * and a real dev server + worker: at each Stop the hook reads what the session's transcript gained
 * since the last counted turn and reports it as the turn's tokens, so the agent's status shows what
 * the model server reported and a token budget is reached by the session's own turns.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { Budgets } from '../../src/domain/contract/schemas.js';
import { messageTexts, text, toolUse } from '../fixtures/anthropic-server.js';
import { cliStatus, expectBudgetPausedWithoutPrice, expectTokensCounted } from '../helpers/own-spend.js';
import { useHookedClaude } from '../helpers/claude.js';
import { useStack } from '../helpers/stack.js';

const stack = useStack();
const claude = useHookedClaude('warden-claude-spend-', stack);

/**
 * The scripted model: the first prompt is answered with a Bash call (1000 in, 300 cache writes,
 * 4000 cache reads, 200 out; written by Claude Code as two entries, its text and its tool_use) and
 * then a text (1234 in, 5000 cache reads, 567 out); the second prompt with one text (2000 in, 100 out).
 */
const TURN1_IN = 1000 + 300 + 4000 + 1234 + 5000;
const TURN1_OUT = 200 + 567;
const TURN2_IN = 2000;
const TURN2_OUT = 100;

/** A session of two prompts (`claude -p`, then `claude -p --resume` of the same session), supervised by its hooks. */
async function twoTurnSession(agentId: string, opts: { budgets?: Partial<Budgets>; userConfig?: string } = {}) {
  const p = claude.project(agentId, agentId, { events: ['PreToolUse', 'PostToolUse', 'Stop'], extra: ['--strict'] });
  if (opts.userConfig) {
    // The user's own config, as the hook (running with the session's HOME) finds it.
    mkdirSync(join(p.home, '.config/warden'), { recursive: true });
    writeFileSync(join(p.home, '.config/warden/warden.yaml'), opts.userConfig);
  }
  await stack.warden.start({
    agentId,
    task: 'Look around.',
    supervisor: { evalInterval: 1000, idleAfterMs: 0 },
    ...(opts.budgets ? { budgets: opts.budgets } : {}),
  });
  await claude.model({
    script: (req) => {
      const said = messageTexts(req.body, 'user').join('\n');
      if (said.includes('SECOND-PROMPT')) return text('Still fine.', { input_tokens: TURN2_IN, output_tokens: TURN2_OUT });
      if (!JSON.stringify((req.body as { messages?: unknown }).messages).includes('tool_result'))
        return toolUse(
          'Bash',
          { command: 'echo look' },
          { text: 'Let me look.', usage: { input_tokens: 1000, output_tokens: 200, cache_creation_input_tokens: 300, cache_read_input_tokens: 4000 } },
        );
      return text('All fine.', { input_tokens: 1234, output_tokens: 567, cache_read_input_tokens: 5000 });
    },
  });
  const session = randomUUID();
  const first = await claude.run(p, 'FIRST-PROMPT: look around.', ['--allowedTools', 'Bash', '--session-id', session]);
  expect(first.exitCode, first.output).toBe(0);
  const afterFirst = await stack.warden.status(agentId);
  const second = await claude.run(p, 'SECOND-PROMPT: and now?', ['--allowedTools', 'Bash', '--resume', session]);
  expect(second.exitCode, second.output).toBe(0);
  return { afterFirst, output: second.output, hookLog: p.hookLog, home: p.home };
}

test("a two-turn hooked session: the agent's tokens are what the model server reported, each turn its own", async () => {
  const agentId = 'cc-own-spend';
  const { afterFirst, output, hookLog, home } = await twoTurnSession(agentId);
  expect(afterFirst.tokens, output).toEqual({ in: TURN1_IN, out: TURN1_OUT, total: TURN1_IN + TURN1_OUT });
  const s = await expectTokensCounted(stack.warden, agentId, { in: TURN1_IN + TURN2_IN, out: TURN1_OUT + TURN2_OUT }, output);
  expect(hookLog()).toBe('');
  // Its state: the hook's own home (HOME of the session here), 0600.
  const state = JSON.parse(readFileSync(join(home, '.warden/hook-spend', `${agentId}.json`), 'utf8')) as { offset: number; path: string };
  expect(state.path).toMatch(/\.jsonl$/);
  expect(state.offset).toBeGreaterThan(0);
  const cli = await cliStatus(stack.server, agentId);
  expect(cli.stdout, cli.stderr).toContain(`tokens ${s.tokens.total} (in ${s.tokens.in}, out ${s.tokens.out})`);
  await stack.warden.signal(agentId, 'abort', {});
});

test("a token budget is reached by the session's own turns and pauses the agent; a cost budget it cannot hold is said", async () => {
  const agentId = 'cc-own-budget';
  const { afterFirst, output, hookLog } = await twoTurnSession(agentId, { budgets: { tokens: 5_000, costUsd: 3 } });
  expect(afterFirst, output).toMatchObject({
    state: 'paused-by-user',
    paused: true,
    budgetPaused: true,
    pauseReason: `budget exhausted: tokens ${TURN1_IN + TURN1_OUT} of 5000`,
  });
  // Once, on the hook's stderr, and in warden status.
  expect(hookLog().match(/cost budget cannot be enforced: no price for model \S+/g), output).toHaveLength(1);
  await expectBudgetPausedWithoutPrice(stack.server, agentId);
  await stack.warden.signal(agentId, 'abort', {});
});

test("with the model's price in the user's own config, the session's turns carry their cost and a cost budget pauses it", async () => {
  const agentId = 'cc-own-priced';
  // USD per million tokens; every model ('*'). Turn one: 2,234 plain input, 9,000 cache reads, 300 cache writes, 767 out.
  const userConfig = "prices:\n  '*': { input: 10, output: 50, cache_read: 1, cache_write: 12.5 }\n";
  const turn1Cost = (2234 * 10 + 9000 * 1 + 300 * 12.5 + 767 * 50) / 1e6;
  const { afterFirst, output, hookLog } = await twoTurnSession(agentId, { budgets: { costUsd: 0.05 }, userConfig });
  expect(afterFirst.costUsd, output).toBeCloseTo(turn1Cost, 9);
  expect(afterFirst, output).toMatchObject({ state: 'paused-by-user', budgetPaused: true });
  expect(afterFirst.pauseReason).toMatch(/^budget exhausted: costUsd /);
  expect(hookLog()).not.toContain('cannot be enforced');
  const cli = await cliStatus(stack.server, agentId);
  expect(cli.stdout).not.toContain('warning: cost budget cannot be enforced');
  await stack.warden.signal(agentId, 'abort', {});
});
