/**
 * Claude Code's SubagentStart and SubagentStop hooks with the real Claude Code binary (`claude -p`),
 * offline against the scripted Anthropic Messages API, its project hooks wired to the built `warden
 * hook claude`, and a real dev server + worker: the model runs a sub-agent (the Agent tool), and the
 * sub-agent is listed under the agent in its status (and in `warden status`), ended.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { messageTexts, startAnthropicServer, text, toolUse, type AnthropicRequest, type AnthropicServer } from '../fixtures/anthropic-server.js';
import { waitForStatus } from '../helpers/agents.js';
import { claudeBinary, offlineClaudeEnv } from '../helpers/claude.js';
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

test('a sub-agent Claude Code runs is listed under its agent with its type, ended when it stops', async () => {
  const agentId = 'cc-subagent';
  const dir = join(scratch, 'p');
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
  await stack.warden.start({ agentId, task: 'Look around.', supervisor: { evalInterval: 1000, idleAfterMs: 0 } });

  const SUB = 'UNIQUE-SUBAGENT-PROMPT: say what you see';
  model = await startAnthropicServer({
    script: (req: AnthropicRequest, i: number) => {
      if (messageTexts(req.body, 'user').some((t) => t.includes(SUB))) return text('Nothing to report.');
      if (i === 0) return toolUse('Agent', { description: 'Look around', prompt: SUB, subagent_type: 'general-purpose' }, { id: 'toolu_warden_sub_1' });
      return text('All done.');
    },
  });
  const r = await execa(claudeBinary(), ['-p', 'Look around.', '--output-format', 'json', '--allowedTools', 'Agent'], {
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
  const s = await waitForStatus(stack.warden, agentId, (x) => x.subagents !== undefined && x.subagents.running === 0, 'a sub-agent, ended');
  expect(s.subagents, output).toMatchObject({ running: 0, seen: 1, list: [{ type: 'general-purpose' }] });
  expect(s.subagents!.list[0]!.stoppedAt).not.toBeNull();
  const cli = await execa(process.execPath, [WARDEN, 'status', agentId, '--address', stack.server.address, '--namespace', stack.server.namespace], {
    reject: false,
  });
  expect(cli.stdout, cli.stderr).toContain('sub-agents: 0 running, 1 seen');
  expect(cli.stdout).toMatch(/ {4}general-purpose \S+: ended /);
  await stack.warden.signal(agentId, 'abort', {});
});
