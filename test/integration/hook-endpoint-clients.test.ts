/**
 * The resident hook endpoint with the real agent CLIs, offline against the scripted model servers,
 * a real dev server and worker, and no `warden start` (every session auto-starts its own agent):
 *
 *  - Claude Code (2.1.330), hooks as a user-scope install writes them: `type: "http"` hooks posting
 *    PreToolUse / PostToolUse / PostToolUseFailure straight to the endpoint (with the token and the
 *    session's CLAUDE_PROJECT_DIR in headers), the forwarder for every other event. The first hook
 *    (UserPromptSubmit, a forwarder) starts the endpoint; tool calls are turns; a whisper queued while
 *    the model thinks reaches the next model request through the HTTP PostToolUse hook. Then the
 *    endpoint is SIGKILLed mid-session: Claude goes on (its HTTP hooks fail without blocking), the
 *    next forwarder hook (Stop) starts the endpoint again, and every acknowledged turn is there.
 *  - Codex (0.169), the forwarder on every event: auto-start, a shell call as a turn, a whisper
 *    delivered through PostToolUse.
 */
import { execa } from 'execa';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import type { HookEndpoint } from '../../src/hooks/endpoint-file.js';
import { sessionAgentId } from '../../src/hooks/session.js';
import { messageTexts, startAnthropicServer, text, toolUse, type AnthropicServer } from '../fixtures/anthropic-server.js';
import { inputTexts, message, shellCall, startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { reportedTurns, waitForStatus } from '../helpers/agents.js';
import { claudeBinary, offlineClaudeEnv } from '../helpers/claude.js';
import { codexExecArgs, codexHooksToml, execCodex, offlineCodexEnv } from '../helpers/codex.js';
import { shellWord } from '../helpers/hooks.js';
import { endpointUser, serveOf } from '../helpers/endpoint.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';

const stack = useStack();
const FORWARD = join(ROOT, 'dist/src/hooks/forward.js');

let scratch: string;
let claudeModel: AnthropicServer | null = null;
let codexModel: ModelServer | null = null;
const homes: string[] = [];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-endpoint-clients-'));
});
afterEach(async () => {
  await claudeModel?.close();
  await codexModel?.close();
  claudeModel = codexModel = null;
  for (const home of homes.splice(0)) for (const pid of endpointPids({ WARDEN_HOME: home })) process.kill(pid, 'SIGKILL');
});
afterAll(() => cleanup(scratch));

/** A user of their own (endpointUser) whose project is `<name>`, with a log of the forwarder's stderr. */
async function user(name: string) {
  const dir = join(scratch, name);
  const { home, project: work, env, endpoint } = await endpointUser(dir, name, stack.server);
  homes.push(env.WARDEN_HOME);
  const hookLog = join(dir, 'hook-stderr.log');
  writeFileSync(hookLog, '');
  return {
    dir,
    home,
    work,
    env,
    endpoint,
    hookLog: () => readFileSync(hookLog, 'utf8'),
    forwarder: (agent: string) => `${shellWord(process.execPath)} ${shellWord(FORWARD)} ${agent} 2>>${shellWord(hookLog)}`,
  };
}

/** Claude Code's hooks as a user-scope install writes them (the contract in docs/using/hooks.md). */
function claudeUserHooks(endpoint: HookEndpoint, forwarder: string) {
  const http = {
    type: 'http',
    url: `${endpoint.url}/hooks/claude`,
    headers: {
      Authorization: `Bearer ${endpoint.token}`,
      'X-Warden-Project-Dir': '$CLAUDE_PROJECT_DIR',
      'X-Warden-Auto-Start': '$WARDEN_AUTO_START',
      'X-Warden-Agent': '$WARDEN_AGENT_ID',
    },
    allowedEnvVars: ['CLAUDE_PROJECT_DIR', 'WARDEN_AUTO_START', 'WARDEN_AGENT_ID'],
    timeout: 30,
  };
  const command = [{ type: 'command', command: forwarder, timeout: 30 }];
  return {
    hooks: {
      UserPromptSubmit: [{ hooks: command }],
      PreToolUse: [{ matcher: '*', hooks: [http] }],
      PostToolUse: [{ matcher: '*', hooks: [http] }],
      PostToolUseFailure: [{ matcher: '*', hooks: [http] }],
      Notification: [{ hooks: command }],
      Stop: [{ hooks: command }],
      SessionEnd: [{ hooks: command }],
    },
  };
}

