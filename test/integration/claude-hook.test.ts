/**
 * `warden hook claude` with the real Claude Code binary (the project's dependency) running by
 * itself, non-interactively (`claude -p … --output-format json`), against a scripted Anthropic
 * Messages API on 127.0.0.1, with its project hooks (.claude/settings.json) wired to the built
 * `warden` CLI and a real dev server + worker:
 *
 *  - a tool call is reported as a turn (read back from the workflow's own history), and whispers
 *    reach Claude's next model request: one queued before the session (UserPromptSubmit), one
 *    queued while the model was thinking (PostToolUse);
 *  - a paused agent's tool call is denied before it runs, with the pause reason;
 *  - a whisper that arrives as Claude finishes blocks the stop once, and Claude goes on with it;
 *    a stop already continued by a hook is never blocked again;
 *  - a stop signal ends Claude's turn after the tool call that learns of it;
 *  - verified done: for an agent with `verify`, a false claim at Stop is blocked with the [VERIFY]
 *    reason, Claude fixes it, and its next stop ends the agent done;
 *  - `lastResort: compact`: the handoff reaches Claude as context in the same session (a hook
 *    cannot give it a fresh one), and its next reported turn ends the compaction;
 *  - with Temporal unreachable or the agent unknown the hook says nothing and exits 0 (unless --strict).
 */
import { execa } from 'execa';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { messageTexts, text, toolResults, toolUse, type AnthropicScript, type AnthropicServer } from '../fixtures/anthropic-server.js';
import { ROOT, useStack } from '../helpers/stack.js';
import { waitForStatus, reportedTurns } from '../helpers/agents.js';
import { useHookedClaude, type HookedProject } from '../helpers/claude.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');

const claude = useHookedClaude('warden-claude-hook-', stack);
let model: AnthropicServer;

