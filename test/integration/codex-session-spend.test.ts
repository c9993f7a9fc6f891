/**
 * A hooked Codex session's own spend, with the real Codex CLI (`codex exec --json`, then `codex
 * exec resume` of the same session) against the scripted Responses server, its hooks wired in a
 * throwaway CODEX_HOME's config.toml to the built `warden hook codex`, and a real dev server +
 * worker: at each Stop the hook reads what the session's rollout (`transcript_path`) gained since
 * the last counted turn (the growth of its cumulative `token_count` totals) and reports it as the
 * turn's tokens, so the agent's status shows what the model server reported and a token budget is
 * reached by the session's own turns.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import type { Budgets } from '../../src/domain/contract/schemas.js';
import { inputTexts, message, shellCall, startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { codexExecArgs, codexHooksToml, execCodex, offlineCodexEnv, threadIdOf } from '../helpers/codex.js';
import { cliStatus, expectBudgetPausedWithoutPrice, expectTokensCounted } from '../helpers/own-spend.js';
import { shellWord, wardenHookCommand } from '../helpers/hooks.js';
import { cleanup, useStack } from '../helpers/stack.js';

const stack = useStack();
let scratch: string;
let model: ModelServer | null = null;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-codex-spend-'));
});
afterEach(async () => {
  await model?.close();
  model = null;
});
afterAll(() => cleanup(scratch));

/**
 * The scripted model: the first prompt is answered with a shell call (1000 in, 400 of them cached;
 * 200 out, 50 of them reasoning) and then a message (1500 in, 900 cached; 300 out); the second
 * prompt with one message (2000 in, 100 out). Tokens in count the cached ones, tokens out the
 * reasoning ones, as the codex driver counts.
 */
const TURN1_IN = 1000 + 1500;
const TURN1_OUT = 200 + 300;
const TURN2_IN = 2000;
const TURN2_OUT = 100;

/** A session of two prompts (`codex exec`, then `codex exec resume` of the same session), supervised by its hooks. */
async function twoTurnSession(agentId: string, opts: { budgets?: Partial<Budgets> } = {}) {
  const dir = join(scratch, agentId);
  const work = join(dir, 'work');
  const codexHome = join(dir, 'codex-home');
  const hookLog = join(dir, 'hook-stderr.log');
  mkdirSync(work, { recursive: true });
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(hookLog, '');
  const command = wardenHookCommand('codex', agentId, stack.server, ['--strict', `2>>${shellWord(hookLog)}`]);
  writeFileSync(join(codexHome, 'config.toml'), codexHooksToml(command, ['UserPromptSubmit', ['PreToolUse', '*'], ['PostToolUse', '*'], 'Stop']));
  await stack.warden.start({
    agentId,
    task: 'Look around.',
    supervisor: { evalInterval: 1000, idleAfterMs: 0 },
    ...(opts.budgets ? { budgets: opts.budgets } : {}),
  });

  model = await startModelServer({
    script: (req) => {
      const said = inputTexts(req.body, 'user').join('\n');
      if (said.includes('SECOND-PROMPT')) return message('Still fine.', { input_tokens: TURN2_IN, output_tokens: TURN2_OUT });
      if (!JSON.stringify((req.body as { input?: unknown }).input).includes('function_call_output'))
        return shellCall('echo look', { extra: { login: false }, usage: { input_tokens: 1000, cached_tokens: 400, output_tokens: 200, reasoning_tokens: 50 } });
      return message('All fine.', { input_tokens: 1500, cached_tokens: 900, output_tokens: 300 });
    },
  });
  const codex = (args: string[]) =>
    execCodex([...codexExecArgs(model!, work), ...args], { cwd: work, env: offlineCodexEnv(dir, codexHome), timeoutMs: 90_000 });
  const first = await codex(['FIRST-PROMPT: look around.']);
  const out1 = `${String(first.all)}\n--- hook stderr ---\n${readFileSync(hookLog, 'utf8')}`;
  expect(first.exitCode, out1).toBe(0);
  const thread = threadIdOf(first.stdout);
  expect(thread, out1).toMatch(/^[0-9a-f-]{36}$/);
  const afterFirst = await stack.warden.status(agentId);
  const second = await codex(['resume', thread!, 'SECOND-PROMPT: and now?']);
  const output = `${out1}\n=== second ===\n${String(second.all)}\n--- hook stderr ---\n${readFileSync(hookLog, 'utf8')}`;
  expect(second.exitCode, output).toBe(0);
  return { afterFirst, output, hookLog: () => readFileSync(hookLog, 'utf8'), dir };
}

test("a two-turn hooked codex session: the agent's tokens are what the model server reported, each turn its own", async () => {
  const agentId = 'cx-own-spend';
  const { afterFirst, output, hookLog, dir } = await twoTurnSession(agentId);
  expect(afterFirst.tokens, output).toEqual({ in: TURN1_IN, out: TURN1_OUT, total: TURN1_IN + TURN1_OUT });
  const s = await expectTokensCounted(stack.warden, agentId, { in: TURN1_IN + TURN2_IN, out: TURN1_OUT + TURN2_OUT }, output);
  expect(hookLog()).toBe('');
  // Its state: the hook's own home (HOME of the session here), the rollout's totals carried.
  const state = JSON.parse(readFileSync(join(dir, '.warden/hook-spend', `${agentId}.json`), 'utf8')) as { path: string; carry: unknown };
  expect(state.path).toMatch(/\/sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-[^/]+\.jsonl$/);
  expect(state.carry).toEqual({ totals: { input: TURN1_IN + TURN2_IN, output: TURN1_OUT + TURN2_OUT } });
  const cli = await cliStatus(stack.server, agentId);
  expect(cli.stdout, cli.stderr).toContain(`tokens ${s.tokens.total} (in ${s.tokens.in}, out ${s.tokens.out})`);
  await stack.warden.signal(agentId, 'abort', {});
});

test("a token budget is reached by the codex session's own turns and pauses the agent; a cost budget it cannot hold is said", async () => {
  const agentId = 'cx-own-budget';
  const { afterFirst, output, hookLog } = await twoTurnSession(agentId, { budgets: { tokens: 2_500, costUsd: 3 } });
  expect(afterFirst, output).toMatchObject({
    state: 'paused-by-user',
    paused: true,
    budgetPaused: true,
    pauseReason: `budget exhausted: tokens ${TURN1_IN + TURN1_OUT} of 2500`,
  });
  // Once, on the hook's stderr, and in warden status.
  expect(hookLog().match(/cost budget cannot be enforced: no price for model warden-test-model \(Codex writes no cost/g), output).toHaveLength(1);
  await expectBudgetPausedWithoutPrice(stack.server, agentId);
  await stack.warden.signal(agentId, 'abort', {});
});
