/**
 * An ended session, through the real `warden hook claude` command, a dev server and a worker:
 *
 *  - SessionEnd with the default grace period (ten minutes): nothing more is heard, so the agent
 *    ends `done` with the reason (a durable workflow timer, not the hook, ends it);
 *  - SessionEnd, then the session resumes (SessionStart `resume`, as `claude --resume` sends) before
 *    the grace period ends: the deadline is gone and, well past it, the agent is still running.
 *
 * On a time-skipping server (test/helpers/time-skipping.ts): the ten minutes are skipped, not waited.
 */
import { expect, test } from 'vitest';
import { waitForStatus } from '../helpers/agents.js';
import { runClaudeHook } from '../helpers/claude.js';
import { useTimeSkippingStack } from '../helpers/time-skipping.js';

const stack = useTimeSkippingStack();

const hook = (agentId: string, payload: object) => runClaudeHook(stack.server, agentId, payload);

const toolCall = (id: string) => ({
  hook_event_name: 'PostToolUse',
  session_id: 'sess-end',
  tool_name: 'Bash',
  tool_input: { command: 'ls' },
  tool_response: { stdout: 'a.js' },
  tool_use_id: id,
});

test('a session that ends ends its agent done after the grace period; a resumed one keeps running', async () => {
  const gone = 'se-gone';
  const back = 'se-back';
  // The default grace period; no idle watchdog (its default is also ten minutes, and an idle
  // evaluation is not what this test is about).
  await stack.warden.start({ agentId: gone, task: 'List the files.', supervisor: { idleAfterMs: 0 } });
  await stack.warden.start({ agentId: back, task: 'List the files.', supervisor: { idleAfterMs: 0 } });
  for (const id of [gone, back]) {
    const r = await hook(id, toolCall(`toolu_${id}`));
    expect(r.exitCode, r.stderr).toBe(0);
    await waitForStatus(stack.warden, id, (x) => x.state === 'running', 'running');
  }

  // Both sessions end.
  for (const id of [gone, back]) {
    const r = await hook(id, { hook_event_name: 'SessionEnd', session_id: 'sess-end', reason: 'prompt_input_exit' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
  }
  const ending = await waitForStatus(stack.warden, back, (x) => x.sessionEndsAt !== undefined || x.state !== 'running', 'a session deadline');
  expect(ending.sessionEndsAt, 'the ended session has a deadline').toBeDefined();
  const deadline = Date.parse(ending.sessionEndsAt!);

  expect(deadline - Date.parse((await stack.warden.status(gone)).sessionEndsAt!), 'both deadlines ten minutes out').toBeLessThan(60_000);

  // One resumes (until the skip below, the server's clock runs at wall speed).
  const resumed = await hook(back, { hook_event_name: 'SessionStart', session_id: 'sess-end', source: 'resume' });
  expect(resumed.exitCode, resumed.stderr).toBe(0);

  // Ten minutes of server time, skipped; then well past the resumed agent's old deadline.
  const now = await stack.env.currentTimeMs();
  expect(deadline - now, 'the deadline is still ahead before the skip').toBeGreaterThan(9 * 60_000);
  await stack.env.sleep(deadline + 3000 - now);
  const done = await waitForStatus(stack.warden, gone, (x) => x.state === 'done', 'done', 60_000);
  expect(done.stateReason).toMatch(/its session ended \(prompt_input_exit\) and did not resume within 600 s/);

  // The resumed agent runs on, with no deadline.
  const s = await stack.warden.status(back);
  expect(s.state).toBe('running');
  expect(s.sessionEndsAt).toBeUndefined();
  // And it is still supervised: the next tool call is a turn as before.
  const after = await hook(back, toolCall('toolu_after'));
  expect(after.exitCode, after.stderr).toBe(0);
}, 180_000);
