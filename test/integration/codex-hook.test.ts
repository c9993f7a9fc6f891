/**
 * `warden hook codex` with the real Codex CLI (the project's dependency, 0.169) running by itself
 * (`codex exec --json`) against the scripted Responses server on 127.0.0.1, its hooks wired in a
 * throwaway CODEX_HOME's config.toml to the built `warden` CLI and a real dev server + worker:
 *
 *  - a shell call is reported as a turn (read back from the workflow's own history), and whispers
 *    reach codex's next model request: one queued before the session (UserPromptSubmit), one
 *    queued while the model was thinking (PostToolUse);
 *  - a failed command is reported with ok: false (codex's hook input has no exit status; the
 *    bridge reads it from the session's rollout);
 *  - a paused agent's tool call is refused before it runs, with the pause reason;
 *  - a whisper that arrives as codex finishes blocks the stop once, and codex goes on with it;
 *  - verified done: for an agent with `verify`, a false claim at Stop is blocked with the [VERIFY]
 *    reason (a user message to the model), codex fixes it, and its next stop ends the agent done;
 *  - with Temporal unreachable codex runs on as if there were no hooks (one stderr line per hook),
 *    and the hook by itself exits 0 with no output (unless --strict).
 */
import { execa } from 'execa';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import {
  functionCallOutputs,
  inputTexts,
  message,
  shellCall,
  startModelServer,
  type ModelReply,
  type ModelServer,
  type RecordedRequest,
} from '../fixtures/model-server.js';
import { ROOT, cleanup, useStack } from '../helpers/stack.js';
import { waitForStatus, reportedTurns } from '../helpers/agents.js';
import { codexExecArgs, codexHooksToml, execCodex, offlineCodexEnv } from '../helpers/codex.js';
import { shellWord, wardenHookCommand } from '../helpers/hooks.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
/** Commands run without a login shell: the host's profile scripts stay out of the output. */
const noLogin = { login: false };

let scratch: string;
let model: ModelServer | null = null;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-codex-hook-'));
});
afterEach(async () => {
  await model?.close();
  model = null;
});
afterAll(() => cleanup(scratch));

/** A throwaway working directory and CODEX_HOME whose config.toml wires the hooks to warden. */
function project(name: string, agentId: string, opts: { address?: string; extra?: string[] } = {}) {
  const dir = join(scratch, name);
  const work = join(dir, 'work');
  const home = join(dir, 'codex-home');
  const hookLog = join(dir, 'hook-stderr.log');
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(hookLog, '');
  const server = { address: opts.address ?? stack.server.address, namespace: stack.server.namespace };
  const command = wardenHookCommand('codex', agentId, server, [...(opts.extra ?? []), `2>>${shellWord(hookLog)}`]);
  const toml = codexHooksToml(command, ['UserPromptSubmit', ['PreToolUse', '*'], ['PostToolUse', '*'], 'Stop']);
  writeFileSync(join(home, 'config.toml'), toml);
  return { dir, work, home, hookLog: () => readFileSync(hookLog, 'utf8') };
}

interface CodexResult {
  exitCode: number | undefined;
  threadId: string | undefined;
  messages: string[];
  output: string;
}

async function runCodex(p: ReturnType<typeof project>, server: ModelServer, prompt: string): Promise<CodexResult> {
  const r = await execCodex([...codexExecArgs(server, p.work), prompt], { cwd: p.work, env: offlineCodexEnv(p.dir, p.home), timeoutMs: 90_000 });
  const events = String(r.stdout)
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { type?: string; thread_id?: string; item?: { type?: string; text?: string } }];
      } catch {
        return [];
      }
    });
  return {
    exitCode: r.exitCode,
    threadId: events.find((e) => e.type === 'thread.started')?.thread_id,
    messages: events.flatMap((e) => (e.type === 'item.completed' && e.item?.type === 'agent_message' ? [e.item.text ?? ''] : [])),
    output: `${String(r.all)}\n--- hook stderr ---\n${p.hookLog()}`,
  };
}

/** A script of Responses replies that may do something first (steer, pause), by request number (from 0). */
function scripted(steps: Array<() => Promise<ModelReply> | ModelReply>): (req: RecordedRequest) => Promise<ModelReply> {
  let i = 0;
  return async () => {
    const step = steps[i++];
    return step ? step() : message('unexpected extra request');
  };
}

