/**
 * Waiting for a human, through the real `warden hook claude` command, a dev server, workers in
 * their own processes and a real HTTP webhook listener:
 *
 *  - a `Notification` (permission_prompt) makes the agent awaiting-input with the pending tool call
 *    (read from a Claude Code transcript on disk) as its reason; the webhook fires once, though the
 *    hook event repeats; the next PreToolUse makes it running again;
 *  - with the idle watchdog set short, the wait is never counted as idle (no evaluation, so no
 *    STALLING verdict) — and once the agent runs again, that same watchdog does evaluate;
 *  - a worker SIGKILLed while the agent waits: a new worker finds it waiting, with its reason.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { waitForStatus } from '../helpers/agents.js';
import { runClaudeHook } from '../helpers/claude.js';
import { cleanup, useWorkerProcesses } from '../helpers/stack.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

const stack = useWorkerProcesses();
let dir: string;
let hooks: WebhookListener;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'warden-human-wait-'));
  hooks = await startWebhookListener();
});
afterAll(async () => {
  await hooks?.close();
  cleanup(dir);
});

const hook = (agentId: string, payload: object) => runClaudeHook(stack.server, agentId, payload);

/** A Claude Code transcript whose last assistant entry asks to run `rm -rf build/`. */
function transcript(): string {
  const path = join(dir, 'session.jsonl');
  const entries = [
    { type: 'user', message: { role: 'user', content: 'Clean the build.' }, uuid: 'u1', sessionId: 'sess-hw' },
    { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'Removing the build directory.' }] }, uuid: 'a1' },
    {
      type: 'assistant',
      message: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_9', name: 'Bash', input: { command: 'rm -rf build/', description: 'Remove build' } }],
      },
      uuid: 'a2',
    },
  ];
  writeFileSync(path, `${entries.map((e) => JSON.stringify(e)).join('\n')}\n`);
  return path;
}

const REASON = 'waiting for permission: Bash rm -rf build/';
/**
 * The idle watchdog's period here: long enough that the gap between the tool call's hook and the
 * notification's (two hook processes started one after the other, slow on a loaded machine) never
 * reaches it, short enough to wait out twice.
 */
const IDLE_MS = 4000;
const alerts = () => hooks.accepted().filter((d) => (d.json as { event?: string } | null)?.event === 'awaiting-input');

test('a permission prompt: awaiting-input with the tool call, one webhook, never idle, cleared by the next tool call; a SIGKILLed worker loses nothing', async () => {
  let worker = stack.spawnWorker();
  const agentId = 'hw-claude';
  await stack.warden.start({ agentId, task: 'Clean the build.', supervisor: { idleAfterMs: IDLE_MS }, notify: { webhooks: [{ url: hooks.url }] } });
  const tool = await hook(agentId, {
    hook_event_name: 'PostToolUse',
    session_id: 'sess-hw',
    tool_name: 'Bash',
    tool_input: { command: 'ls build/' },
    tool_response: { stdout: 'a.js' },
    tool_use_id: 'toolu_8',
  });
  expect(tool.exitCode, tool.stderr).toBe(0);

  const notification = {
    hook_event_name: 'Notification',
    session_id: 'sess-hw',
    transcript_path: transcript(),
    notification_type: 'permission_prompt',
    message: 'Claude needs your permission to use Bash',
  };
  const first = await hook(agentId, notification);
  expect(first.exitCode, first.stderr).toBe(0);
  expect(first.stdout).toBe('');
  let s = await waitForStatus(stack.warden, agentId, (x) => x.state === 'awaiting-input', 'awaiting-input');
  expect(s).toMatchObject({ stateReason: REASON, waitingForHuman: true, paused: false });

  // Told again (Claude repeats its notification): still one alert.
  expect((await hook(agentId, notification)).exitCode).toBe(0);
  expect((await hook(agentId, { ...notification, notification_type: 'idle_prompt', message: 'Claude is waiting for your input' })).exitCode).toBe(0);
  await waitForStatus(stack.warden, agentId, () => alerts().length >= 1, 'the webhook');
  expect(alerts()[0]!.json).toMatchObject({ event: 'awaiting-input', agentId, reason: REASON });

  // The idle watchdog has long passed: the wait is not idleness. (Over twice its period.)
  await new Promise((r) => setTimeout(r, IDLE_MS * 2.5));
  s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ state: 'awaiting-input', stateReason: REASON, escalationStep: 0 });
  expect(s.evaluations.total).toBe(0);
  expect(s.lastVerdict).toBeNull();
  expect(alerts()).toHaveLength(1);

  // A worker SIGKILLed while the agent waits: the next one finds it as it was.
  await stack.kill(worker);
  worker = stack.spawnWorker();
  s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ state: 'awaiting-input', stateReason: REASON, waitingForHuman: true });

  // Its human allowed it, and Claude goes on: the next tool call ends the wait (and is not denied).
  const next = await hook(agentId, {
    hook_event_name: 'PreToolUse',
    session_id: 'sess-hw',
    tool_name: 'Bash',
    tool_input: { command: 'npm run build' },
    tool_use_id: 'toolu_10',
  });
  expect(next.exitCode, next.stderr).toBe(0);
  expect(next.stdout).toBe('');
  s = await waitForStatus(stack.warden, agentId, (x) => x.state === 'running', 'running again');
  expect(s.waitingForHuman).toBe(false);
  expect(alerts()).toHaveLength(1);

  // The watchdog is live: silence while running is evaluated (this is what the wait was spared;
  // the heuristic finds the last turn, a tool call, fine, so the verdict itself may be OK).
  s = await waitForStatus(stack.warden, agentId, (x) => x.evaluations.total >= 1, 'an idle evaluation once running');
  expect(s.lastVerdict).not.toBeNull();
  await stack.warden.signal(agentId, 'abort', {});
  await waitForStatus(stack.warden, agentId, (x) => x.state === 'failed', 'aborted');
  await stack.kill(worker);
});
