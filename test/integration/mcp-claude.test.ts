/**
 * A lead session steers its fleet through warden's MCP server: the real Claude Code binary (`claude
 * -p`, offline against the scripted Anthropic server of test/fixtures/anthropic-server.ts) with
 * `--mcp-config` starting the built `warden mcp` over stdio, against a real dev server and worker.
 * The scripted model calls warden's list_agents tool, reads the supervised agent in its result,
 * then calls steer on it; that agent's next reported turn receives the steering.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startAnthropicServer, text, toolResults, toolUse, type AnthropicScript } from '../fixtures/anthropic-server.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';
import { claudeBinary, offlineClaudeEnv } from '../helpers/claude.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const quiet = { evalInterval: 1000, idleAfterMs: 0 }; // no evaluations: the only whisper is the lead's

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-mcp-claude-'));
});
afterAll(() => cleanup(scratch));

test('claude with warden as an MCP server: list_agents, then steer; the steer arrives in the agent’s next turn', async () => {
  const target = 'mcp-fleet-worker';
  const steering = 'UNIQUE-LEAD-STEER: run the tests before claiming done';
  await stack.warden.start({ agentId: target, task: 'Fix the flaky test.', supervisor: quiet });
  // The list comes from visibility: wait until it shows the agent, as the lead will see it.
  await eventually(async () => (await stack.warden.list()).some((a) => a.agentId === target), { what: `${target} in the visibility store` });

  const script: AnthropicScript = (req, i) => {
    if (i === 0) return toolUse('mcp__warden__list_agents', {}, { id: 'toolu_warden_list' });
    if (i === 1) {
      // The list result names the agent: steer the one it found.
      const listed = toolResults(req.body).find((r) => r.toolUseId === 'toolu_warden_list');
      let agents: Array<{ agentId: string }> = [];
      try {
        agents = (JSON.parse(listed?.text ?? '{}') as { agents?: Array<{ agentId: string }> }).agents ?? [];
      } catch {
        // not warden's answer (an error): steer nobody
      }
      const found = agents.find((a) => a.agentId === target)?.agentId ?? 'not-listed';
      return toolUse('mcp__warden__steer', { agentId: found, text: steering }, { id: 'toolu_warden_steer' });
    }
    return text('steered the fleet');
  };
  const model = await startAnthropicServer({ script });
  try {
    const home = join(scratch, 'home');
    const work = join(scratch, 'work');
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    const mcpConfig = join(scratch, 'mcp.json');
    writeFileSync(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          warden: {
            type: 'stdio',
            command: process.execPath,
            args: [WARDEN, '--address', stack.server.address, '--namespace', stack.server.namespace, 'mcp'],
            env: { WARDEN_HOME: join(home, '.warden'), WARDEN_LOG_LEVEL: 'warn' },
          },
        },
      }),
    );
    const r = await execa(
      claudeBinary(),
      [
        '-p',
        `Steer ${target}: tell it to run the tests before claiming done.`,
        '--output-format',
        'json',
        '--mcp-config',
        mcpConfig,
        '--strict-mcp-config',
        '--allowedTools',
        'mcp__warden__list_agents,mcp__warden__steer',
      ],
      {
        cwd: work,
        extendEnv: false, // none of the developer's own Claude or Anthropic settings
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: home,
          ...offlineClaudeEnv(model.url, { configDir: join(home, '.claude') }),
          ENABLE_TOOL_SEARCH: 'false', // warden's tools offered up front, not behind a search tool
        },
        stdin: 'ignore',
        all: true,
        reject: false,
        timeout: 120_000,
      },
    );
    const output = String(r.all);
    expect(r.exitCode, output).toBe(0);
    expect(JSON.parse(String(r.stdout).trim().split('\n').at(-1) ?? '{}').result, output).toBe('steered the fleet');

    const reqs = model.agentRequests();
    expect(reqs, output).toHaveLength(3);
    // Claude offered warden's tools to the model, with their schemas.
    const tools = (reqs[0]!.body as { tools?: Array<{ name: string }> }).tools?.map((t) => t.name) ?? [];
    expect(tools).toEqual(expect.arrayContaining(['mcp__warden__list_agents', 'mcp__warden__agent_status', 'mcp__warden__steer']));
    const listed = toolResults(reqs[1]!.body).find((x) => x.toolUseId === 'toolu_warden_list');
    expect(listed?.isError, listed?.text).toBe(false);
    expect(listed?.text).toContain(`"agentId":"${target}"`);
    const steered = toolResults(reqs[2]!.body).find((x) => x.toolUseId === 'toolu_warden_steer');
    expect(steered?.isError, steered?.text).toBe(false);
    expect(JSON.parse(steered!.text)).toEqual(expect.objectContaining({ agentId: target, action: 'steer', outcome: 'applied' }));
  } finally {
    await model.close();
  }

  // The supervised agent's next reported turn gets the lead's steering.
  const reply = await stack.warden.reportTurn(target, {
    id: 'worker-turn-1',
    text: 'Looked at the flaky test.',
    toolCalls: [{ name: 'Read', args: 'test/flaky.test.ts' }],
  });
  expect(reply.whispers.map((w) => [w.type, w.text])).toEqual([['STEERING', steering]]);
  const s = await stack.warden.status(target);
  expect(s.whispersDelivered).toBe(1);
  expect(s.pendingWhispers).toBe(0);
});
