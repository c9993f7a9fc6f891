/**
 * Claude Code's StopFailure and PermissionDenied hooks with the real Claude Code binary
 * (`claude -p`), offline against a scripted Anthropic Messages API, its project hooks wired to the
 * built `warden hook claude`, and a real dev server + worker:
 *
 *  - the API answers 429: Claude Code ends its turn and runs StopFailure (`error: "rate_limit"`) as
 *    it exits — and kills a hook still running a few ms later, so the hook runs in the background
 *    (detachedCommand, as `warden install` writes it; the last test shows the plain command lost):
 *    the agent is `blocked` with the reason; the next session's prompt makes it `running` again;
 *  - the API answers 401: StopFailure with `error: "authentication_failed"`: the agent awaits its
 *    human with the reason;
 *  - auto mode offline (its classifier runs on Anthropic's side, which a scripted server does not
 *    pass through, so Claude Code refuses every action that needs it): each tool call is denied and
 *    PermissionDenied runs (`reason: "Classifier unavailable"`): each denial is reported as a failed
 *    call with `denied: true`, and the same call denied three times is a SPIRALING verdict.
 *
 * (2.1.330 runs PermissionDenied only for auto mode's denials: a `permissions.deny` rule or
 * `--permission-mode dontAsk` denies the call without it.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { apiError, text, toolUse, type AnthropicScript } from '../fixtures/anthropic-server.js';
import { reportedTurns, waitForStatus } from '../helpers/agents.js';
import { useHookedClaude } from '../helpers/claude.js';
import { wardenHookCommand } from '../helpers/hooks.js';
import { useStack } from '../helpers/stack.js';

const stack = useStack();
const claude = useHookedClaude('warden-claude-api-error-', stack);

/** A throwaway project whose hooks (the events warden installs, these two among them) run `warden hook claude --agent`. */
const project = (name: string, agentId: string) =>
  claude.project(name, agentId, {
    events: ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied', 'Stop', 'StopFailure'],
    // As warden install writes it: in the background, or `claude -p` kills it as it exits.
    detached: ['StopFailure'],
    extra: ['--strict'],
  });

const quiet = { evalInterval: 1000, idleAfterMs: 0 };

test('a 429: StopFailure makes the agent blocked with the reason; the next prompt makes it running', async () => {
  const agentId = 'cc-rate-limit';
  await stack.warden.start({ agentId, task: 'Say hello.', supervisor: quiet });
  await claude.model({ script: [apiError(429, 'slow down')] });
  const p = project('rate-limit', agentId);
  const r = await claude.run(p, 'Say hello.');
  expect(r.exitCode, r.output).toBe(1); // its turn failed
  const s = await waitForStatus(stack.warden, agentId, (x) => x.state === 'blocked', 'blocked by the rate limit');
  expect(s.stateReason).toMatch(/^its turn ended on an API error: model rate-limited \(rate_limit\): API Error: .*429/);
  expect(s).toMatchObject({ blockedByCli: true, waitingForHuman: false, paused: false });

  // The limit passed: the next session's prompt (UserPromptSubmit) makes it run again.
  await claude.model({ script: [text('hello')] });
  const again = await claude.run(p, 'Say hello again.');
  expect(again.exitCode, again.output).toBe(0);
  const after = await waitForStatus(stack.warden, agentId, (x) => x.state === 'running', 'running again');
  expect(after.blockedByCli).toBeUndefined();
  await stack.warden.signal(agentId, 'abort', {});
});

test('a 401: StopFailure makes the agent await its human, with the reason', async () => {
  const agentId = 'cc-auth';
  await stack.warden.start({ agentId, task: 'Say hello.', supervisor: quiet });
  await claude.model({ script: [apiError(401, 'invalid x-api-key')] });
  const p = project('auth', agentId);
  const r = await claude.run(p, 'Say hello.');
  expect(r.exitCode, r.output).toBe(1);
  const s = await waitForStatus(stack.warden, agentId, (x) => x.state === 'awaiting-input', 'awaiting its human');
  expect(s).toMatchObject({ waitingForHuman: true, paused: false });
  expect(s.stateReason).toMatch(/^its turn ended on an API error: authentication failed \(authentication_failed\)/);
  await stack.warden.signal(agentId, 'abort', {});
});

test('auto mode offline: every denial is a reported denied call, and the same call denied three times is SPIRALING', async () => {
  const agentId = 'cc-denied';
  await stack.warden.start({ agentId, task: 'Clean the build directory.', supervisor: { evalInterval: 3, idleAfterMs: 0 } });
  // Outside the project, so auto mode asks its classifier (a command inside it may run unasked); nothing there to remove.
  const rm = { command: 'rm -rf /tmp/warden-denied-probe', description: 'Remove the probe' };
  const script: AnthropicScript = [
    toolUse('Bash', rm, { id: 'toolu_deny_1' }),
    toolUse('Bash', rm, { id: 'toolu_deny_2' }),
    toolUse('Bash', rm, { id: 'toolu_deny_3' }),
    text('I could not remove it.'),
  ];
  await claude.model({ script });
  const p = project('denied', agentId);
  const r = await claude.run(p, 'Clean the build directory.', ['--permission-mode', 'auto']);
  expect(r.exitCode, r.output).not.toBeUndefined();

  const turns = (await reportedTurns(stack.warden, agentId)).filter((t) => t.toolCalls?.some((c) => c.denied));
  expect(
    turns.map((t) => t.id),
    r.output,
  ).toEqual(expect.arrayContaining([expect.stringMatching(/toolu_deny_1$/), expect.stringMatching(/toolu_deny_3$/)]));
  expect(turns, r.output).toHaveLength(3);
  expect(turns[0]!.toolCalls![0]).toMatchObject({
    name: 'Bash',
    args: 'rm -rf /tmp/warden-denied-probe',
    ok: false,
    denied: true,
    result: 'denied: Classifier unavailable',
  });
  const s = await waitForStatus(stack.warden, agentId, (x) => x.lastVerdict?.pattern === 'SPIRALING', 'a SPIRALING verdict');
  expect(s.lastVerdict?.message).toMatch(/same tool call was denied 3 times \(Bash rm -rf \/tmp\/warden-denied-probe\)/);
  await stack.warden.signal(agentId, 'abort', {});
});

test('without the background wrapper, `claude -p` kills the StopFailure hook as it exits: nothing reaches warden', async () => {
  const agentId = 'cc-killed-hook';
  await stack.warden.start({ agentId, task: 'Say hello.', supervisor: quiet });
  await claude.model({ script: [apiError(429, 'slow down')] });
  const p = project('killed', agentId);
  const settingsPath = p.settingsPath;
  const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
  settings.hooks.StopFailure = [{ hooks: [{ type: 'command', command: wardenHookCommand('claude', agentId, stack.server, ['--strict']), timeout: 30 }] }];
  writeFileSync(settingsPath, JSON.stringify(settings, null, 2));
  const r = await claude.run(p, 'Say hello.');
  expect(r.exitCode, r.output).toBe(1);
  await new Promise((done) => setTimeout(done, 5000)); // what the background hook takes, and more
  const s = await stack.warden.status(agentId);
  expect(s.state, JSON.stringify(s.transitions)).toBe('spawning');
  await stack.warden.signal(agentId, 'abort', {});
});
