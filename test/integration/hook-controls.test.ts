/**
 * A hooked session and warden's controls, through the real `warden hook claude|codex` command
 * against a dev server and a worker:
 *
 *  - an aborted agent's session is not let loose: its PreToolUse is denied with the abort reason
 *    (the closed workflow stays closed, no new agent is started for the session), a PostToolUse
 *    ends the turn, and nothing fails;
 *  - an agent that targets warden's controls of itself (`warden dismiss <self>`,
 *    `temporal workflow signal --workflow-id agent-<self> --name resume`) is denied, and the
 *    attempt is recorded as REWARD_HACKING evidence; the same command for another agent is allowed.
 */
import { execa } from 'execa';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { waitForStatus } from '../helpers/agents.js';
import { ROOT, cleanup, useStack } from '../helpers/stack.js';

const stack = useStack();
let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-hook-controls-'));
});
afterAll(() => cleanup(scratch));
const WARDEN = join(ROOT, 'dist/src/cli/main.js');

/** `warden hook <cli>` as Claude Code / Codex run it (not --strict: the agent never suffers for its supervisor). */
function hook(cli: 'claude' | 'codex', agentId: string, payload: object) {
  const live = ['--address', stack.server.address, '--namespace', stack.server.namespace];
  return execa(process.execPath, [WARDEN, 'hook', cli, '--agent', agentId, ...live, '--timeout', '30000'], {
    input: JSON.stringify(payload),
    reject: false,
    timeout: 60_000,
  });
}

const preToolUse = (command: string, id: string) => ({
  hook_event_name: 'PreToolUse',
  session_id: 'sess-controls',
  tool_name: 'Bash',
  tool_input: { command, description: 'run it' },
  tool_use_id: id,
});

const decision = (stdout: string) =>
  stdout.trim()
    ? (JSON.parse(stdout) as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } }).hookSpecificOutput
    : undefined;

test('an aborted agent: its PreToolUse is denied with the abort reason, no new agent starts, a report ends the turn', async () => {
  const agentId = 'ctl-aborted';
  await stack.warden.start({ agentId, task: 'Fix the parser.' });
  const first = await hook('claude', agentId, preToolUse('ls', 'toolu_1'));
  expect(first.exitCode, first.stderr).toBe(0);
  expect(first.stdout).toBe(''); // running: allowed

  await stack.warden.signal(agentId, 'abort', { reason: 'it rewrote the tests' });
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'failed', 'aborted');

  for (const cli of ['claude', 'codex'] as const) {
    const r = await hook(cli, agentId, preToolUse('npm test', `toolu_2_${cli}`));
    expect(r.exitCode, r.stderr).toBe(0);
    const d = decision(r.stdout);
    expect(d?.permissionDecision, `${cli}: ${r.stdout} ${r.stderr}`).toBe('deny');
    expect(d?.permissionDecisionReason).toMatch(/agent ctl-aborted was aborted \(aborted: it rewrote the tests/);
    expect(d?.permissionDecisionReason).toMatch(/new session/);
  }

  // A report of the session ends the agent's turn instead of failing.
  const post = await hook('claude', agentId, {
    hook_event_name: 'PostToolUse',
    session_id: 'sess-controls',
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
    tool_response: { stdout: 'a' },
    tool_use_id: 'toolu_3',
  });
  expect(post.exitCode, post.stderr).toBe(0);
  expect(JSON.parse(post.stdout)).toMatchObject({ continue: false, stopReason: expect.stringMatching(/was aborted/) });

  // Still the one closed run: nothing was started again under its id.
  const runs = await stack.warden.list({ query: `WorkflowId = 'agent-${agentId}'` });
  expect(runs.map((r) => r.status)).toEqual(['FAILED']);
});