/** A throwaway project (with its hook settings) and home for one Claude run. */
const project = (name: string, agentId: string) =>
  claude.project(name, agentId, { events: ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop'] });
/** Claude Code with Bash allowed, against the current model server. */
const runClaude = (p: HookedProject, prompt: string) => claude.run(p, prompt, ['--allowedTools', 'Bash']);

const statusWhere = (agentId: string, pred: (s: AgentStatus) => boolean, what: string, timeoutMs?: number) =>
  waitForStatus(stack.warden, agentId, pred, what, timeoutMs);

const allText = (body: unknown) => messageTexts(body).join('\n');
const quiet = { evalInterval: 1000, idleAfterMs: 0 }; // no evaluations: every whisper here is a test's own

async function steerAndWait(agentId: string, text: string, pending: number): Promise<void> {
  await stack.warden.signal(agentId, 'steer', { text });
  await statusWhere(agentId, (s) => s.pendingWhispers === pending, `${pending} pending whisper(s) on ${agentId}`);
}

test('a tool call becomes a turn; whispers reach the next model request (UserPromptSubmit and PostToolUse)', async () => {
  const agentId = 'cc-steer';
  await stack.warden.start({ agentId, task: 'Write the marker file.', supervisor: quiet });
  await steerAndWait(agentId, 'UNIQUE-EARLY-STEER: mind the marker', 1);

  const script: AnthropicScript = async (_req, i) => {
    if (i === 0) {
      // While the model "thinks", a human steers: that whisper must wait for the tool call's hook.
      await steerAndWait(agentId, 'UNIQUE-STEER-TEXT: use printf next time', 1);
      return toolUse('Bash', { command: 'echo hi > marker.txt', description: 'Write the marker' }, { id: 'toolu_warden_steer_1' });
    }
    return text('done');
  };
  model = await claude.model({ script });
  const p = project('steer', agentId);
  const r = await runClaude(p, 'Write the marker file.');

  expect(r.exitCode, r.output).toBe(0);
  expect(r.json?.result, r.output).toBe('done');
  expect(p.hookLog(), 'the hook warned').toBe('');
  expect(readFileSync(join(p.work, 'marker.txt'), 'utf8')).toBe('hi\n'); // not paused: the tool ran

  const reqs = model.agentRequests();
  expect(reqs).toHaveLength(2);
  // The early whisper arrived with the prompt; the later one only after the tool call's hook ran.
  expect(allText(reqs[0]!.body)).toContain('[steering] UNIQUE-EARLY-STEER: mind the marker');
  expect(allText(reqs[0]!.body)).not.toContain('UNIQUE-STEER-TEXT');
  expect(allText(reqs[1]!.body)).toContain('[steering] UNIQUE-STEER-TEXT: use printf next time');
  expect(toolResults(reqs[1]!.body)).toEqual([expect.objectContaining({ toolUseId: 'toolu_warden_steer_1', isError: false })]);

  const s = await stack.warden.status(agentId);
  expect(s.turns).toBe(3); // the prompt that carried a whisper, the tool call, the final answer
  expect(s.whispersDelivered).toBe(2);
  expect(s.pendingWhispers).toBe(0);
  expect(s.state).toBe('running');

  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns.map((t) => t.toolCalls?.map((c) => c.name) ?? [])).toEqual([[], ['Bash'], []]);
  const [prompt, tool, stop] = turns;
  expect(prompt!.text).toBe('User prompt: Write the marker file.');
  expect(tool!.id).toBe(`claude-${r.json?.session_id}-tool-toolu_warden_steer_1`);
  expect(tool!.toolCalls![0]).toMatchObject({ name: 'Bash', args: 'echo hi > marker.txt', ok: true });
  expect(stop!.text).toBe('done');

  // The same tool call reported again is the same turn (the id is stable): nothing is counted
  // twice, and the reply repeats the whisper delivered the first time.
  const again = await stack.warden.reportTurn(agentId, { id: tool!.id, text: '' });
  expect(again.whispers.map((w) => w.text)).toEqual(['UNIQUE-STEER-TEXT: use printf next time']);
  expect((await stack.warden.status(agentId)).turns).toBe(3);
  await stack.warden.signal(agentId, 'abort', {});
});

test('a failing tool call is reported with ok: false (PostToolUseFailure)', async () => {
  const agentId = 'cc-fail';
  await stack.warden.start({ agentId, task: 'Run the build.', supervisor: quiet });
  model = await claude.model({
    script: [toolUse('Bash', { command: 'echo broken >&2; exit 3', description: 'Build' }, { id: 'toolu_warden_fail_1' }), text('it failed')],
  });
  const p = project('fail', agentId);
  const r = await runClaude(p, 'Run the build.');
  expect(r.exitCode, r.output).toBe(0);
  expect(p.hookLog()).toBe('');
  const tool = (await reportedTurns(stack.warden, agentId)).find((t) => t.toolCalls?.length);
  expect(tool?.toolCalls?.[0], r.output).toMatchObject({ name: 'Bash', args: 'echo broken >&2; exit 3', ok: false });
  expect(String(tool?.toolCalls?.[0]?.result)).toMatch(/exit code 3/i);
  await stack.warden.signal(agentId, 'abort', {});
});

test('a paused agent: its tool call is denied with the pause reason and never runs', async () => {
  const agentId = 'cc-paused';
  await stack.warden.start({ agentId, task: 'Write the marker file.', supervisor: quiet });
  await stack.warden.signal(agentId, 'pause', { reason: 'UNIQUE-PAUSE-REASON: reviewing the diff' });
  await statusWhere(agentId, (s) => s.paused, 'paused');

  model = await claude.model({
    script: [toolUse('Bash', { command: 'echo ran > marker.txt', description: 'Write the marker' }, { id: 'toolu_warden_paused_1' }), text('I will wait.')],
  });
  const p = project('paused', agentId);
  const r = await runClaude(p, 'Write the marker file.');

  expect(r.exitCode, r.output).toBe(0);
  expect(p.hookLog()).toBe('');
  expect(existsSync(join(p.work, 'marker.txt')), 'the denied command ran').toBe(false);
  const reqs = model.agentRequests();
  expect(reqs).toHaveLength(2);
  const [result] = toolResults(reqs[1]!.body);
  expect(result).toMatchObject({ toolUseId: 'toolu_warden_paused_1', isError: true });
  expect(result!.text).toContain('UNIQUE-PAUSE-REASON: reviewing the diff');
  expect(result!.text).toContain(`warden resume ${agentId}`);
  // Nothing ran, so no tool call was reported; the final answer was (reports go through while paused).
  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns.flatMap((t) => t.toolCalls ?? [])).toEqual([]);
  expect(turns.map((t) => t.text)).toEqual(['I will wait.']);
  expect((await stack.warden.status(agentId)).state).toBe('paused-by-user');
  await stack.warden.signal(agentId, 'abort', {});
});

