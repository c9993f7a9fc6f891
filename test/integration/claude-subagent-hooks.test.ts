/**
 * Claude Code's SubagentStart and SubagentStop hooks with the real Claude Code binary (`claude -p`),
 * offline against the scripted Anthropic Messages API, its project hooks wired to the built `warden
 * hook claude`, and a real dev server + worker: the model runs a sub-agent (the Agent tool), and the
 * sub-agent is listed under the agent in its status (and in `warden status`), ended, with what it
 * spent (read by the hook from the sub-agent's own transcript) counted toward the agent's budgets.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import type { Budgets } from '../../src/domain/contract/schemas.js';
import { messageTexts, startAnthropicServer, text, toolUse, type AnthropicRequest, type AnthropicServer } from '../fixtures/anthropic-server.js';
import { waitForStatus } from '../helpers/agents.js';
import { claudeBinary, offlineClaudeEnv, runClaudeHook } from '../helpers/claude.js';
import { shellWord, wardenHookCommand } from '../helpers/hooks.js';
import { ROOT, cleanup, useStack } from '../helpers/stack.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
let scratch: string;
let model: AnthropicServer | null = null;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-claude-subagent-'));
});
afterEach(async () => {
  await model?.close();
  model = null;
});
afterAll(() => cleanup(scratch));

const SUB = 'UNIQUE-SUBAGENT-PROMPT: say what you see';
/**
 * What the scripted sub-agent spends: a first answer (text and a Bash call) of 1000 tokens in, 300
 * cache writes, 4000 cache reads and 200 out, then a last one of 1234 in, 5000 cache reads, 567 out.
 */
const SUB_IN = 1000 + 300 + 4000 + 1234 + 5000;
const SUB_OUT = 200 + 567;

/** What each of the session's own model calls spends (the scripted server's default usage: 10 in, 5 out). */
const OWN_PER_CALL = 10 + 5;

/**
 * A Claude Code session in its own project whose model runs one general-purpose sub-agent; returns
 * its output for messages, and what the session's own calls spent (its Stop hooks count them).
 */
async function sessionWithSubagent(agentId: string, opts: { budgets?: Partial<Budgets> } = {}): Promise<{ output: string; own: number }> {
  const dir = join(scratch, agentId);
  const work = join(dir, 'work');
  const home = join(dir, 'home');
  const hookLog = join(dir, 'hook-stderr.log');
  mkdirSync(join(work, '.claude'), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(hookLog, '');
  const command = wardenHookCommand('claude', agentId, stack.server, ['--strict', `2>>${shellWord(hookLog)}`]);
  const hook = [{ type: 'command', command, timeout: 30 }];
  const settings = {
    hooks: {
      PostToolUse: [{ matcher: '*', hooks: hook }],
      SubagentStart: [{ hooks: hook }],
      SubagentStop: [{ hooks: hook }],
      Stop: [{ hooks: hook }],
    },
  };
  writeFileSync(join(work, '.claude/settings.json'), JSON.stringify(settings, null, 2));
  await stack.warden.start({
    agentId,
    task: 'Look around.',
    supervisor: { evalInterval: 1000, idleAfterMs: 0 },
    ...(opts.budgets ? { budgets: opts.budgets } : {}),
  });

  model = await startAnthropicServer({
    script: (req: AnthropicRequest, i: number) => {
      if (messageTexts(req.body, 'user').some((t) => t.includes(SUB))) {
        if (!JSON.stringify((req.body as { messages?: unknown }).messages).includes('tool_result'))
          return toolUse(
            'Bash',
            { command: 'echo sub' },
            { text: 'Let me look.', usage: { input_tokens: 1000, output_tokens: 200, cache_creation_input_tokens: 300, cache_read_input_tokens: 4000 } },
          );
        return text('Nothing to report.', { input_tokens: 1234, output_tokens: 567, cache_read_input_tokens: 5000 });
      }
      if (i === 0) return toolUse('Agent', { description: 'Look around', prompt: SUB, subagent_type: 'general-purpose' }, { id: 'toolu_warden_sub_1' });
      return text('All done.');
    },
  });
  const r = await execa(claudeBinary(), ['-p', 'Look around.', '--output-format', 'json', '--allowedTools', 'Agent,Bash'], {
    cwd: work,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...offlineClaudeEnv(model.url, { configDir: join(home, '.claude') }) },
    stdin: 'ignore',
    all: true,
    reject: false,
    timeout: 90_000,
  });
  const output = `${String(r.all)}\n--- hook stderr ---\n${readFileSync(hookLog, 'utf8')}`;
  expect(r.exitCode, output).toBe(0);
  const ownCalls = model.agentRequests().filter((q) => !messageTexts(q.body, 'user').some((t) => t.includes(SUB))).length;
  return { output, own: ownCalls * OWN_PER_CALL };
}

const cliStatus = (agentId: string, json = false) =>
  execa(process.execPath, [WARDEN, 'status', agentId, ...(json ? ['--json'] : []), '--address', stack.server.address, '--namespace', stack.server.namespace], {
    reject: false,
  });