const endpointPids = (env: { WARDEN_HOME: string }) => serveOf(env.WARDEN_HOME);

test('Claude Code: HTTP hooks for tool calls, the forwarder for the rest; the endpoint SIGKILLed mid-session comes back', async () => {
  const u = await user('ccproj');
  const config = join(u.home, '.claude');
  mkdirSync(config, { recursive: true });
  writeFileSync(join(config, 'settings.json'), JSON.stringify(claudeUserHooks(u.endpoint, u.forwarder('claude')), null, 2));
  // Quiet supervision: every whisper here is the test's own.
  mkdirSync(join(u.env.XDG_CONFIG_HOME, 'warden'), { recursive: true });
  writeFileSync(join(u.env.XDG_CONFIG_HOME, 'warden', 'warden.yaml'), 'supervisor:\n  eval_interval: 1000\n  idle_after: 0\n');
  const sessionId = randomUUID();
  const agentId = sessionAgentId(u.work, sessionId);

  let killed: number | undefined;
  claudeModel = await startAnthropicServer({
    script: async (_req, i) => {
      if (i === 0) {
        // The first hook (UserPromptSubmit, a forwarder) started the endpoint and the agent.
        await waitForStatus(stack.warden, agentId, () => true, 'the session agent');
        return toolUse('Bash', { command: 'echo one', description: 'One' }, { id: 'toolu_ep_1' });
      }
      if (i === 1) {
        // While the model thinks, a human steers: the next tool call's HTTP hook delivers it.
        await stack.warden.signal(agentId, 'steer', { text: 'UNIQUE-HTTP-STEER: check the logs' });
        await waitForStatus(stack.warden, agentId, (s) => s.pendingWhispers === 1, 'a pending whisper');
        return toolUse('Bash', { command: 'echo two', description: 'Two' }, { id: 'toolu_ep_2' });
      }
      if (i === 2) {
        // The endpoint dies mid-session: the next tool call's HTTP hooks cannot reach it.
        [killed] = endpointPids(u.env);
        process.kill(killed!, 'SIGKILL');
        await eventually(async () => !endpointPids(u.env).includes(killed!), { what: 'the endpoint gone' });
        return toolUse('Bash', { command: 'echo three', description: 'Three' }, { id: 'toolu_ep_3' });
      }
      return text('all done');
    },
  });
  const r = await execa(claudeBinary(), ['-p', 'Run the three steps.', '--output-format', 'json', '--allowedTools', 'Bash', '--session-id', sessionId], {
    cwd: u.work,
    extendEnv: false,
    env: { ...u.env, ...offlineClaudeEnv(claudeModel.url, { configDir: config }) },
    stdin: 'ignore',
    all: true,
    reject: false,
    timeout: 120_000,
  });
  const output = `${r.shortMessage ?? ''}\n${String(r.all)}\n--- hook stderr ---\n${u.hookLog()}\n--- serve.log ---\n${readFileSync(join(u.env.WARDEN_HOME, 'serve.log'), 'utf8')}`;
  expect(r.exitCode, output).toBe(0);
  expect(JSON.parse(String(r.stdout).trim().split('\n').at(-1) ?? '{}').result, output).toBe('all done');

  const reqs = claudeModel.agentRequests();
  expect(reqs, output).toHaveLength(4);
  // The whisper reached the model request after the second tool call, through the HTTP PostToolUse hook.
  expect(messageTexts(reqs[1]!.body).join('\n')).not.toContain('UNIQUE-HTTP-STEER');
  expect(messageTexts(reqs[2]!.body).join('\n'), output).toContain('[steering] UNIQUE-HTTP-STEER: check the logs');

  // The Stop hook (a forwarder) started the endpoint again and reported the last answer.
  const again = endpointPids(u.env);
  expect(again, output).toHaveLength(1);
  expect(again[0]).not.toBe(killed);
  const turns = await reportedTurns(stack.warden, agentId);
  const calls = turns.flatMap((t) => t.toolCalls?.map((c) => c.args) ?? []);
  // Tool calls one and two were acknowledged before the kill and are there once each; three's
  // hooks found no endpoint (Claude went on without them).
  expect(calls, output).toEqual(['echo one', 'echo two']);
  expect(turns.at(-1)!.text).toBe('all done');
  const s = await stack.warden.status(agentId);
  expect(s.whispersDelivered).toBe(1);
  expect(s.task).toBe('Run the three steps.');
  await stack.warden.signal(agentId, 'abort', {});
}, 240_000);