test("a tool outside the agent's allowlist is refused with the reason and never runs", async () => {
  const agentId = 'cc-allowlist';
  // The contract a parent gives a child: only Read. (Started directly here, so Claude runs it by itself.)
  await stack.warden.start({ agentId, task: 'Write the marker file.', supervisor: quiet, contract: { toolAllowlist: ['Read'] } });
  model = await claude.model({
    script: [toolUse('Bash', { command: 'echo ran > marker.txt', description: 'Write the marker' }, { id: 'toolu_warden_allow_1' }), text('Understood.')],
  });
  const p = project('allowlist', agentId);
  const r = await runClaude(p, 'Write the marker file.');
  expect(r.exitCode, r.output).toBe(0);
  expect(existsSync(join(p.work, 'marker.txt')), 'the refused command ran').toBe(false);
  const reqs = model.agentRequests();
  expect(reqs).toHaveLength(2);
  const [result] = toolResults(reqs[1]!.body);
  expect(result).toMatchObject({ toolUseId: 'toolu_warden_allow_1', isError: true });
  expect(result!.text).toContain(`warden: tool Bash is outside agent ${agentId}'s allowlist (Read)`);
  await stack.warden.signal(agentId, 'abort', {});
});

test('a whisper at the finish blocks the stop once; Claude goes on with it; never a second block', async () => {
  const agentId = 'cc-stop';
  await stack.warden.start({ agentId, task: 'Answer the question.', supervisor: quiet });
  const script: AnthropicScript = async (_req, i) => {
    if (i === 0) {
      await steerAndWait(agentId, 'UNIQUE-STOP-STEER: also mention the tests', 1);
      return text('first answer');
    }
    // Another whisper as Claude finishes its continuation: this stop must not be blocked again.
    await steerAndWait(agentId, 'UNIQUE-LATE-STEER: for the next turn', 1);
    return text('second answer, with the tests');
  };
  model = await claude.model({ script });
  const p = project('stop', agentId);
  const r = await runClaude(p, 'Answer the question.');

  expect(r.exitCode, r.output).toBe(0);
  expect(r.json?.result, r.output).toBe('second answer, with the tests');
  const reqs = model.agentRequests();
  expect(reqs, r.output).toHaveLength(2);
  expect(allText(reqs[0]!.body)).not.toContain('UNIQUE-STOP-STEER');
  expect(allText(reqs[1]!.body)).toContain('[steering] UNIQUE-STOP-STEER: also mention the tests');
  expect(allText(reqs[1]!.body)).toContain('first answer');

  const s = await stack.warden.status(agentId);
  expect(s.whispersDelivered).toBe(1);
  expect(s.pendingWhispers).toBe(1); // the late whisper stays queued for the next prompt or tool call
  expect((await reportedTurns(stack.warden, agentId)).map((t) => t.text)).toEqual(['first answer']);
  expect(p.hookLog()).toMatch(/1 whisper\(s\) stay queued for agent cc-stop/);
  await stack.warden.signal(agentId, 'abort', {});
});

test('verified done: a false claim at Stop is blocked with the [VERIFY] reason; Claude fixes it and its next stop ends the agent done', async () => {
  const agentId = 'cc-verify';
  const p = project('verify', agentId);
  const command = "sh -c 'test -f ok.txt'";
  await stack.warden.start({ agentId, task: 'Create ok.txt.', supervisor: quiet, verify: { command, cwd: p.work } });
  const script: AnthropicScript = async (_req, i) => {
    if (i === 0) return text('UNIQUE-FALSE-CLAIM: ok.txt is there, done.');
    if (i === 1) return toolUse('Bash', { command: 'touch ok.txt', description: 'Create ok.txt' }, { id: 'toolu_warden_verify_1' });
    return text('UNIQUE-TRUE-CLAIM: created ok.txt.');
  };
  model = await claude.model({ script });
  const r = await runClaude(p, 'Create ok.txt.');

  expect(r.exitCode, r.output).toBe(0);
  expect(r.json?.result, r.output).toBe('UNIQUE-TRUE-CLAIM: created ok.txt.');
  const reqs = model.agentRequests();
  expect(reqs, r.output).toHaveLength(3);
  // The blocked stop's reason reached the model: the check's command and its failure.
  expect(allText(reqs[1]!.body)).toContain('[VERIFY]');
  expect(allText(reqs[1]!.body)).toContain('test -f ok.txt');
  expect(allText(reqs[0]!.body)).not.toContain('[VERIFY]');
  const s = await statusWhere(agentId, (st) => st.state === 'done', 'done');
  expect(s.lastVerification).toMatchObject({ command, passed: true, exitCode: 0 });
  expect(s.escalationStep).toBe(1); // the false claim counted once
});

