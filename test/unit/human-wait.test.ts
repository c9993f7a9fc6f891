/** Waiting for a human: the agent's own CLI at a permission or idle prompt (the humanWait signal, from the hooks). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { idleArmed } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { status } from '../../src/domain/agent/visibility.js';
import { transition } from '../../src/domain/contract/states.js';
import { handleClaudeHook, handleCodexHook } from '../../src/hooks/handle.js';
import { humanWaitFromHook, pendingToolFromTranscript, sanitize } from '../../src/hooks/human-wait.js';
import type { HookClient } from '../../src/hooks/protocol.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { actionsFor } from '../../src/serve/issue.js';
import { testAgent, turn } from '../helpers/core.js';

const withWebhook = () => testAgent({ supervisor: { idleAfterMs: 60_000 }, notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] } });
const running = () => {
  const a = withWebhook();
  reportTurn(a, turn('t1'));
  return a;
};
const permission = { phase: 'start', kind: 'permission', reason: 'waiting for permission: Bash rm -rf build/' } as const;

describe('the state table', () => {
  it('running or spawning -> awaiting-input on human-wait, and back to running on human-answered', () => {
    expect(transition('running', 'human-wait')).toEqual({ ok: true, to: 'awaiting-input' });
    expect(transition('spawning', 'human-wait')).toEqual({ ok: true, to: 'awaiting-input' });
    expect(transition('awaiting-input', 'human-answered')).toEqual({ ok: true, to: 'running' });
    expect(transition('running', 'human-answered').ok).toBe(false);
    expect(transition('paused-by-user', 'human-wait').ok).toBe(false);
  });
});

describe('the humanWait signal', () => {
  it('start: awaiting-input with the reason, not paused, one alert; the ladder does not move', () => {
    const a = running();
    const step = a.core.s.ladder.step;
    signal(a, 'humanWait', permission);
    expect(a.core.s.state).toBe('awaiting-input');
    const st = status(a);
    expect(st).toMatchObject({ state: 'awaiting-input', stateReason: 'waiting for permission: Bash rm -rf build/', waitingForHuman: true, paused: false });
    expect(a.rec.notifications).toHaveLength(1);
    expect(a.rec.notifications[0]!.event).toMatchObject({
      event: 'awaiting-input',
      agentId: a.core.spec.agentId,
      reason: 'waiting for permission: Bash rm -rf build/',
    });
    expect(a.core.s.ladder.step).toBe(step);
  });

  it('debounced: the same wait told again sends no second alert; a permission prompt names it better than an idle one', () => {
    const a = running();
    signal(a, 'humanWait', { phase: 'start', kind: 'idle', reason: 'waiting for input: Claude is waiting for your input' });
    signal(a, 'humanWait', { phase: 'start', kind: 'idle', reason: 'waiting for input: Claude is waiting for your input' });
    signal(a, 'humanWait', permission);
    signal(a, 'humanWait', { phase: 'start', kind: 'idle', reason: 'waiting for input: again' });
    expect(a.rec.notifications).toHaveLength(1);
    expect(a.core.s.stateReason).toBe('waiting for permission: Bash rm -rf build/');
    // A new wait after the agent moved again is a new alert.
    signal(a, 'humanWait', { phase: 'end' });
    signal(a, 'humanWait', permission);
    expect(a.rec.notifications).toHaveLength(2);
  });

  it('the next reported turn ends the wait; so does the end signal; the idle clock starts over', () => {
    const a = running();
    signal(a, 'humanWait', permission);
    expect(idleArmed(a.core)).toBe(false); // never counted as idle
    a.clock.advance(600_000);
    const r = reportTurn(a, turn('t2'));
    expect(r).toMatchObject({ state: 'running', paused: false });
    expect(a.core.s.transitions.at(-1)).toMatchObject({ from: 'awaiting-input', to: 'running', event: 'human-answered', cause: 'it reported a turn' });
    signal(a, 'humanWait', permission);
    a.clock.advance(1000);
    signal(a, 'humanWait', { phase: 'end' });
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.idleFrom).toBe(a.clock.now);
    expect(status(a).waitingForHuman).toBe(false);
  });

  it('only a running agent waits: paused, or stopped, it is refused and nothing is sent', () => {
    const a = running();
    signal(a, 'pause', { reason: 'lunch' });
    signal(a, 'humanWait', permission);
    expect(a.core.s.state).toBe('paused-by-user');
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'humanWait' });
    expect(a.rec.notifications).toHaveLength(0);
  });

  it('an end while not waiting, or an escalation wait, changes nothing', () => {
    const a = running();
    signal(a, 'humanWait', { phase: 'end' });
    expect(a.core.s.state).toBe('running');
    signal(a, 'interrupt', { reason: 'look here' });
    signal(a, 'humanWait', { phase: 'end' });
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', awaitingCause: 'interrupt' });
  });

  it('a bad payload is recorded with the field named, never thrown', () => {
    const a = running();
    expect(() => signal(a, 'humanWait', { phase: 'begin' })).not.toThrow();
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.refused.at(-1)!.reason).toMatch(/phase/);
  });

  it('the alert offers steer and abort links', () => {
    expect(actionsFor('awaiting-input')).toEqual(['steer', 'abort']);
  });
});

// A Claude Code transcript as it is written: one JSON line per entry, tool_use in an assistant entry.
const TRANSCRIPT = [
  { type: 'user', message: { role: 'user', content: 'Clean the build and rebuild.' }, uuid: 'u1', sessionId: 's1' },
  {
    type: 'assistant',
    message: { id: 'msg_1', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'I will remove the build directory first.' }] },
    uuid: 'a1',
    parentUuid: 'u1',
  },
  {
    type: 'assistant',
    message: {
      id: 'msg_1',
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls build/', description: 'List build' } }],
    },
    uuid: 'a2',
  },
  {
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'a.js\nb.js' }] },
    uuid: 'u2',
    toolUseResult: { stdout: 'a.js\nb.js' },
  },
  {
    type: 'assistant',
    message: {
      id: 'msg_2',
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_02', name: 'Bash', input: { command: 'rm -rf build/', description: 'Remove build' } }],
    },
    uuid: 'a3',
  },
]
  .map((e) => JSON.stringify(e))
  .join('\n');

function transcript(text = `${TRANSCRIPT}\n`): string {
  const path = join(mkdtempSync(join(tmpdir(), 'warden-wait-')), 'session.jsonl');
  writeFileSync(path, text);
  return path;
}

describe('the pending tool call, from the transcript', () => {
  it('is the last tool_use of the last assistant entry', async () => {
    expect(await pendingToolFromTranscript(transcript())).toEqual({
      name: 'Bash',
      input: { command: 'rm -rf build/', description: 'Remove build' },
      id: 'toolu_02',
    });
  });
  it('none in the transcript, a torn last line, or no file: null or the last whole one', async () => {
    expect(await pendingToolFromTranscript(transcript('{"type":"user","message":{"role":"user","content":"hi"}}\n'))).toBeNull();
    expect(await pendingToolFromTranscript('/nonexistent/x.jsonl')).toBeNull();
    expect(await pendingToolFromTranscript(undefined)).toBeNull();
    const torn = await pendingToolFromTranscript(
      transcript(`${TRANSCRIPT}\n{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","na`),
    );
    expect(torn?.id).toBe('toolu_02');
  });
});

describe('hook events that mean waiting for a human', () => {
  it("Claude's permission prompt names the pending tool call", async () => {
    const w = await humanWaitFromHook('claude', {
      hook_event_name: 'Notification',
      notification_type: 'permission_prompt',
      message: 'Claude needs your permission to use Bash',
      transcript_path: transcript(),
    });
    expect(w).toEqual({ phase: 'start', kind: 'permission', reason: 'waiting for permission: Bash rm -rf build/' });
  });
  it('without a readable transcript, the message says it', async () => {
    const w = await humanWaitFromHook('claude', {
      hook_event_name: 'Notification',
      notification_type: 'permission_prompt',
      message: 'Claude needs your permission to use Bash',
    });
    expect(w?.reason).toBe('waiting for permission: Claude needs your permission to use Bash');
  });
  it('an idle prompt; an older payload with the message only; auth_success is no wait', async () => {
    expect(
      await humanWaitFromHook('claude', { hook_event_name: 'Notification', notification_type: 'idle_prompt', message: 'Claude is waiting for your input' }),
    ).toEqual({
      phase: 'start',
      kind: 'idle',
      reason: 'waiting for input: Claude is waiting for your input',
    });
    expect((await humanWaitFromHook('claude', { hook_event_name: 'Notification', message: 'Claude needs your permission to use Write' }))?.kind).toBe(
      'permission',
    );
    expect(await humanWaitFromHook('claude', { hook_event_name: 'Notification', notification_type: 'auth_success', message: 'ok' })).toBeNull();
  });
  it("Codex's PermissionRequest names the tool itself", async () => {
    expect(
      await humanWaitFromHook('codex', { hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'git push origin main' } }),
    ).toEqual({
      phase: 'start',
      kind: 'permission',
      reason: 'waiting for permission: Bash git push origin main',
    });
  });
  it('the reason is one bounded, printable line', async () => {
    const nasty = `rm -rf build/\n\u001b[31mred\u0007 ${'x'.repeat(500)}`;
    const w = await humanWaitFromHook('codex', { hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: nasty } });
    expect(w!.reason!.length).toBeLessThanOrEqual(200);
    expect([...w!.reason!].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)).toBe(false);
    expect(sanitize('a\r\n\tb')).toBe('a b');
  });
});

function recordingClient(st: Partial<AgentStatus> = {}) {
  const signals: Array<{ name: string; payload: unknown }> = [];
  const client = {
    signal: async (_id: string, name: string, payload: unknown) => void signals.push({ name, payload }),
    reportTurn: async () => ({ accepted: true, duplicate: false, whispers: [], paused: false, stop: false, interrupt: false, state: 'running' }),
    status: async () => ({ state: 'running', pendingWhispers: 0, paused: false, checksDone: false, toolAllowlist: [], waitingForHuman: false, ...st }),
  } as unknown as HookClient;
  return { client: async () => client, signals };
}

describe('the hook handler', () => {
  it('Notification sends humanWait and prints nothing; PreToolUse and a prompt end a wait, only when there is one', async () => {
    const c = recordingClient();
    expect(
      await handleClaudeHook({ hook_event_name: 'Notification', notification_type: 'permission_prompt', transcript_path: transcript() }, 'fixer', c.client),
    ).toBeNull();
    expect(c.signals).toEqual([{ name: 'humanWait', payload: permission }]);
    await handleClaudeHook({ hook_event_name: 'PreToolUse', tool_name: 'Bash' }, 'fixer', c.client);
    expect(c.signals).toHaveLength(1); // not waiting: no signal
    const w = recordingClient({ waitingForHuman: true, state: 'awaiting-input' });
    expect(await handleClaudeHook({ hook_event_name: 'PreToolUse', tool_name: 'Bash' }, 'fixer', w.client)).toBeNull(); // not denied: not a pause
    await handleClaudeHook({ hook_event_name: 'UserPromptSubmit', prompt: 'yes, go on' }, 'fixer', w.client);
    expect(w.signals).toEqual([
      { name: 'humanWait', payload: { phase: 'end' } },
      { name: 'humanWait', payload: { phase: 'end' } },
    ]);
  });
  it("Codex's PermissionRequest: the signal, and no decision (its human decides)", async () => {
    const c = recordingClient();
    expect(
      await handleCodexHook(
        { hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'rm -rf build/' }, turn_id: 't' },
        'fixer',
        c.client,
      ),
    ).toBeNull();
    expect(c.signals).toEqual([{ name: 'humanWait', payload: permission }]);
  });
});