test('Codex: the forwarder on every event starts the endpoint; a shell call is a turn; a whisper reaches the model', async () => {
  const u = await user('cxproj');
  const codexHome = join(u.dir, 'codex-home');
  mkdirSync(codexHome, { recursive: true });
  mkdirSync(join(u.env.XDG_CONFIG_HOME, 'warden'), { recursive: true });
  writeFileSync(join(u.env.XDG_CONFIG_HOME, 'warden', 'warden.yaml'), 'supervisor:\n  eval_interval: 1000\n  idle_after: 0\n');
  writeFileSync(join(codexHome, 'config.toml'), codexHooksToml(u.forwarder('codex'), ['UserPromptSubmit', ['PreToolUse', '*'], ['PostToolUse', '*'], 'Stop']));
  let agentId: string | undefined;
  let i = 0;
  codexModel = await startModelServer({
    script: async () => {
      const step = i++;
      if (step === 0) {
        // The session's agent: the one agent the first hook auto-started.
        const pids = await eventually(async () => (endpointPids(u.env).length ? endpointPids(u.env) : null), { what: 'the endpoint' });
        expect(pids).toHaveLength(1);
        const listed = await eventually(
          async () => {
            const list = await stack.warden.list();
            return list.find((a) => a.agentId.startsWith('cxproj-')) ?? null;
          },
          { what: 'the auto-started agent' },
        );
        agentId = listed.agentId;
        await stack.warden.signal(agentId, 'steer', { text: 'UNIQUE-FORWARDED-STEER: mind the output' });
        await waitForStatus(stack.warden, agentId, (s) => s.pendingWhispers === 1, 'a pending whisper');
        return shellCall('echo hi', { extra: { login: false }, callId: 'call_ep_1' });
      }
      return message('done');
    },
  });
  const r = await execCodex([...codexExecArgs(codexModel, u.work), 'Say hi.'], {
    cwd: u.work,
    env: offlineCodexEnv(u.home, codexHome, u.env),
    timeoutMs: 120_000,
  });
  const output = `${String(r.all)}\n--- hook stderr ---\n${u.hookLog()}\n--- unscripted ---\n${JSON.stringify(codexModel.responsesRequests().map((q) => q.reply))}`;
  expect(r.exitCode, output).toBe(0);
  expect(u.hookLog()).toBe('');
  const reqs = codexModel.responsesRequests();
  expect(reqs, output).toHaveLength(2);
  expect(inputTexts(reqs[1]!.body, 'developer').join('\n'), output).toContain('[steering] UNIQUE-FORWARDED-STEER: mind the output');
  const turns = await reportedTurns(stack.warden, agentId!);
  expect(turns.flatMap((t) => t.toolCalls ?? [])).toEqual([{ name: 'Bash', args: 'echo hi', result: 'hi\n', ok: true }]);
  expect(turns.at(-1)!.text).toBe('done');
  await stack.warden.signal(agentId!, 'abort', {});
}, 240_000);