const statusWhere = (agentId: string, pred: (s: AgentStatus) => boolean, what: string, timeoutMs?: number) =>
  waitForStatus(stack.warden, agentId, pred, what, timeoutMs);

const allText = (body: unknown) => inputTexts(body).join('\n');
const quiet = { evalInterval: 1000, idleAfterMs: 0 }; // no evaluations: every whisper here is a test's own

async function steerAndWait(agentId: string, text: string, pending: number): Promise<void> {
  await stack.warden.signal(agentId, 'steer', { text });
  await statusWhere(agentId, (s) => s.pendingWhispers === pending, `${pending} pending whisper(s) on ${agentId}`);
}

test('a shell call becomes a turn; whispers reach the next model request (UserPromptSubmit and PostToolUse)', async () => {
  const agentId = 'cx-steer';
  await stack.warden.start({ agentId, task: 'Say hi.', supervisor: quiet });
  await steerAndWait(agentId, 'UNIQUE-EARLY-STEER: mind the greeting', 1);
  model = await startModelServer({
    script: scripted([
      async () => {
        // While the model "thinks", a human steers: that whisper must wait for the tool call's hook.
        await steerAndWait(agentId, 'UNIQUE-STEER-TEXT: use printf next time', 1);
        return shellCall('echo hi', { extra: noLogin, callId: 'call_warden_steer_1' });
      },
      () => message('done'),
    ]),
  });
  const p = project('steer', agentId);
  const r = await runCodex(p, model, 'Say hi.');

  expect(r.exitCode, r.output).toBe(0);
  expect(r.messages, r.output).toEqual(['done']);
  expect(p.hookLog(), 'the hook warned').toBe('');
  expect(r.threadId).toMatch(/^[0-9a-f-]{36}$/);

  const reqs = model.responsesRequests();
  expect(reqs, r.output).toHaveLength(2);
  // The early whisper arrived with the prompt; the later one only after the tool call's hook ran.
  expect(allText(reqs[0]!.body)).toContain('[steering] UNIQUE-EARLY-STEER: mind the greeting');
  expect(allText(reqs[0]!.body)).not.toContain('UNIQUE-STEER-TEXT');
  expect(inputTexts(reqs[1]!.body, 'developer').join('\n')).toContain('[steering] UNIQUE-STEER-TEXT: use printf next time');
  expect(functionCallOutputs(reqs[1]!.body)).toEqual([
    { callId: 'call_warden_steer_1', output: expect.stringMatching(/exited with code 0[\s\S]*Output:\nhi\n/) },
  ]);

  const s = await stack.warden.status(agentId);
  expect(s.turns).toBe(3); // the prompt that carried a whisper, the tool call, the final answer
  expect(s.whispersDelivered).toBe(2);
  expect(s.pendingWhispers).toBe(0);
  expect(s.state).toBe('running');

  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns.map((t) => t.toolCalls?.map((c) => c.name) ?? [])).toEqual([[], ['Bash'], []]);
  const [prompt, tool, stop] = turns;
  expect(prompt!.text).toBe('User prompt: Say hi.');
  expect(tool!.id).toBe(`codex-${r.threadId}-tool-call_warden_steer_1`);
  expect(tool!.toolCalls![0]).toEqual({ name: 'Bash', args: 'echo hi', result: 'hi\n', ok: true });
  expect(stop!.text).toBe('done');
  await stack.warden.signal(agentId, 'abort', {});
});

test('a failed command is reported with ok: false (its exit status read from the rollout)', async () => {
  const agentId = 'cx-fail';
  await stack.warden.start({ agentId, task: 'Run the build.', supervisor: quiet });
  model = await startModelServer({
    script: [shellCall('echo broken; exit 3', { extra: noLogin, callId: 'call_warden_fail_1' }), message('it failed')],
  });
  const p = project('fail', agentId);
  const r = await runCodex(p, model, 'Run the build.');
  expect(r.exitCode, r.output).toBe(0);
  expect(p.hookLog()).toBe('');
  const tool = (await reportedTurns(stack.warden, agentId)).find((t) => t.toolCalls?.length);
  expect(tool?.toolCalls?.[0], r.output).toEqual({ name: 'Bash', args: 'echo broken; exit 3', result: 'broken\n', ok: false });
  await stack.warden.signal(agentId, 'abort', {});
});

