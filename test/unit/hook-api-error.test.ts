/**
 * Claude Code's StopFailure (a turn ended on an API error) and PermissionDenied (a denied tool call):
 * the payload as warden reads it, the state each leaves the agent in, and the hook's answer.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { idleArmed } from '../../src/domain/agent/next-step.js';
import { reportTurn } from '../helpers/report.js';
import { status } from '../../src/domain/agent/visibility.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import type { TurnInput } from '../../src/domain/contract/schemas.js';
import { deniedTurn, stopFailureWait } from '../../src/hooks/api-error.js';
import { HookInputError, parseHookEvent } from '../../src/hooks/event.js';
import { handleClaudeHook } from '../../src/hooks/handle.js';
import type { HookClient } from '../../src/hooks/protocol.js';
import { testAgent, turn } from '../helpers/core.js';

const withWebhook = () => testAgent({ supervisor: { idleAfterMs: 60_000 }, notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] } });
const running = () => {
  const a = withWebhook();
  reportTurn(a, turn('t1'));
  return a;
};
const rateLimited = stopFailureWait({ hook_event_name: 'StopFailure', error: 'rate_limit', error_details: '429 {"type":"rate_limit_error"}' });
const authFailed = stopFailureWait({ hook_event_name: 'StopFailure', error: 'authentication_failed', error_details: 'Invalid API key' });

describe('the StopFailure payload', () => {
  it('a rate limit, an overloaded model, a server error: kind rate-limit, with the reason', () => {
    expect(rateLimited).toEqual({
      phase: 'start',
      kind: 'rate-limit',
      reason: 'its turn ended on an API error: model rate-limited (rate_limit): 429 {"type":"rate_limit_error"}',
    });
    for (const error of ['overloaded', 'server_error']) expect(stopFailureWait({ error }).kind).toBe('rate-limit');
  });

  it('authentication, billing, an invalid request, an unknown kind: kind api-error (its human must act)', () => {
    expect(authFailed).toEqual({
      phase: 'start',
      kind: 'api-error',
      reason: 'its turn ended on an API error: authentication failed (authentication_failed): Invalid API key',
    });
    for (const error of ['billing_error', 'invalid_request', 'model_not_found', 'account_on_hold', 'unknown', 'max_output_tokens'])
      expect(stopFailureWait({ error }).kind, error).toBe('api-error');
    expect(stopFailureWait({ error: 'quota_\u0007exceeded' }).reason).toBe('its turn ended on an API error: API error quota_ exceeded');
    // As 2.1.330 sends it: no error_details, the error in its last message.
    expect(stopFailureWait({ error: 'rate_limit', last_assistant_message: 'API Error: Request rejected (429) · slow down' }).reason).toBe(
      'its turn ended on an API error: model rate-limited (rate_limit): API Error: Request rejected (429) · slow down',
    );
    expect(stopFailureWait({})).toMatchObject({ kind: 'api-error', reason: 'its turn ended on an API error: unknown API error (unknown)' });
  });

  it('a bad payload is a clear input error naming the field, never a throw elsewhere', () => {
    const bad = (o: unknown) => () => parseHookEvent(JSON.stringify(o));
    expect(bad({ hook_event_name: 'StopFailure', error: 429 })).toThrow(HookInputError);
    expect(bad({ hook_event_name: 'StopFailure', error: 429 })).toThrow(/error: must be a string, not a number/);
    expect(bad({ hook_event_name: 'StopFailure', error: 'rate_limit', error_details: { code: 429 } })).toThrow(
      /error_details: must be a string, not an object/,
    );
    expect(bad({ hook_event_name: 'PermissionDenied', tool_name: 'Bash', reason: ['no'] })).toThrow(/reason: must be a string, not an array/);
    expect(parseHookEvent(JSON.stringify({ hook_event_name: 'StopFailure', error: 'rate_limit', error_details: null }))).toMatchObject({ error: 'rate_limit' });
  });
});

describe('the PermissionDenied payload', () => {
  it('a failed tool call with denied: true and the reason; the same event is the same turn', () => {
    const input = {
      hook_event_name: 'PermissionDenied',
      session_id: 's1',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /', description: 'wipe' },
      tool_use_id: 'toolu_9',
      reason: 'Destructive command blocked by the auto mode classifier',
    };
    const t = deniedTurn('claude', input);
    expect(t).toEqual({
      id: 'claude-s1-denied-toolu_9',
      text: '',
      toolCalls: [{ name: 'Bash', args: 'rm -rf /', result: 'denied: Destructive command blocked by the auto mode classifier', ok: false, denied: true }],
    });
    expect(deniedTurn('claude', input)).toEqual(t);
    expect(deniedTurn('claude', { hook_event_name: 'PermissionDenied' }).toolCalls![0]).toMatchObject({
      name: 'unknown-tool',
      result: 'denied: permission denied',
    });
  });
});

describe('the agent after a StopFailure (the humanWait signal)', () => {
  it('a rate limit: blocked with the reason, no alert, never idle; its next turn makes it running', () => {
    const a = running();
    signal(a, 'humanWait', rateLimited);
    expect(status(a)).toMatchObject({ state: 'blocked', stateReason: rateLimited.reason, blockedByCli: true, waitingForHuman: false });
    expect(a.rec.notifications).toHaveLength(0);
    expect(idleArmed(a.core)).toBe(false);
    signal(a, 'humanWait', { ...rateLimited, reason: 'its turn ended on an API error: model overloaded (overloaded)' });
    expect(a.core.s.stateReason).toBe('its turn ended on an API error: model overloaded (overloaded)');
    a.clock.advance(5_000);
    reportTurn(a, turn('t2'));
    expect(a.core.s.state).toBe('running');
    expect(a.core.s.transitions.at(-1)).toMatchObject({ from: 'blocked', to: 'running', event: 'unblock' });
    expect(status(a).blockedByCli).toBeUndefined();
    expect(a.core.s.idleFrom).toBe(a.clock.now);
  });

  it('a rate limit ends with the end signal too (a tool call, a prompt); a first turn that failed starts the agent', () => {
    const a = withWebhook();
    expect(a.core.s.state).toBe('spawning');
    signal(a, 'humanWait', rateLimited);
    expect(a.core.s.state).toBe('blocked');
    signal(a, 'humanWait', { phase: 'end' });
    expect(a.core.s.state).toBe('running');
  });

  it('an error its human must fix: awaiting-input with the reason and one alert; its next turn makes it running', () => {
    const a = running();
    signal(a, 'humanWait', authFailed);
    signal(a, 'humanWait', authFailed);
    expect(status(a)).toMatchObject({ state: 'awaiting-input', stateReason: authFailed.reason, waitingForHuman: true });
    expect(a.rec.notifications).toHaveLength(1);
    expect(a.rec.notifications[0]!.event).toMatchObject({ event: 'awaiting-input', reason: authFailed.reason });
    reportTurn(a, turn('t2'));
    expect(a.core.s.state).toBe('running');
  });

  it('a rate limit, then an error its human must fix: awaiting its human', () => {
    const a = running();
    signal(a, 'humanWait', rateLimited);
    signal(a, 'humanWait', authFailed);
    expect(status(a)).toMatchObject({ state: 'awaiting-input', waitingForHuman: true });
    expect(status(a).blockedByCli).toBeUndefined();
  });

  it('a rate limit while a human paused it is refused; a driven agent refuses it (warden retries itself); a bad kind is recorded, never thrown', () => {
    const a = running();
    signal(a, 'pause', { reason: 'lunch' });
    signal(a, 'humanWait', rateLimited);
    expect(a.core.s.state).toBe('paused-by-user');
    expect(a.core.s.refused.at(-1)).toMatchObject({ what: 'humanWait' });
    const d = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    signal(d, 'humanWait', rateLimited);
    expect(d.core.s.refused.at(-1)?.reason ?? '').toMatch(/driven by warden/);
    const b = running();
    expect(() => signal(b, 'humanWait', { phase: 'start', kind: 'quota' })).not.toThrow();
    expect(b.core.s.state).toBe('running');
    expect(b.core.s.refused.at(-1)!.reason).toMatch(/kind/);
  });

  it('a blocked-by-hold agent is not unblocked by its next turn', () => {
    const a = testAgent({ safety: { holdToken: 'tok-0123456789abcdef' } });
    reportTurn(a, turn('t1'));
    signal(a, 'block', { reason: 'rebase first', token: 'tok-0123456789abcdef' });
    reportTurn(a, turn('t2'));
    expect(a.core.s.state).toBe('blocked');
  });
});

function recordingClient(st: Partial<AgentStatus> = {}, whispers: Array<{ type: string; text: string }> = []) {
  const signals: Array<{ name: string; payload: unknown }> = [];
  const turns: TurnInput[] = [];
  const client = {
    signal: async (_id: string, name: string, payload: unknown) => void signals.push({ name, payload }),
    reportTurn: async (_id: string, t: TurnInput) => {
      turns.push(t);
      return { accepted: true, duplicate: false, whispers, paused: false, stop: false, interrupt: false, state: 'running' };
    },
    status: async () => ({ state: 'running', pendingWhispers: 0, paused: false, checksDone: false, toolAllowlist: [], waitingForHuman: false, ...st }),
  } as unknown as HookClient;
  return { client: async () => client, signals, turns };
}

describe('the hook handler', () => {
  it('StopFailure sends humanWait and prints nothing; PreToolUse and a prompt end a CLI rate-limit block', async () => {
    const c = recordingClient();
    expect(
      await handleClaudeHook({ hook_event_name: 'StopFailure', error: 'rate_limit', error_details: '429 {"type":"rate_limit_error"}' }, 'fixer', c.client),
    ).toBeNull();
    expect(c.signals).toEqual([{ name: 'humanWait', payload: rateLimited }]);
    const b = recordingClient({ state: 'blocked', blockedByCli: true });
    await handleClaudeHook({ hook_event_name: 'PreToolUse', tool_name: 'Bash' }, 'fixer', b.client);
    await handleClaudeHook({ hook_event_name: 'UserPromptSubmit', prompt: 'go on' }, 'fixer', b.client);
    expect(b.signals).toEqual([
      { name: 'humanWait', payload: { phase: 'end' } },
      { name: 'humanWait', payload: { phase: 'end' } },
    ]);
  });

  it('PermissionDenied reports the denied call; whispers it takes are shown as a system message', async () => {
    const c = recordingClient();
    const input = {
      hook_event_name: 'PermissionDenied',
      session_id: 's1',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /' },
      tool_use_id: 'toolu_1',
      reason: 'no',
    };
    expect(await handleClaudeHook(input, 'fixer', c.client)).toBeNull();
    expect(c.turns).toEqual([deniedTurn('claude', input)]);
    const w = recordingClient({}, [{ type: 'CORRECTION', text: 'stop asking for rm -rf' }]);
    expect(await handleClaudeHook(input, 'fixer', w.client)).toEqual({ systemMessage: expect.stringContaining('[CORRECTION] stop asking for rm -rf') });
  });
});
