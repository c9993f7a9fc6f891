/**
 * Claude Code's SubagentStart and SubagentStop hooks with the real Claude Code binary (`claude -p`),
 * offline against the scripted Anthropic Messages API, its project hooks wired to the built `warden
 * hook claude`, and a real dev server + worker: the model runs a sub-agent (the Agent tool), and the
 * sub-agent is listed under the agent in its status (and in `warden status`), ended.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { messageTexts, text, toolUse, type AnthropicRequest } from '../fixtures/anthropic-server.js';
import { waitForStatus } from '../helpers/agents.js';
import { useHookedClaude } from '../helpers/claude.js';
import { ROOT, useStack } from '../helpers/stack.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const claude = useHookedClaude('warden-claude-subagent-', stack);

test('a sub-agent Claude Code runs is listed under its agent with its type, ended when it stops', async () => {
  const agentId = 'cc-subagent';
  const p = claude.project('p', agentId, { events: ['PostToolUse', 'SubagentStart', 'SubagentStop', 'Stop'], extra: ['--strict'] });
  await stack.warden.start({ agentId, task: 'Look around.', supervisor: { evalInterval: 1000, idleAfterMs: 0 } });

  const SUB = 'UNIQUE-SUBAGENT-PROMPT: say what you see';
  await claude.model({
    script: (req: AnthropicRequest, i: number) => {
      if (messageTexts(req.body, 'user').some((t) => t.includes(SUB))) return text('Nothing to report.');
      if (i === 0) return toolUse('Agent', { description: 'Look around', prompt: SUB, subagent_type: 'general-purpose' }, { id: 'toolu_warden_sub_1' });
      return text('All done.');
    },
  });
  const r = await claude.run(p, 'Look around.', ['--allowedTools', 'Agent']);
  const output = r.output;
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