test('a paused agent: its tool call is refused with the pause reason and never runs', async () => {
  const agentId = 'cx-paused';
  await stack.warden.start({ agentId, task: 'Write the marker file.', supervisor: quiet });
  await stack.warden.signal(agentId, 'pause', { reason: 'UNIQUE-PAUSE-REASON: reviewing the diff' });
  await statusWhere(agentId, (s) => s.paused, 'paused');

  model = await startModelServer({
    script: [shellCall('echo ran > marker.txt', { extra: noLogin, callId: 'call_warden_paused_1' }), message('I will wait.')],
  });
  const p = project('paused', agentId);
  const r = await runCodex(p, model, 'Write the marker file.');

  expect(r.exitCode, r.output).toBe(0);
  expect(p.hookLog()).toBe('');
  expect(existsSync(join(p.work, 'marker.txt')), 'the refused command ran').toBe(false);
  const reqs = model.responsesRequests();
  expect(reqs).toHaveLength(2);
  const [result] = functionCallOutputs(reqs[1]!.body);
  expect(result).toMatchObject({ callId: 'call_warden_paused_1' });
  expect(result!.output).toMatch(/^Command blocked by PreToolUse hook: warden: agent cx-paused is paused/);
  expect(result!.output).toContain('UNIQUE-PAUSE-REASON: reviewing the diff');
  expect(result!.output).toContain(`warden resume ${agentId}`);
  // Nothing ran, so no tool call was reported; the final answer was (reports go through while paused).
  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns.flatMap((t) => t.toolCalls ?? [])).toEqual([]);
  expect(turns.map((t) => t.text)).toEqual(['I will wait.']);
  expect((await stack.warden.status(agentId)).state).toBe('paused-by-user');
  await stack.warden.signal(agentId, 'abort', {});
});

test('a whisper at the finish blocks the stop once; codex goes on with it; never a second block', async () => {
  const agentId = 'cx-stop';
  await stack.warden.start({ agentId, task: 'Answer the question.', supervisor: quiet });
  model = await startModelServer({
    script: scripted([
      async () => {
        await steerAndWait(agentId, 'UNIQUE-STOP-STEER: also mention the tests', 1);
        return message('first answer');
      },
      async () => {
        // Another whisper as codex finishes its continuation: this stop must not be blocked again.
        await steerAndWait(agentId, 'UNIQUE-LATE-STEER: for the next turn', 1);
        return message('second answer, with the tests');
      },
    ]),
  });
  const p = project('stop', agentId);
  const r = await runCodex(p, model, 'Answer the question.');

  expect(r.exitCode, r.output).toBe(0);
  expect(r.messages, r.output).toEqual(['first answer', 'second answer, with the tests']);
  const reqs = model.responsesRequests();
  expect(reqs, r.output).toHaveLength(2);
  expect(allText(reqs[0]!.body)).not.toContain('UNIQUE-STOP-STEER');
  expect(inputTexts(reqs[1]!.body, 'user').join('\n')).toContain('[steering] UNIQUE-STOP-STEER: also mention the tests');
  expect(allText(reqs[1]!.body)).toContain('first answer');

  const s = await stack.warden.status(agentId);
  expect(s.whispersDelivered).toBe(1);
  expect(s.pendingWhispers).toBe(1); // the late whisper stays queued for the next prompt or tool call
  expect((await reportedTurns(stack.warden, agentId)).map((t) => t.text)).toEqual(['first answer']);
  expect(p.hookLog()).toMatch(/1 whisper\(s\) stay queued for agent cx-stop/);
  await stack.warden.signal(agentId, 'abort', {});
});