test('a stop signal ends Claude after the tool call that learns of it, and drains the agent', async () => {
  const agentId = 'cc-halt';
  await stack.warden.start({ agentId, task: 'Write two markers.', supervisor: quiet });
  const script: AnthropicScript = async (_req, i) => {
    if (i === 0) {
      await stack.warden.signal(agentId, 'stop', { reason: 'enough', drainTimeoutMs: 600_000 });
      await statusWhere(agentId, (s) => s.state === 'cancelling', 'cancelling');
      return toolUse('Bash', { command: 'echo one > one.txt', description: 'First marker' });
    }
    if (i === 1) return toolUse('Bash', { command: 'echo two > two.txt', description: 'Second marker' });
    return text('unexpected');
  };
  model = await claude.model({ script });
  const p = project('halt', agentId);
  const r = await runClaude(p, 'Write two markers.');

  expect(p.hookLog()).toBe('');
  expect(existsSync(join(p.work, 'one.txt')), r.output).toBe(true);
  expect(existsSync(join(p.work, 'two.txt')), 'Claude went on after the stop').toBe(false);
  expect(model.agentRequests(), r.output).toHaveLength(1);
  // The tool call was the final turn: the agent drained well before its 10-minute drain timeout.
  await statusWhere(agentId, (s) => s.state === 'done', 'done');
});