test('a sub-agent Claude Code runs is listed under its agent with its type, ended, and what it spent shows apart', async () => {
  const agentId = 'cc-subagent';
  const { output, own } = await sessionWithSubagent(agentId);
  const s = await waitForStatus(
    stack.warden,
    agentId,
    (x) => x.subagents !== undefined && x.subagents.running === 0 && x.tokens.total === own,
    "a sub-agent, ended, and the session's own calls counted",
  );
  expect(s.subagents, output).toMatchObject({ running: 0, seen: 1, list: [{ type: 'general-purpose' }] });
  expect(s.subagents!.list[0]!.stoppedAt).not.toBeNull();
  // Its own transcript's usage, each message once (Claude Code writes the first one as two entries).
  expect(s.subagents!.spend, output).toEqual({ tokens: { in: SUB_IN, out: SUB_OUT, total: SUB_IN + SUB_OUT }, costUsd: 0, counted: 1 });
  expect(s.tokens.total).toBe(own); // the session's own calls (its transcript, at Stop) stay apart
  expect(s.budgets.tokens.used).toBe(SUB_IN + SUB_OUT + own);
  const cli = await cliStatus(agentId);
  expect(cli.stdout, cli.stderr).toContain(`sub-agents: 0 running, 1 finished, ${((SUB_IN + SUB_OUT) / 1000).toFixed(1)}k tokens, $0.000`);
  expect(cli.stdout).toMatch(/ {4}general-purpose \S+: ended /);
  const json = JSON.parse((await cliStatus(agentId, true)).stdout) as { subagents: { spend: unknown } };
  expect(json.subagents.spend).toEqual(s.subagents!.spend);
  await stack.warden.signal(agentId, 'abort', {});
});

test("a token budget crossed by a sub-agent's spend pauses the agent as budgets do", async () => {
  const agentId = 'cc-subagent-budget';
  const { output, own } = await sessionWithSubagent(agentId, { budgets: { tokens: 10_000 } });
  const s = await waitForStatus(stack.warden, agentId, (x) => x.budgetPaused === true && x.tokens.total === own, 'paused at its token budget');
  expect(s, output).toMatchObject({ state: 'paused-by-user', paused: true });
  // The sub-agent's spend crossed it, with what the session's own calls had spent by then (it runs in the background).
  const at = Number(/^budget exhausted: tokens (\d+) of 10000$/.exec(s.pauseReason ?? '')?.[1]);
  expect(at - (SUB_IN + SUB_OUT), s.pauseReason ?? '').toBeGreaterThanOrEqual(0);
  expect(at - (SUB_IN + SUB_OUT)).toBeLessThanOrEqual(own);
  const cli = await cliStatus(agentId);
  expect(cli.stdout, cli.stderr).toContain(`budgets: tokens ${SUB_IN + SUB_OUT + own}/10000 — paused at a budget`);
  await stack.warden.signal(agentId, 'abort', {});
});

test('SubagentStop: a transcript path outside the session, or a symlink, is refused with the reason; the stop is still recorded, nothing counted', async () => {
  const agentId = 'cc-subagent-refused';
  await stack.warden.start({ agentId, task: 'Look around.', supervisor: { evalInterval: 1000, idleAfterMs: 0 } });
  const dir = join(scratch, agentId);
  const project = join(dir, 'projects', '-work');
  const subagents = join(project, 's1', 'subagents');
  mkdirSync(subagents, { recursive: true });
  writeFileSync(join(project, 's1.jsonl'), '');
  const fixture = readFileSync(join(ROOT, 'test/fixtures/claude-subagent-transcript.jsonl'));
  writeFileSync(join(dir, 'elsewhere.jsonl'), fixture);
  symlinkSync(join(dir, 'elsewhere.jsonl'), join(subagents, 'agent-link.jsonl'));
  // The shape Claude Code 2.1.330 sends (measured), with paths of this test's making.
  const payload = (id: string, agentTranscript: string) => ({
    session_id: 's1',
    transcript_path: join(project, 's1.jsonl'),
    cwd: dir,
    permission_mode: 'default',
    agent_id: id,
    agent_type: 'general-purpose',
    hook_event_name: 'SubagentStop',
    stop_hook_active: false,
    agent_transcript_path: agentTranscript,
    last_assistant_message: 'Nothing to report.',
  });
  const out = await runClaudeHook(stack.server, agentId, payload('a-out', join(dir, 'elsewhere.jsonl')));
  expect(out.exitCode, out.stderr).toBe(0);
  expect(out.stderr).toMatch(/sub-agent a-out: its spend is not counted: agent_transcript_path is not inside the session's transcript directory/);
  const link = await runClaudeHook(stack.server, agentId, payload('a-link', join(subagents, 'agent-link.jsonl')));
  expect(link.stderr).toMatch(/sub-agent a-link: its spend is not counted: agent_transcript_path is a symbolic link/);
  // The same file where it belongs is counted, once however often the stop comes.
  writeFileSync(join(subagents, 'agent-a-ok.jsonl'), fixture);
  for (let i = 0; i < 2; i++) {
    const ok = await runClaudeHook(stack.server, agentId, payload('a-ok', join(subagents, 'agent-a-ok.jsonl')));
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stderr).toBe('');
  }
  const s = await waitForStatus(stack.warden, agentId, (x) => x.subagents?.seen === 3 && x.subagents.spend?.counted === 1, 'three ended, one counted');
  expect(s.subagents!.spend).toEqual({ tokens: { in: SUB_IN, out: SUB_OUT, total: SUB_IN + SUB_OUT }, costUsd: 0, counted: 1 });
  await stack.warden.signal(agentId, 'abort', {});
});