test('an aborted auto-started session: denied, and its closed agent is not started again', async () => {
  const project = join(scratch, 'ctlproj');
  const home = join(scratch, 'home');
  mkdirSync(project, { recursive: true });
  mkdirSync(home, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    WARDEN_CACHE_DIR: join(home, 'cache'),
    XDG_CONFIG_HOME: join(home, 'config'),
    TEMPORAL_ADDRESS: stack.server.address,
    TEMPORAL_NAMESPACE: stack.server.namespace,
  };
  const sessionId = randomUUID();
  const agentId = `ctlproj-${sessionId.replace(/-/g, '').slice(-12)}`;
  const run = (payload: object) =>
    execa(process.execPath, [WARDEN, 'hook', 'claude', '--timeout', '30000'], {
      env,
      extendEnv: false,
      reject: false,
      timeout: 60_000,
      input: JSON.stringify({ session_id: sessionId, cwd: project, transcript_path: '/nonexistent', ...payload }),
    });
  const prompt = await run({ hook_event_name: 'UserPromptSubmit', prompt: 'Fix the parser.' });
  expect(prompt.exitCode, prompt.stderr).toBe(0);
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'spawning', 'auto-started');
  await stack.warden.signal(agentId, 'abort', { reason: 'wrong direction' });
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'failed', 'aborted');

  const pre = await run({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_a1' });
  expect(pre.exitCode, pre.stderr).toBe(0);
  expect(decision(pre.stdout)?.permissionDecision, pre.stdout + pre.stderr).toBe('deny');
  expect(decision(pre.stdout)?.permissionDecisionReason).toMatch(/was aborted \(aborted: wrong direction/);
  const again = await run({ hook_event_name: 'UserPromptSubmit', prompt: 'Go on anyway.' });
  expect(again.exitCode, again.stderr).toBe(0);
  expect(JSON.parse(again.stdout).hookSpecificOutput.additionalContext).toMatch(/was aborted/);
  for (const e of [{ hook_event_name: 'Stop' }, { hook_event_name: 'SessionEnd', reason: 'other' }, { hook_event_name: 'PreCompact', trigger: 'auto' }]) {
    const r = await run(e);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout, e.hook_event_name).toBe('');
    expect(r.stderr, e.hook_event_name).toBe('');
  }
  const runs = await stack.warden.list({ query: `WorkflowId = 'agent-${agentId}'` });
  expect(runs.map((r) => r.status)).toEqual(['FAILED']);
});

test("an agent that targets warden's controls of itself is denied and flagged REWARD_HACKING; another agent's id is allowed", async () => {
  const agentId = 'ctl-self';
  await stack.warden.start({ agentId, task: 'Fix the parser.', supervisor: { evalInterval: 1 } });

  const other = await hook('claude', agentId, preToolUse('warden dismiss ctl-other', 'toolu_o'));
  expect(other.exitCode, other.stderr).toBe(0);
  expect(other.stdout).toBe('');
  const reading = await hook('claude', agentId, preToolUse(`warden status ${agentId}`, 'toolu_r'));
  expect(reading.stdout).toBe('');

  const dismiss = await hook('claude', agentId, preToolUse(`warden dismiss ${agentId} --note "false alarm"`, 'toolu_d'));
  expect(dismiss.exitCode, dismiss.stderr).toBe(0);
  expect(decision(dismiss.stdout)?.permissionDecision, dismiss.stdout + dismiss.stderr).toBe('deny');
  expect(decision(dismiss.stdout)?.permissionDecisionReason).toMatch(/warden's controls of agent ctl-self itself/);

  const s = await waitForStatus(stack.warden, agentId, (x) => x.lastVerdict?.pattern === 'REWARD_HACKING', 'a REWARD_HACKING verdict');
  expect(s.lastVerdict!.message).toMatch(/its own supervision/);

  const signal = await hook('codex', agentId, {
    ...preToolUse(`TEMPORAL_ADDRESS=127.0.0.1:7233 temporal workflow signal --workflow-id agent-${agentId} --name resume`, 'call_s'),
    turn_id: 't1',
  });
  expect(signal.exitCode, signal.stderr).toBe(0);
  expect(decision(signal.stdout)?.permissionDecision, signal.stdout + signal.stderr).toBe('deny');
  const after = await waitForStatus(stack.warden, agentId, (x) => x.turns >= 2, 'both attempts recorded');
  expect(after.lastVerdict?.pattern).toBe('REWARD_HACKING');
  await stack.warden.signal(agentId, 'abort', {});
});
