/** The hooks and compaction: PreCompact / PostCompact become the compaction signal; a reply's handoff reaches the agent as context. */
import { describe, expect, it } from 'vitest';
import { handleClaudeHook } from '../../src/hooks/handle.js';
import type { HookClient } from '../../src/hooks/protocol.js';
import type { AgentStatus, ReportTurnResult } from '../../src/domain/contract/status.js';

function recordingClient(reply: Partial<ReportTurnResult> = {}, status: Partial<AgentStatus> = {}) {
  const signals: Array<{ agentId: string; name: string; payload: unknown }> = [];
  const client = {
    signal: async (agentId: string, name: string, payload: unknown) => void signals.push({ agentId, name, payload }),
    reportTurn: async () => ({ accepted: true, duplicate: false, whispers: [], paused: false, stop: false, interrupt: false, state: 'running', ...reply }),
    status: async () => ({ state: 'running', pendingWhispers: 0, paused: false, checksDone: false, toolAllowlist: [], ...status }),
  } as unknown as HookClient;
  return { client: async () => client, signals };
}

describe('PreCompact / PostCompact', () => {
  it('send the compaction signal (start, then end) with the trigger, and print nothing', async () => {
    const c = recordingClient();
    expect(await handleClaudeHook({ hook_event_name: 'PreCompact', trigger: 'auto', session_id: 's' }, 'fixer', c.client)).toBeNull();
    expect(await handleClaudeHook({ hook_event_name: 'PostCompact', trigger: 'auto', session_id: 's' }, 'fixer', c.client)).toBeNull();
    expect(c.signals).toEqual([
      { agentId: 'fixer', name: 'compaction', payload: { phase: 'start', trigger: 'auto' } },
      { agentId: 'fixer', name: 'compaction', payload: { phase: 'end', trigger: 'auto' } },
    ]);
  });
});

describe("warden's compaction reaches a hooked agent as context", () => {
  const compact = { handoff: '[COMPACTED] warden, your supervisor, has moved you to a fresh context. …' };

  it('after a tool call: the handoff is the additional context', async () => {
    const c = recordingClient({ compact, state: 'compacting' });
    const out = await handleClaudeHook(
      { hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'npm run build' }, tool_use_id: 'toolu_1', session_id: 's' },
      'fixer',
      c.client,
    );
    expect(out?.hookSpecificOutput?.additionalContext).toMatch(/compacts your context[\s\S]*\[COMPACTED\] warden, your supervisor/);
  });

  it('at a stop: the stop is blocked with the handoff as the reason', async () => {
    const c = recordingClient({ compact, state: 'compacting' });
    const out = await handleClaudeHook({ hook_event_name: 'Stop', last_assistant_message: 'Retrying the build.', session_id: 's' }, 'fixer', c.client);
    expect(out).toMatchObject({ decision: 'block', reason: expect.stringContaining('[COMPACTED]') });
  });

  it('at a prompt: a pending handoff is reported for even with no whisper queued, and reaches the agent as context', async () => {
    const pending = { at: '2026-11-25T04:00:00.000Z', reason: 'compacting', handoff: compact.handoff, done: false, doneAt: null };
    const c = recordingClient({ compact, state: 'compacting' }, { state: 'compacting', pendingWhispers: 0, lastCompaction: pending });
    const out = await handleClaudeHook({ hook_event_name: 'UserPromptSubmit', prompt: 'go on', prompt_id: 'p1', session_id: 's' }, 'fixer', c.client);
    expect(out).toMatchObject({
      hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: expect.stringMatching(/compacts your context[\s\S]*\[COMPACTED\]/) },
    });
    // A compaction already done, and nothing queued: the prompt is not a turn.
    const done = recordingClient({}, { pendingWhispers: 0, lastCompaction: { ...pending, done: true, doneAt: pending.at } });
    let reported = 0;
    const client = await done.client();
    const counting = { ...client, reportTurn: async (...a: Parameters<typeof client.reportTurn>) => (reported++, client.reportTurn(...a)) };
    expect(
      await handleClaudeHook({ hook_event_name: 'UserPromptSubmit', prompt: 'go on', prompt_id: 'p2', session_id: 's' }, 'fixer', async () => counting),
    ).toBeNull();
    expect(reported).toBe(0);
  });
});