test('never in the way: Temporal unreachable or the agent unknown -> exit 0, no output, one line on stderr (--strict fails)', async () => {
  const input = JSON.stringify({
    hook_event_name: 'PostToolUse',
    session_id: 's-1',
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
    tool_response: { stdout: '', stderr: '', interrupted: false },
    tool_use_id: 'toolu_x',
  });
  const hook = (args: string[]) => execa(process.execPath, [WARDEN, 'hook', 'claude', ...args], { input, reject: false, timeout: 30_000 });

  const dead = await hook(['--agent', 'ghost', '--address', '127.0.0.1:1', '--timeout', '1500']);
  expect(dead.exitCode).toBe(0);
  expect(dead.stdout).toBe('');
  expect(dead.stderr).toMatch(/^warden hook: cannot reach Temporal at 127\.0\.0\.1:1 .* continuing without supervision\n?$/);
  expect(dead.stderr.trim().split('\n')).toHaveLength(1);

  const live = ['--address', stack.server.address, '--namespace', stack.server.namespace];
  const unknown = await hook(['--agent', 'no-such-agent', ...live]);
  expect(unknown.exitCode).toBe(0);
  expect(unknown.stdout).toBe('');
  expect(unknown.stderr).toMatch(/no such agent: no-such-agent/);

  const strict = await hook(['--agent', 'no-such-agent', ...live, '--strict']);
  expect(strict.exitCode).toBe(3);
  expect(strict.stderr).toMatch(/no such agent: no-such-agent/);

  // The agent id may come from the environment.
  await stack.warden.start({ agentId: 'cc-env', task: 'x', supervisor: quiet });
  const viaEnv = await execa(process.execPath, [WARDEN, 'hook', 'claude', ...live], {
    input,
    reject: false,
    env: { WARDEN_AGENT_ID: 'cc-env' },
  });
  expect(viaEnv.exitCode).toBe(0);
  expect(viaEnv.stderr).toBe('');
  expect((await stack.warden.status('cc-env')).turns).toBe(1);

  // A Stop event without last_assistant_message: the final text comes from the transcript's tail.
  const transcript = join(claude.scratch(), 'transcript.jsonl');
  writeFileSync(
    transcript,
    [
      { type: 'user', uuid: 'u1', message: { role: 'user', content: 'Fix it.' } },
      { type: 'assistant', uuid: 'a1', message: { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }] } },
      { type: 'assistant', uuid: 'a2', message: { role: 'assistant', content: [{ type: 'text', text: 'UNIQUE-FINAL-TEXT from the transcript' }] } },
      { type: 'assistant', uuid: 'a3', message: { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Bash', input: {} }] } },
      { type: 'system', uuid: 's1' },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n') + '\n',
  );
  const stop = JSON.stringify({ hook_event_name: 'Stop', session_id: 's-1', transcript_path: transcript, stop_hook_active: false });
  const stopped = await execa(process.execPath, [WARDEN, 'hook', 'claude', '--agent', 'cc-env', ...live], { input: stop, reject: false });
  expect(stopped.exitCode).toBe(0);
  expect(stopped.stderr).toBe('');
  expect(stopped.stdout).toBe(''); // no whisper pending: the stop goes ahead
  const turns = await reportedTurns(stack.warden, 'cc-env');
  expect(turns.at(-1)).toMatchObject({ id: 'claude-s-1-stop-a2', text: 'UNIQUE-FINAL-TEXT from the transcript' });
  await stack.warden.signal('cc-env', 'abort', {});
});

test('bounded: a FIFO, /dev/zero or a huge file as transcript_path, a stdin that never ends: the hook keeps its --timeout and exits 0', async () => {
  const agentId = 'cc-bounded';
  await stack.warden.start({ agentId, task: 'x', supervisor: quiet });
  const live = ['--agent', agentId, '--address', stack.server.address, '--namespace', stack.server.namespace];
  const TIMEOUT = 2_000;
  // The margin only stops a hook that hangs (the old behaviour): execa kills it and the test fails.
  const run = (input: string) =>
    execa(process.execPath, [WARDEN, 'hook', 'claude', ...live, '--timeout', String(TIMEOUT)], { input, reject: false, timeout: TIMEOUT + 20_000 });
  const stop = (transcript: string, n: number) =>
    JSON.stringify({ hook_event_name: 'Stop', session_id: `s-bounded-${n}`, transcript_path: transcript, stop_hook_active: false });

  // A FIFO nobody writes to: opening it for reading would wait for a writer forever.
  const fifo = join(claude.scratch(), 'transcript.fifo');
  await execa('mkfifo', [fifo]);
  const viaFifo = await run(stop(fifo, 1));
  expect(viaFifo.timedOut, viaFifo.stderr).toBe(false);
  expect(viaFifo.exitCode, viaFifo.stderr).toBe(0);
  // The transcript is not read (its text, its tokens); the stop is reported all the same.
  expect(viaFifo.stderr).toBe(`warden hook: agent ${agentId}: this turn's tokens are not counted: transcript_path does not name a .jsonl transcript`);
  expect(viaFifo.stdout).toBe('');

  // A device that never ends.
  const viaZero = await run(stop('/dev/zero', 2));
  expect(viaZero.timedOut, viaZero.stderr).toBe(false);
  expect(viaZero.exitCode, viaZero.stderr).toBe(0);
  expect(viaZero.stderr).toBe(`warden hook: agent ${agentId}: this turn's tokens are not counted: transcript_path does not name a .jsonl transcript`);

  // A huge (sparse) file: only its tail is read, and the final text is found there.
  const huge = join(claude.scratch(), 'huge.jsonl');
  const line = JSON.stringify({
    type: 'assistant',
    uuid: 'big1',
    message: { role: 'assistant', content: [{ type: 'text', text: 'TAIL-OF-A-HUGE-TRANSCRIPT' }] },
  });
  await execa('truncate', ['-s', '8G', huge]);
  await execa('sh', ['-c', `printf '\\n%s\\n' "$1" >> "$2"`, 'sh', line, huge]);
  const viaHuge = await run(stop(huge, 3));
  expect(viaHuge.timedOut, viaHuge.stderr).toBe(false);
  expect(viaHuge.exitCode, viaHuge.stderr).toBe(0);
  // Its tokens are read from the start, a bounded share per turn: the rest at the next.
  expect(viaHuge.stderr).toBe(`warden hook: agent ${agentId}: its transcript grew by more than one read since the last turn; the rest counts at the next`);
  rmSync(huge, { force: true });

  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns.map((t) => t.text)).toEqual(['', '', 'TAIL-OF-A-HUGE-TRANSCRIPT']);

  // A stdin that is never closed: the deadline covers reading it too.
  const slow = execa(process.execPath, [WARDEN, 'hook', 'claude', ...live, '--timeout', String(TIMEOUT)], {
    reject: false,
    timeout: TIMEOUT + 20_000,
    stdin: 'pipe',
  });
  slow.stdin!.write('{"hook_event_name": "Stop", ');
  const viaSlow = await slow;
  expect(viaSlow.timedOut, viaSlow.stderr).toBe(false);
  expect(viaSlow.exitCode).toBe(0);
  expect(viaSlow.stdout).toBe('');
  expect(viaSlow.stderr).toMatch(/^warden hook: the hook input on stdin did not end within 2000 ms — continuing without supervision$/);

  // A stdin that never ends (/dev/zero): refused at its byte budget, not read into memory forever.
  const endless = await execa(process.execPath, [WARDEN, 'hook', 'claude', ...live, '--timeout', '60000'], {
    reject: false,
    timeout: 60_000 + 20_000,
    inputFile: '/dev/zero',
  });
  expect(endless.timedOut, endless.stderr).toBe(false);
  expect(endless.exitCode).toBe(0);
  expect(endless.stderr).toMatch(/^warden hook: the hook input on stdin is larger than \d+ bytes — continuing without supervision$/);
  expect((await stack.warden.status(agentId)).turns).toBe(3);
  await stack.warden.signal(agentId, 'abort', {});
});

