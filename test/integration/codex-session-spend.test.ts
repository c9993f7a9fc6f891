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
import {
  functionCallItem,
  functionCallOutputs,
  inputTexts,
  message,
  respond,
  shellCall,
  startModelServer,
  type ModelReply,
  type ModelServer,
  type Usage,
} from '../fixtures/model-server.js';
import { codexExecArgs, codexHooksToml, execCodex, offlineCodexEnv, threadIdOf } from '../helpers/codex.js';
import { cliStatus, expectBudgetPausedWithoutPrice, expectTokensCounted } from '../helpers/own-spend.js';
import { shellWord, wardenHookCommand } from '../helpers/hooks.js';
import { cleanup, useStack } from '../helpers/stack.js';
import { waitForStatus } from '../helpers/agents.js';

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

/**
 * A throwaway CODEX_HOME whose config.toml wires the hooks to warden (sub-agents' too), and the
 * agent started; `codex(args)` runs codex there against the scripted `model`.
 */
async function hookedCodex(agentId: string, opts: { budgets?: Partial<Budgets>; userConfig?: string } = {}) {
  const dir = join(scratch, agentId);
  if (opts.userConfig) {
    // The user's own config, as the hook (running with the session's HOME) finds it.
    mkdirSync(join(dir, '.config/warden'), { recursive: true });
    writeFileSync(join(dir, '.config/warden/warden.yaml'), opts.userConfig);
  }
  const work = join(dir, 'work');
  const codexHome = join(dir, 'codex-home');
  const hookLog = join(dir, 'hook-stderr.log');
  mkdirSync(work, { recursive: true });
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(hookLog, '');
  const command = wardenHookCommand('codex', agentId, stack.server, ['--strict', `2>>${shellWord(hookLog)}`]);
  const events = ['UserPromptSubmit', ['PreToolUse', '*'], ['PostToolUse', '*'], 'Stop', 'SubagentStart', 'SubagentStop'] as Array<string | [string, string]>;
  writeFileSync(join(codexHome, 'config.toml'), codexHooksToml(command, events));
  await stack.warden.start({
    agentId,
    task: 'Look around.',
    supervisor: { evalInterval: 1000, idleAfterMs: 0 },
    ...(opts.budgets ? { budgets: opts.budgets } : {}),
  });
  const hookText = () => readFileSync(hookLog, 'utf8');
  const codex = async (args: string[]) => {
    const r = await execCodex([...codexExecArgs(model!, work), ...args], { cwd: work, env: offlineCodexEnv(dir, codexHome), timeoutMs: 90_000 });
    return { ...r, output: `${String(r.all)}\n--- hook stderr ---\n${hookText()}` };
  };
  return { dir, codex, hookLog: hookText };
}

