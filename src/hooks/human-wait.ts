/**
 * Waiting for a human, from the hooks: Claude Code's `Notification` (its `notification_type` says
 * which kind of prompt, not which tool is pending: that is read from the transcript) and Codex's
 * `PermissionRequest` (which names the tool itself). The result is the `humanWait` signal's payload.
 */
import { truncate } from '../domain/contract/limits.js';
import type { SignalPayload } from '../domain/contract/schemas.js';
import { type ClaudeHookInput, type HookAgent, tailLines, toolArgs } from './protocol.js';

/** At most this many characters of a reason (a tool's arguments can be long). */
export const MAX_WAIT_REASON = 200;

/** One line, printable, bounded: control characters and runs of whitespace become one space. */
export function sanitize(text: string, max = MAX_WAIT_REASON): string {
  return truncate(
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is removed
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
    max,
  );
}

/** A tool call as a human reads it: `Bash rm -rf build/`, `Edit {"file_path":"src/a.ts",…}`. */
export function describeTool(name: string, input: unknown): string {
  const args = toolArgs(name, input);
  return sanitize(args && args !== '{}' ? `${name} ${args}` : name);
}

/**
 * The tool call Claude Code is asking permission for: the last `tool_use` of the transcript's last
 * assistant entries (read from its bounded tail; `null` when there is none or the file cannot be read).
 */
export async function pendingToolFromTranscript(path: string | undefined): Promise<{ name: string; input: unknown; id?: string } | null> {
  const lines = path ? await tailLines(path) : null;
  if (!lines) return null;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith('{') || !line.includes('"tool_use"')) continue;
    let entry: { type?: string; message?: { role?: string; content?: unknown } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry.type !== 'assistant' || entry.message?.role !== 'assistant' || !Array.isArray(entry.message.content)) continue;
    const uses = entry.message.content.filter((c: { type?: unknown; name?: unknown }) => c?.type === 'tool_use' && typeof c.name === 'string');
    const last = uses[uses.length - 1] as { name: string; input?: unknown; id?: unknown } | undefined;
    if (last) return { name: last.name, input: last.input, ...(typeof last.id === 'string' ? { id: last.id } : {}) };
  }
  return null;
}

type Kind = NonNullable<SignalPayload<'humanWait'>['kind']>;

/** Claude Code's notification types that mean its human must act (auth_success does not). */
function claudeKind(input: ClaudeHookInput): Kind | null {
  switch (input.notification_type) {
    case 'permission_prompt':
      return 'permission';
    case 'idle_prompt':
      return 'idle';
    case 'elicitation_dialog':
      return 'question';
    case undefined:
    case '':
      // Older versions send the message only.
      if (/permission/i.test(input.message ?? '')) return 'permission';
      if (/waiting for your input/i.test(input.message ?? '')) return 'idle';
      return null;
    default:
      return null;
  }
}

/**
 * The `humanWait` payload for a hook event, or `null` when it is not a wait for a human: Claude's
 * Notification (a permission prompt names the tool from the transcript), Codex's PermissionRequest.
 */
export async function humanWaitFromHook(agent: HookAgent, input: ClaudeHookInput): Promise<SignalPayload<'humanWait'> | null> {
  if (input.hook_event_name === 'PermissionRequest') {
    const tool = input.tool_name ? describeTool(input.tool_name, input.tool_input) : null;
    return { phase: 'start', kind: 'permission', reason: sanitize(tool ? `waiting for permission: ${tool}` : 'waiting for permission') };
  }
  if (input.hook_event_name !== 'Notification' || agent !== 'claude') return null;
  const kind = claudeKind(input);
  if (!kind) return null;
  const message = input.message ? sanitize(input.message) : '';
  if (kind === 'permission') {
    const tool = await pendingToolFromTranscript(input.transcript_path);
    const what = tool ? describeTool(tool.name, tool.input) : message;
    return { phase: 'start', kind, reason: sanitize(what ? `waiting for permission: ${what}` : 'waiting for permission') };
  }
  if (kind === 'idle') return { phase: 'start', kind, reason: sanitize(message ? `waiting for input: ${message}` : 'waiting for input') };
  return { phase: 'start', kind, reason: sanitize(message ? `waiting for an answer: ${message}` : 'waiting for an answer') };
}