test('lastResort compact on a hooked Claude: the handoff reaches the model in its next request, in the same session (no fresh context)', async () => {
  const agentId = 'cc-compact';
  await stack.warden.start({ agentId, task: 'Make npm run build pass.', supervisor: { evalInterval: 4, idleAfterMs: 0, lastResort: 'compact' } });
  const failing = 'echo "error TS2307: Cannot find module ./gen" >&2; exit 2';
  let tools = 0;
  let sawCompacting: AgentStatus | null = null;
  const script: AnthropicScript = async (req) => {
    // The handoff arrived: the agent answers (its next reported turn is the fresh context's first).
    if (allText(req.body).includes('compacts your context')) return text('Changing approach: generating ./gen first.');
    if (tools >= 20) return text('gave up'); // never reached when the ladder works
    // Every fourth tool call is evaluated: let that evaluation finish before the next call. (A
    // whisper reaches Claude with the reply to the call after it, so the next three are its evidence.)
    if (tools > 0 && tools % 4 === 0) {
      const s = await waitForStatus(stack.warden, agentId, (x) => x.evaluations.total >= tools / 4, `evaluation ${tools / 4}`, 30_000);
      if (s.state === 'compacting') sawCompacting = s;
    }
    tools += 1;
    return toolUse('Bash', { command: failing, description: 'Build' }, { id: `toolu_warden_compact_${tools}` });
  };
  model = await claude.model({ script });
  const p = project('compact', agentId);
  const r = await runClaude(p, 'Make npm run build pass.');
  expect(r.exitCode, r.output).toBe(0);
  expect(p.hookLog(), 'the hook warned').toBe('');

  // The ladder chose compaction after two ignored whispers (turns 4, 8, 12), not an escalation.
  expect(sawCompacting, r.output).toMatchObject({ state: 'compacting', compactions: 1, escalations: 0 });
  const handoff = sawCompacting!.lastCompaction!.handoff;
  expect(handoff.startsWith('[COMPACTED]')).toBe(true);

  // What Claude got: the handoff as the next tool call's additionalContext, word for word...
  const reqs = model.agentRequests();
  const at = reqs.findIndex((q) => allText(q.body).includes('compacts your context'));
  expect(at, r.output).toBeGreaterThan(0);
  const body = allText(reqs[at]!.body);
  expect(body).toContain(
    `warden, the supervisor of this session (agent ${agentId}), compacts your context. Treat everything before this as superseded by:\n${handoff}`,
  );
  // ...but in the same session: the old prompt and every failed call are still in its context.
  expect(body).toContain('Make npm run build pass.');
  expect(toolResults(reqs[at]!.body).length).toBe(tools);

  // Its next reported turn (the final answer, at Stop) counts as the fresh context's first.
  const s = await statusWhere(agentId, (x) => x.lastCompaction?.done === true, 'compaction done');
  expect(s.state).toBe('running');
  expect(s.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['spawning>running', 'running>compacting', 'compacting>running']);
  await stack.warden.signal(agentId, 'abort', {});
});
