/** One hook event of a coding agent (Claude Code or Codex), answered with warden's help. The protocol: src/hooks/protocol.ts. */
import { MAX_TURN_TEXT, truncate } from '../domain/contract/limits.js';
import type { TurnInput } from '../domain/contract/schemas.js';
import {
  bounded,
  codexToolOutcome,
  haltFor,
  lastAssistantFromTranscript,
  toolArgs,
  toolSucceeded,
  turnId,
  whisperContext,
  type ClaudeHookInput,
  type ClaudeHookOutput,
  type CodexHookInput,
  type HookAgent,
  type HookClient,
} from './protocol.js';
import { DEFAULT_VERIFY_WAIT_MS, claimAtStop } from './stop.js';
import { humanWaitFromHook } from './human-wait.js';

// ---------- the events ----------

/**
 * Handle one hook event of a coding agent (Claude Code or Codex): talk to warden, and return what
 * to print on stdout (or `null` for nothing). Errors propagate; the command decides whether they
 * are fatal.
 */
export async function handleHook(
  agent: HookAgent,
  input: CodexHookInput,
  agentId: string,
  client: () => Promise<HookClient>,
  warn: (line: string) => void = () => {},
  waitUntil: number = Date.now() + DEFAULT_VERIFY_WAIT_MS,
): Promise<ClaudeHookOutput | null> {
  const event = input.hook_event_name;
  switch (event) {
    case 'PreToolUse': {
      const c = await client();
      const s = await c.status(agentId);
      // A new tool call: its human has answered whatever its CLI was waiting for.
      if (s.waitingForHuman) await c.signal(agentId, 'humanWait', { phase: 'end' });
      if (s.sessionEndsAt) await c.signal(agentId, 'session', { phase: 'resume' }); // its session goes on after all
      const tool = input.tool_name || 'unknown-tool';
      const allowed = s.toolAllowlist ?? [];
      if (allowed.length > 0 && !allowed.includes(tool)) {
        // A delegated child's contract: the supervisor enforces the allowlist, the child cannot escape it.
        return {
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'deny',
            permissionDecisionReason: `warden: tool ${tool} is outside agent ${agentId}'s allowlist (${allowed.join(', ')}); use one of those.`,
          },
        };
      }
      if (!s.paused) return null;
      return {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason:
            `warden: agent ${agentId} is paused (${s.pauseReason ?? s.state}); no tool calls until a human resumes it ` +
            `(warden resume ${agentId}). Stop here, say where you are, and wait.`,
        },
      };
    }

    case 'PostToolUse':
    case 'PostToolUseFailure': {
      const name = input.tool_name || 'unknown-tool';
      const failed = event === 'PostToolUseFailure';
      const ok = failed
        ? false
        : agent === 'codex'
          ? ((await codexToolOutcome(input.transcript_path, input.tool_use_id)) ?? true) // its tool_response is the output only
          : toolSucceeded(input.tool_response);
      const turn: TurnInput = {
        id: turnId(agent, input, 'tool', input.tool_use_id, name, input.tool_input),
        text: '',
        toolCalls: [
          {
            name,
            args: toolArgs(name, input.tool_input),
            result: bounded(failed ? (input.error ?? 'tool call failed') : input.tool_response),
            ok,
          },
        ],
      };
      const reply = await (await client()).reportTurn(agentId, turn);
      const context = whisperContext(agentId, reply.whispers, reply);
      const halt = haltFor(agentId, reply);
      if (!context && halt.continue !== false) return null;
      return {
        ...halt,
        ...(context ? { hookSpecificOutput: { hookEventName: event, additionalContext: context } } : {}),
      };
    }

    case 'PreCompact':
    case 'PostCompact': {
      // Claude Code compacts its own context: `compacting` until it ends (or the agent's next turn).
      const trigger = typeof input.trigger === 'string' && input.trigger ? input.trigger.slice(0, 64) : undefined;
      await (await client()).signal(agentId, 'compaction', { phase: event === 'PreCompact' ? 'start' : 'end', ...(trigger ? { trigger } : {}) });
      return null;
    }

    case 'UserPromptSubmit':
    case 'SessionStart': {
      // A prompt is the user's, not the agent's: it becomes a turn only to carry pending whispers (or a handoff).
      const c = await client();
      const s = await c.status(agentId);
      if (s.waitingForHuman) await c.signal(agentId, 'humanWait', { phase: 'end' }); // its human answered
      if (s.sessionEndsAt) await c.signal(agentId, 'session', { phase: 'resume' }); // a resumed session (`claude --resume`)
      // warden's compaction waits for its handoff to reach the agent: a prompt carries it too.
      const handoffDue = s.lastCompaction?.done === false;
      if (s.pendingWhispers === 0 && !handoffDue) return null;
      const what = truncate(event === 'UserPromptSubmit' ? `User prompt: ${input.prompt ?? ''}` : `Session ${input.source ?? 'start'}.`, MAX_TURN_TEXT);
      const reply = await c.reportTurn(agentId, {
        id: turnId(agent, input, event === 'UserPromptSubmit' ? 'prompt' : 'session', input.prompt_id ?? input.turn_id, input.prompt, input.source, Date.now()),
        text: what,
      });
      const context = whisperContext(agentId, reply.whispers, reply.compact ? { ...reply, paused: false } : undefined);
      return context ? { hookSpecificOutput: { hookEventName: event, additionalContext: context } } : null;
    }

    case 'Stop': {
      // Claude's transcript names its last message (the key of the turn); codex's stop has a turn_id,
      // the same for a stop that was blocked and the one after it, so its id is a hash of the lot.
      const fromTranscript = agent === 'claude' ? await lastAssistantFromTranscript(input.transcript_path) : null;
      const text = truncate(input.last_assistant_message ?? fromTranscript?.text ?? '', MAX_TURN_TEXT);
      const id = turnId(agent, input, 'stop', fromTranscript?.uuid, input.prompt_id ?? input.turn_id, input.stop_hook_active, text);
      const c = await client();
      const s = await c.status(agentId);
      // An agent with a definition of done (verify / protect): its stop is a done-claim (stop.ts).
      if (s.checksDone === true && (s.state === 'running' || s.state === 'spawning')) return claimAtStop(agentId, input, id, text, c, waitUntil, warn);
      if (input.stop_hook_active && s.pendingWhispers > 0) {
        // This stop was already blocked once: never block again. Pending whispers stay queued
        // for the next prompt or tool call rather than being taken by a report that cannot deliver them.
        warn(`${s.pendingWhispers} whisper(s) stay queued for agent ${agentId}: this stop was already continued once by a hook`);
        return null;
      }
      const reply = await c.reportTurn(agentId, { id, text });
      if (!reply.whispers.length && !reply.compact) return null;
      const context = whisperContext(agentId, reply.whispers, reply.compact ? { ...reply, paused: false } : undefined)!;
      if (input.stop_hook_active) return { systemMessage: context }; // a race: shown to the human, at least
      return { decision: 'block', reason: `${context}\nAct on this before you finish.` };
    }

    case 'SessionEnd': {
      // Its session ended (Claude Code exits, /clear, logout): the agent ends `done` after
      // `supervisor.sessionEndGraceMs` unless the session resumes first (the same session id, so the same agent).
      const reason = typeof input.reason === 'string' && input.reason ? input.reason.slice(0, 64) : undefined;
      await (await client()).signal(agentId, 'session', { phase: 'end', ...(reason ? { reason } : {}) });
      return null;
    }

    case 'Notification':
    case 'PermissionRequest': {
      // Its CLI waits for its human (a permission prompt, an idle prompt): awaiting-input, with an alert.
      // A PermissionRequest answer is Codex's approval decision: warden gives none, the human decides.
      const wait = await humanWaitFromHook(agent, input);
      if (wait) await (await client()).signal(agentId, 'humanWait', wait);
      return null;
    }

    default:
      return null; // an event warden has nothing to do with
  }
}

/** One Claude Code hook event (see handleHook). */
export const handleClaudeHook = (
  input: ClaudeHookInput,
  agentId: string,
  client: () => Promise<HookClient>,
  warn?: (line: string) => void,
  waitUntil?: number,
) => handleHook('claude', input, agentId, client, warn, waitUntil);

/** One Codex hook event (see handleHook). */
export const handleCodexHook = (input: CodexHookInput, agentId: string, client: () => Promise<HookClient>, warn?: (line: string) => void, waitUntil?: number) =>
  handleHook('codex', input, agentId, client, warn, waitUntil);
