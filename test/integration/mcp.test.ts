/**
 * warden's MCP server against a real dev server and worker, driven by the MCP SDK's own Client:
 *
 *  - over stdio (`warden mcp`, the built CLI as a child process): list_agents finds a supervised
 *    agent, agent_status reads it, steer queues a whisper that agent_status shows pending and that
 *    arrives in the agent's next reported turn; pause and resume apply; a missing agent is a tool
 *    error naming agentId; the timeline resource reads the steer's transition;
 *  - over streamable HTTP (`warden serve`, `/mcp`): the same tools with the bearer token of
 *    $WARDEN_HOME/mcp-token, refused without it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execa } from 'execa';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from '../../src/devserver/ports.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';
import { waitForStatus } from '../helpers/agents.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const quiet = { evalInterval: 1000, idleAfterMs: 0 }; // no evaluations: every whisper here is the test's own

let scratch: string;
let stdio: Client;
let stderr = '';

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-mcp-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [WARDEN, '--address', stack.server.address, '--namespace', stack.server.namespace, 'mcp'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', WARDEN_HOME: join(scratch, 'warden-home'), WARDEN_LOG_LEVEL: 'warn' },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  stdio = new Client({ name: 'warden-test', version: '1' });
  await stdio.connect(transport);
});
afterAll(async () => {
  await stdio?.close();
  cleanup(scratch);
});

type Structured = Record<string, unknown>;
const call = async (c: Client, name: string, args: Record<string, unknown>) => {
  const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
  return { ...r, text: (r.content as Array<{ text?: string }>)[0]?.text ?? '', s: r.structuredContent as Structured };
};

async function readTimeline(agentId: string) {
  const r = await stdio.readResource({ uri: `warden://agents/${agentId}/timeline` });
  return JSON.parse((r.contents[0] as { text: string }).text) as { entries: Array<{ kind: string; event?: string }>; recentTurns: unknown[] };
}

test('over stdio: list, status, steer (pending, then in the next reported turn), pause and resume, errors and the timeline', async () => {
  const agentId = 'mcp-lead-target';
  await stack.warden.start({ agentId, task: 'Write the marker file.', supervisor: quiet });
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'running' || s.state === 'spawning', 'the agent started');

  const listed = await eventually(
    async () => {
      const r = await call(stdio, 'list_agents', {});
      const agents = r.s?.agents as Array<{ agentId: string; state: string | null }> | undefined;
      return agents?.some((a) => a.agentId === agentId) ? r : null;
    },
    { what: `list_agents to show ${agentId}` },
  );
  expect(listed.isError, `${listed.text}\n${stderr}`).toBeFalsy();
  expect(listed.s).toEqual(expect.objectContaining({ more: false, truncated: [] }));

  const before = await call(stdio, 'agent_status', { agentId });
  expect(before.isError, before.text).toBeFalsy();
  expect(before.s).toEqual(expect.objectContaining({ agentId, whispers: { pending: 0, delivered: 0 } }));
  expect((before.s.untrusted as { task: string }).task).toBe('Write the marker file.');

  const steer = await call(stdio, 'steer', { agentId, text: 'UNIQUE-MCP-STEER: use printf' });
  expect(steer.isError, steer.text).toBeFalsy();
  expect(steer.s).toEqual(expect.objectContaining({ agentId, action: 'steer', outcome: 'applied' }));

  const pending = await call(stdio, 'agent_status', { agentId });
  expect(pending.s.whispers).toEqual({ pending: 1, delivered: 0 });
  expect(pending.s.pendingWhispers).toEqual([expect.objectContaining({ type: 'STEERING', untrusted: { text: 'UNIQUE-MCP-STEER: use printf' } })]);

  // The agent's next reported turn gets it.
  const reply = await stack.warden.reportTurn(agentId, { id: 'mcp-turn-1', text: 'wrote the marker', toolCalls: [{ name: 'Bash', args: 'echo hi > m' }] });
  expect(reply.whispers.map((w) => [w.type, w.text])).toEqual([['STEERING', 'UNIQUE-MCP-STEER: use printf']]);

  // Its timeline has the turn (a resume starts the supervisor's window afresh: read it before).
  const withTurn = await readTimeline(agentId);
  expect(withTurn.recentTurns).toEqual([expect.objectContaining({ untrusted: { text: 'wrote the marker', tools: ['Bash'] } })]);

  const paused = await call(stdio, 'pause', { agentId, reason: 'the lead wants a look' });
  expect(paused.s, paused.text).toEqual(expect.objectContaining({ outcome: 'applied', state: 'paused-by-user' }));
  const resumed = await call(stdio, 'resume', { agentId, note: 'looks fine' });
  expect(resumed.s, resumed.text).toEqual(expect.objectContaining({ outcome: 'applied', state: 'running' }));
  const again = await call(stdio, 'resume', { agentId });
  expect(again.isError).toBe(true);
  expect(again.text).toMatch(/^agentId: resume refused by agent mcp-lead-target \(state running\): /);

  const missing = await call(stdio, 'agent_status', { agentId: 'no-such-agent' });
  expect(missing.isError).toBe(true);
  expect(missing.text).toMatch(/^agentId: no such agent: no-such-agent/);

  const timeline = await readTimeline(agentId);
  expect(timeline.entries.filter((e) => e.kind === 'transition').map((e) => e.event)).toEqual(expect.arrayContaining(['pause', 'resume']));

  // start: a new agent, supervised as `warden start` would.
  const started = await call(stdio, 'start', { agentId: 'mcp-started', task: 'Tidy the README.', budgetTurns: 5 });
  expect(started.isError, started.text).toBeFalsy();
  expect(started.s).toEqual(
    expect.objectContaining({ agentId: 'mcp-started', workflowId: 'agent-mcp-started', evaluator: 'heuristic', budgets: { turns: 5 } }),
  );
  await waitForStatus(stack.warden, 'mcp-started', (s) => s.budgets.turns.limit === 5, 'the started agent with its budget');
  const twice = await call(stdio, 'start', { agentId: 'mcp-started', task: 'again' });
  expect(twice.isError).toBe(true);
  expect(twice.text).toMatch(/^agentId: agent mcp-started is already running/);
  expect(stderr).toBe('');
});

test('over HTTP on `warden serve`: /mcp with the bearer token of $WARDEN_HOME/mcp-token, refused without it', async () => {
  const home = join(scratch, 'serve-home');
  const port = await freePort();
  const serve = execa(process.execPath, [WARDEN, 'serve', '--listen', `127.0.0.1:${port}`, '--json'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      WARDEN_HOME: join(home, '.warden'),
      TEMPORAL_ADDRESS: stack.server.address,
      TEMPORAL_NAMESPACE: stack.server.namespace,
      WARDEN_LOG_LEVEL: 'warn',
    },
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    cleanup: true,
  });
  try {
    const ready = await new Promise<{ url: string; mcp: string }>((resolve, reject) => {
      let out = '';
      serve.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        try {
          resolve(JSON.parse(out));
        } catch {
          // not all of it yet
        }
      });
      void serve.then((r) => reject(new Error(`warden serve exited: ${r.exitCode} ${String(r.stderr)}`)));
    });
    expect(ready.mcp).toBe(`http://127.0.0.1:${port}/mcp`);
    const tokenFile = join(home, '.warden', 'mcp-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();

    const refused = await fetch(ready.mcp, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    const fromPage = await fetch(ready.mcp, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(fromPage.status).toBe(403);

    const http = new Client({ name: 'warden-http-test', version: '1' });
    await http.connect(new StreamableHTTPClientTransport(new URL(ready.mcp), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const listed = await eventually(
        async () => {
          const r = await call(http, 'list_agents', { limit: 200 });
          return (r.s?.agents as Array<{ agentId: string }> | undefined)?.some((a) => a.agentId === 'mcp-lead-target') ? r : null;
        },
        { what: 'list_agents over HTTP' },
      );
      expect(listed.isError).toBeFalsy();
      const steer = await call(http, 'steer', { agentId: 'mcp-lead-target', text: 'UNIQUE-HTTP-STEER' });
      expect(steer.s, steer.text).toEqual(expect.objectContaining({ outcome: 'applied' }));
      const s = await stack.warden.status('mcp-lead-target');
      expect(s.pendingWhispers).toBe(1);
    } finally {
      await http.close();
    }
  } finally {
    serve.kill('SIGTERM');
    await serve;
  }
});