/** A session of two prompts (`codex exec`, then `codex exec resume` of the same session), supervised by its hooks. */
async function twoTurnSession(agentId: string, opts: { budgets?: Partial<Budgets>; userConfig?: string } = {}) {
  const { dir, codex, hookLog } = await hookedCodex(agentId, opts);
  model = await startModelServer({
    script: (req) => {
      const said = inputTexts(req.body, 'user').join('\n');
      if (said.includes('SECOND-PROMPT')) return message('Still fine.', { input_tokens: TURN2_IN, output_tokens: TURN2_OUT });
      if (functionCallOutputs(req.body).length === 0)
        return shellCall('echo look', { extra: { login: false }, usage: { input_tokens: 1000, cached_tokens: 400, output_tokens: 200, reasoning_tokens: 50 } });
      return message('All fine.', { input_tokens: 1500, cached_tokens: 900, output_tokens: 300 });
    },
  });
  const first = await codex(['FIRST-PROMPT: look around.']);
  expect(first.exitCode, first.output).toBe(0);
  const thread = threadIdOf(first.stdout);
  expect(thread, first.output).toMatch(/^[0-9a-f-]{36}$/);
  const afterFirst = await stack.warden.status(agentId);
  const second = await codex(['resume', thread!, 'SECOND-PROMPT: and now?']);
  const output = `${first.output}\n=== second ===\n${second.output}`;
  expect(second.exitCode, output).toBe(0);
  return { afterFirst, output, hookLog, dir };
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
  expect(state.carry).toEqual({ totals: { input: TURN1_IN + TURN2_IN, output: TURN1_OUT + TURN2_OUT, cached: 400 + 900 } });
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

test("with the model's price in the user's own config, the codex session's turns carry their cost and a cost budget pauses it", async () => {
  const agentId = 'cx-own-priced';
  // USD per million tokens. Turn one: 2,500 in of which 1,300 cached, 500 out.
  const userConfig = 'prices:\n  warden-test-*: { input: 10, output: 40, cache_read: 1 }\n';
  const turn1Cost = (1200 * 10 + 1300 * 1 + 500 * 40) / 1e6;
  const { afterFirst, output, hookLog } = await twoTurnSession(agentId, { budgets: { costUsd: 0.03 }, userConfig });
  expect(afterFirst.costUsd, output).toBeCloseTo(turn1Cost, 9);
  expect(afterFirst, output).toMatchObject({ state: 'paused-by-user', budgetPaused: true });
  expect(afterFirst.pauseReason).toMatch(/^budget exhausted: costUsd /);
  expect(hookLog()).not.toContain('cannot be enforced');
  await stack.warden.signal(agentId, 'abort', {});
});

/** A call of codex's sub-agent tools (the `multi_agent_v1` namespace: spawn_agent, wait_agent, send_input). */
function agentTool(name: string, args: Record<string, unknown>, callId: string, usage: Partial<Usage>): ModelReply {
  const call = functionCallItem(name, args, callId);
  return { kind: 'events', events: respond([{ ...call, item: { ...(call.item as object), namespace: 'multi_agent_v1' } }], usage) };
}

/** The sub-agent's two answers (7000 in, 70 out; then, given more work, 100 in, 1 out), its rollout's totals. */
const SUB_IN = 7000 + 100;
const SUB_OUT = 70 + 1;
/** The session's own calls: spawn, wait, send more work, wait, answer. */
const OWN_IN = 1000 + 500 + 10 + 20 + 300;
const OWN_OUT = 200 + 5 + 1 + 2 + 30;

test('a codex sub-agent (spawn_agent) is listed under the agent; what its own rollout spent counts, also the work it is sent later', async () => {
  const agentId = 'cx-subagent';
  const { codex, hookLog } = await hookedCodex(agentId);
  let subCalls = 0;
  model = await startModelServer({
    script: (req) => {
      const said = inputTexts(req.body, 'user').join('\n');
      if (!said.includes('PARENT-PROMPT'))
        return ++subCalls === 1
          ? message('sub done', { input_tokens: 7000, output_tokens: 70 })
          : message('sub done again', { input_tokens: 100, output_tokens: 1 });
      const outputs = functionCallOutputs(req.body);
      const done = new Set(outputs.map((o) => o.callId));
      const sub = /"agent_id":"([^"]+)"/.exec(outputs.find((o) => o.callId === 'call_spawn')?.output ?? '')?.[1] ?? 'unknown';
      if (!done.has('call_spawn'))
        return agentTool('spawn_agent', { message: 'SUBAGENT-TASK: look at the tests' }, 'call_spawn', { input_tokens: 1000, output_tokens: 200 });
      if (!done.has('call_wait1'))
        return agentTool('wait_agent', { targets: [sub], timeout_ms: 30_000 }, 'call_wait1', { input_tokens: 500, output_tokens: 5 });
      if (!done.has('call_send'))
        return agentTool('send_input', { target: sub, message: 'MORE-WORK: and the docs' }, 'call_send', { input_tokens: 10, output_tokens: 1 });
      if (!done.has('call_wait2')) return agentTool('wait_agent', { targets: [sub], timeout_ms: 30_000 }, 'call_wait2', { input_tokens: 20, output_tokens: 2 });
      return message('All done.', { input_tokens: 300, output_tokens: 30 });
    },
  });
  const r = await codex(['PARENT-PROMPT: have a sub-agent look around.']);
  expect(r.exitCode, r.output).toBe(0);
  expect(subCalls, r.output).toBe(2);
  const s = await waitForStatus(
    stack.warden,
    agentId,
    (x) => x.subagents?.seen === 1 && x.subagents.running === 0 && x.tokens.total > 0,
    'the sub-agent ended, the turn counted',
  );
  expect(s.subagents!.spend, r.output).toEqual({ tokens: { in: SUB_IN, out: SUB_OUT, total: SUB_IN + SUB_OUT }, costUsd: 0, counted: 1 });
  expect(s.subagents!.list[0]).toMatchObject({ type: 'default' });
  expect(s.tokens).toEqual({ in: OWN_IN, out: OWN_OUT, total: OWN_IN + OWN_OUT }); // its own rollout's totals hold none of the sub-agent's
  expect(s.budgets.tokens.used).toBe(OWN_IN + OWN_OUT + SUB_IN + SUB_OUT);
  expect(hookLog()).toBe('');
  await stack.warden.signal(agentId, 'abort', {});
});