test('verified done: a false claim at Stop is blocked with the [VERIFY] reason; codex fixes it and its next stop ends the agent done', async () => {
  const agentId = 'cx-verify';
  const p = project('verify', agentId);
  const command = "sh -c 'test -f ok.txt'";
  await stack.warden.start({ agentId, task: 'Create ok.txt.', supervisor: quiet, verify: { command, cwd: p.work } });
  model = await startModelServer({
    script: scripted([
      () => message('UNIQUE-FALSE-CLAIM: ok.txt is there, done.'),
      () => shellCall('touch ok.txt', { extra: noLogin, callId: 'call_warden_verify_1' }),
      () => message('UNIQUE-TRUE-CLAIM: created ok.txt.'),
    ]),
  });
  const r = await runCodex(p, model, 'Create ok.txt.');

  expect(r.exitCode, r.output).toBe(0);
  expect(r.messages, r.output).toEqual(['UNIQUE-FALSE-CLAIM: ok.txt is there, done.', 'UNIQUE-TRUE-CLAIM: created ok.txt.']);
  const reqs = model.responsesRequests();
  expect(reqs, r.output).toHaveLength(3);
  // The blocked stop's reason reached the model as a user message: the check's command and its failure.
  expect(allText(reqs[0]!.body)).not.toContain('[VERIFY]');
  expect(inputTexts(reqs[1]!.body, 'user').join('\n')).toContain('[VERIFY]');
  expect(inputTexts(reqs[1]!.body, 'user').join('\n')).toContain('test -f ok.txt');
  const s = await statusWhere(agentId, (st) => st.state === 'done', 'done');
  expect(s.lastVerification).toMatchObject({ command, passed: true, exitCode: 0 });
  expect(s.escalationStep).toBe(1); // the false claim counted once
});

test('never in the way: with Temporal unreachable codex runs on; the hook exits 0 with no output (--strict fails)', async () => {
  model = await startModelServer({
    script: [shellCall('echo hi > marker.txt', { extra: noLogin }), message('done anyway')],
  });
  const p = project('dead', 'cx-ghost', { address: '127.0.0.1:1', extra: ['--timeout', '1500'] });
  const r = await runCodex(p, model, 'Write the marker.');
  expect(r.exitCode, r.output).toBe(0);
  expect(r.messages, r.output).toEqual(['done anyway']);
  expect(readFileSync(join(p.work, 'marker.txt'), 'utf8')).toBe('hi\n');
  expect(model.responsesRequests()).toHaveLength(2);
  // One line from each hook that ran: UserPromptSubmit, PreToolUse, PostToolUse, Stop.
  const lines = p.hookLog().trim().split('\n');
  expect(lines, p.hookLog()).toHaveLength(4);
  for (const l of lines) expect(l).toMatch(/^warden hook: cannot reach Temporal at 127\.0\.0\.1:1 .* continuing without supervision$/);

  const input = JSON.stringify({
    hook_event_name: 'PostToolUse',
    session_id: 's-1',
    turn_id: 't-1',
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
    tool_response: '',
    tool_use_id: 'call_x',
  });
  const hook = (args: string[]) => execa(process.execPath, [WARDEN, 'hook', 'codex', ...args], { input, reject: false, timeout: 30_000 });
  const live = ['--address', stack.server.address, '--namespace', stack.server.namespace];
  const unknown = await hook(['--agent', 'no-such-agent', ...live]);
  expect(unknown.exitCode).toBe(0);
  expect(unknown.stdout).toBe('');
  expect(unknown.stderr).toMatch(/^warden hook: no such agent: no-such-agent .* continuing without supervision\n?$/);
  const strict = await hook(['--agent', 'no-such-agent', ...live, '--strict']);
  expect(strict.exitCode).toBe(3);
  expect(strict.stderr).toMatch(/no such agent: no-such-agent/);
});

test('bounded: a rollout path that is a FIFO or /dev/zero is not waited on; the tool call is reported within --timeout', async () => {
  const agentId = 'cx-bounded';
  await stack.warden.start({ agentId, task: 'x', supervisor: quiet });
  const live = ['--agent', agentId, '--address', stack.server.address, '--namespace', stack.server.namespace];
  const fifo = join(scratch, 'rollout.fifo');
  await execa('mkfifo', [fifo]);
  for (const [i, transcript] of [fifo, '/dev/zero'].entries()) {
    const input = JSON.stringify({
      hook_event_name: 'PostToolUse',
      session_id: 's-bounded',
      turn_id: `t-${i}`,
      transcript_path: transcript,
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_response: '',
      tool_use_id: `call_bounded_${i}`,
    });
    // The margin only stops a hook that hangs (the old behaviour on a FIFO): execa kills it and the test fails.
    const r = await execa(process.execPath, [WARDEN, 'hook', 'codex', ...live, '--timeout', '2000'], { input, reject: false, timeout: 22_000 });
    expect(r.timedOut, `${transcript}: ${r.stderr}`).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('');
  }
  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns.map((t) => t.toolCalls?.[0]?.ok)).toEqual([true, true]); // the rollout does not say: succeeded
  await stack.warden.signal(agentId, 'abort', {});
});
