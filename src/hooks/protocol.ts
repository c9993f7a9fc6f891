/**
 * The hook protocols of Claude Code and Codex, and how warden answers them (`warden hook claude|codex`
 * is the command around this; src/hooks/handle.ts the event handler).
 *
 * `warden hook claude`: the bridge between Claude Code's hooks and warden.
 *
 * Claude Code runs this command at its hook events with the event as JSON on stdin. It reports
 * what the agent did to the agent's workflow (`agent-<id>`, external mode) and hands warden's
 * whispers back to Claude as context it reads:
 *
 *  - PostToolUse / PostToolUseFailure: report the tool call as a turn; the whispers in the reply
 *    go back as `hookSpecificOutput.additionalContext`. A reply that says stop or interrupt
 *    ends Claude's turn (`continue: false`).
 *  - UserPromptSubmit / SessionStart: when whispers are pending, report the boundary as a turn
 *    and deliver them as `additionalContext` before Claude answers.
 *  - PreToolUse: ask warden (the `status` query, no turn) whether the agent is paused; if it is,
 *    deny the tool call with the pause reason. A tool call that targets warden's controls of the
 *    agent itself (self-control.ts) is denied and recorded as REWARD_HACKING evidence.
 *  - PreCompact / PostCompact: Claude Code compacts its own context (`/compact`, or automatically
 *    when the window is full): the `compaction` signal makes the agent `compacting` until the
 *    compaction ends (or its next turn arrives), so the roster tells summarising from thinking.
 *  - StopFailure: the turn ended on an API error (api-error.ts): a rate limit, an overloaded model or a
 *    server error makes the agent `blocked` with the reason; any other error (authentication,
 *    billing, …) makes it await its human, with one alert. Its next tool call, prompt or turn ends either.
 *  - PermissionDenied: a tool call its CLI denied (api-error.ts): reported as a failed call with
 *    `denied: true`; the same call denied three times is SPIRALING.
 *  - SubagentStart / SubagentStop: the `subagent` signal: the sub-agent (its id and type) is listed
 *    under the agent in its status, running until it stops. At its stop, what it spent (summed
 *    from its own transcript, `agent_transcript_path`, subagent-spend.ts) counts toward the budgets.
 *  - SessionEnd: the `session` signal (`end`): the agent ends `done` after `supervisor.sessionEndGraceMs`
 *    (10 minutes) unless a turn, heartbeat or resumed session (SessionStart, a prompt, a tool call)
 *    comes first. Codex sends it too (reason `other`) when `codex exec` exits.
 *  - Stop: report Claude's final text; when whispers come back, block the stop
 *    (`decision: "block"`) with the whispers as the reason, so Claude carries on with them. A stop
 *    that a hook already blocked once (`stop_hook_active`) is never blocked again. For an agent
 *    with `verify` or `protect` the stop is a done-claim instead (src/hooks/stop.ts): a failed
 *    check blocks it with the [VERIFY] whisper as the reason. The turn carries what the session's
 *    own model calls spent since the last counted turn, read from its transcript (`transcript_path`,
 *    session-spend.ts), so its token budget holds.
 *
 * `warden hook codex`: the same bridge for the Codex CLI's hooks (0.169: `[hooks]` in config.toml or
 * hooks.json), whose events and answers follow Claude Code's. The differences, all measured with
 * the real binary:
 *
 *  - PostToolUse carries the command's output only (`tool_response` is a string, no exit status),
 *    and there is no PostToolUseFailure: whether the call failed is read from the session's
 *    rollout (`transcript_path`), where codex has already written the finished item with its
 *    `exit_code` and `status`.
 *  - `additionalContext` reaches the model as a developer message; a Stop blocked with a reason
 *    reaches it as a user message. PreToolUse `deny` answers the model with
 *    "Command blocked by PreToolUse hook: <reason>".
 *  - `continue: false` after a tool call does not end codex's turn: the model gets the
 *    `stopReason` in place of the tool's output. The PreToolUse pause check refuses whatever comes next.
 *  - PreCompact / PostCompact come as in Claude Code (codex compacts on its own when a session
 *    passes `model_auto_compact_token_limit`, trigger `auto`), and are handled the same way.
 *  - SessionEnd comes when `codex exec` exits (`codex exec resume` continues the same session),
 *    always with reason `other`, and is handled as Claude Code's. Codex runs it for 3 s at most.
 *  - Stop: its `transcript_path` is the session's rollout, where codex has already written the
 *    turn's last `token_count` (cumulative totals): the turn carries their growth (codex-spend.ts).
 *
 * When warden compacts the agent (the ladder's last resort, a reply with `compact`), a hook cannot
 * give Claude or Codex a fresh context: the handoff is handed over as context, like a whisper.
 *
 * The agent must never suffer for its supervisor: when Temporal is unreachable, the agent is
 * unknown or ended, or anything else goes wrong, the hook writes one line to stderr and exits 0
 * with no output, so the agent goes on unsupervised. `--strict` turns that off (the error exits
 * non-zero, as in every other verb). An agent a human aborted is not let go so: its closed
 * workflow stays closed and the hook answers for it (handle.ts, abortedAnswer): tool calls are
 * denied with the abort reason.
 */
import { createHash } from 'node:crypto';
import type { WardenClient } from '../client/index.js';
import { z } from 'zod';
import { MAX_TOOL_FIELD, truncate } from '../domain/contract/limits.js';
import { describeZodError } from '../domain/contract/schemas.js';
import type { Whisper } from '../domain/contract/schemas.js';
import type { ReportTurnResult } from '../domain/contract/status.js';
import { TRANSCRIPT_TAIL_BYTES, readFileTail } from './bounded-read.js';

export interface ClaudeHookInput {
  hook_event_name?: string;
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  prompt_id?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_response?: unknown;
  tool_use_id?: string;
  /** PostToolUseFailure: the error text; StopFailure: the API error's kind (`rate_limit`, `authentication_failed`, …). */
  error?: string;
  /** StopFailure: more about the API error. */
  error_details?: string;
  is_interrupt?: boolean;
  /** UserPromptSubmit */
  prompt?: string;
  /** SessionStart */
  source?: string;
  /** SessionEnd: `clear`, `logout`, `prompt_input_exit`, `other`, …; PermissionDenied: why the call was denied. */
  reason?: string;
  /** Stop */
  stop_hook_active?: boolean;
  /** PreCompact / PostCompact: `manual` (/compact) or `auto` (a full context window). */
  trigger?: string;
  last_assistant_message?: string;
  /** Notification: `permission_prompt`, `idle_prompt`, `elicitation_dialog`, `auth_success`, … */
  notification_type?: string;
  /** Notification: what Claude Code shows its human ("Claude needs your permission to use Bash"). */
  message?: string;
  /** SubagentStart / SubagentStop: the sub-agent's id and type (`Explore`, `general-purpose`, a custom agent's name). */
  agent_id?: string;
  agent_type?: string;
  /** SubagentStop: the sub-agent's own transcript (JSONL), in a folder beside the session's `transcript_path`. */
  agent_transcript_path?: string;
}

/** The fields of Codex's hook input that warden reads beyond Claude's (its names are Claude's). */
export interface CodexHookInput extends ClaudeHookInput {
  /** The codex turn the event belongs to (every event but SessionStart). */
  turn_id?: string;
  model?: string;
  permission_mode?: string;
}

/** The fields of a hook event that are text, when present (the rest warden reads as any JSON). */
const TEXT_FIELDS = [
  'hook_event_name',
  'session_id',
  'transcript_path',
  'cwd',
  'prompt_id',
  'tool_name',
  'tool_use_id',
  'error',
  'error_details',
  'prompt',
  'source',
  'reason',
  'trigger',
  'last_assistant_message',
  'notification_type',
  'message',
  'agent_id',
  'agent_type',
  'agent_transcript_path',
  'turn_id',
  'model',
  'permission_mode',
] as const;

const HookInputSchema = z
  .object({
    ...Object.fromEntries(TEXT_FIELDS.map((f) => [f, z.string({ error: (i) => `must be a string, not ${jsonType(i.input)}` }).optional()])),
    is_interrupt: z.boolean({ error: (i) => `must be true or false, not ${jsonType(i.input)}` }).optional(),
    stop_hook_active: z.boolean({ error: (i) => `must be true or false, not ${jsonType(i.input)}` }).optional(),
  })
  .passthrough();

function jsonType(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  return Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * A hook event as warden reads it: a JSON object whose text fields (session_id, cwd, …) are strings
 * and whose flags are booleans when present; anything else is an Error naming the field. A field
 * that is null is taken as absent.
 */
export function checkHookInput(raw: unknown): CodexHookInput {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('the hook input on stdin is not a JSON object');
  const obj = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null));
  const r = HookInputSchema.safeParse(obj);
  if (!r.success) throw new Error(`the hook input is not a hook event: ${describeZodError(r.error)}`);
  return obj as CodexHookInput;
}

/** The coding agents whose hooks warden bridges. */
export type HookAgent = 'claude' | 'codex';

/** What the hook prints on stdout (nothing at all when there is nothing to say); Codex reads the same shape. */
export interface ClaudeHookOutput {
  continue?: boolean;
  stopReason?: string;
  decision?: 'block';
  reason?: string;
  systemMessage?: string;
  hookSpecificOutput?: {
    hookEventName: string;
    additionalContext?: string;
    permissionDecision?: 'allow' | 'deny' | 'ask';
    permissionDecisionReason?: string;
  };
}

export type CodexHookOutput = ClaudeHookOutput;

/** The narrow slice of the client the hook uses (the real WardenClient in production). */
export type HookClient = Pick<WardenClient, 'reportTurn' | 'status' | 'signal'>;

// ---------- rendering ----------

const tag = (w: Whisper) => (w.type === 'STEERING' ? 'steering' : w.type);

/** Whispers as the lines Claude reads: `[CORRECTION] …`, `[steering] …`. */
export function renderWhispers(whispers: readonly Whisper[]): string {
  return whispers.map((w) => `[${tag(w)}] ${w.text}`).join('\n');
}

export function whisperContext(agentId: string, whispers: readonly Whisper[], reply?: ReportTurnResult): string | undefined {
  const lines: string[] = [];
  if (whispers.length) lines.push(`warden, the supervisor of this session (agent ${agentId}), says:`, renderWhispers(whispers));
  if (reply?.paused && !reply.stop && !reply.interrupt)
    lines.push(`[warden] You are paused (state ${reply.state}): tool calls are refused until a human resumes you. Say where you are and wait.`);
  if (reply?.compact)
    lines.push(
      `warden, the supervisor of this session (agent ${agentId}), compacts your context. Treat everything before this as superseded by:`,
      reply.compact.handoff,
    );
  return lines.length ? lines.join('\n') : undefined;
}

/** `continue: false` when the reply asks the agent to stop or abandon its turn. */
export function haltFor(agentId: string, reply: ReportTurnResult): Pick<ClaudeHookOutput, 'continue' | 'stopReason'> {
  if (reply.stop) return { continue: false, stopReason: `warden: a stop was requested for agent ${agentId}; ending here.` };
  if (reply.interrupt) return { continue: false, stopReason: `warden: agent ${agentId} was interrupted; waiting for input.` };
  return {};
}

// ---------- turn ids and contents ----------

const hash = (...parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 20);

/** A stable turn id (at most 200 characters): the same hook event always reports the same id. */
export function turnId(agent: HookAgent, input: ClaudeHookInput, kind: string, key: string | undefined, ...extra: unknown[]): string {
  const session = input.session_id ?? 'nosession';
  const plain = key && /^[\w.:-]{1,100}$/.test(key) && session.length <= 80 ? `${agent}-${session}-${kind}-${key}` : undefined;
  return plain ?? `${agent}-${hash(session, kind, key, ...extra)}`;
}

/** As text, cut to `max` here already: a tool's output can be megabytes, an update payload cannot. */
export function bounded(value: unknown, max = MAX_TOOL_FIELD): string | undefined {
  if (value === undefined) return undefined;
  return truncate(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)), max);
}

/** The tool call's arguments: Bash by its command (its description varies between tries), others as given. */
export function toolArgs(name: string, toolInput: unknown): string | undefined {
  const command = (toolInput as { command?: unknown } | null)?.command;
  return bounded(name === 'Bash' && typeof command === 'string' ? command : toolInput);
}

/** Whether a PostToolUse response reports a failure (PostToolUseFailure always does). */
export function toolSucceeded(response: unknown): boolean {
  if (response === null || typeof response !== 'object') return true;
  const r = response as Record<string, unknown>;
  if (r.is_error === true || r.isError === true || r.success === false || r.interrupted === true) return false;
  if (typeof r.error === 'string' && r.error) return false;
  if (typeof r.exitCode === 'number' && r.exitCode !== 0) return false;
  return true;
}

/**
 * The last assistant message with text in a Claude Code transcript (JSONL), read from its tail
 * (at most TRANSCRIPT_TAIL_BYTES; `null` when the path is not a readable regular file).
 */
export async function lastAssistantFromTranscript(path: string | undefined): Promise<{ text: string; uuid?: string } | null> {
  const lines = path ? await tailLines(path) : null;
  if (!lines) return null;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith('{') || !line.includes('"assistant"')) continue;
    let entry: { type?: string; uuid?: string; message?: { role?: string; content?: unknown } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry.type !== 'assistant' || entry.message?.role !== 'assistant') continue;
    const content = entry.message.content;
    const text =
      typeof content === 'string'
        ? content
        : Array.isArray(content)
          ? content
              .filter((c: { type?: string; text?: unknown }) => c?.type === 'text' && typeof c.text === 'string')
              .map((c: { text: string }) => c.text)
              .join('\n')
          : '';
    if (text.trim()) return { text, uuid: entry.uuid };
  }
  return null;
}

/**
 * The last `limit` bytes of a regular file as lines (`null` when it cannot be read, or is not a
 * regular file: a FIFO or a device is never waited on, see bounded-read.ts).
 */
export async function tailLines(path: string, limit = TRANSCRIPT_TAIL_BYTES): Promise<string[] | null> {
  try {
    return (await readFileTail(path, limit)).toString('utf8').split('\n');
  } catch {
    return null;
  }
}

/**
 * Whether a codex tool call succeeded, from the session's rollout (JSONL): the `item_completed`
 * event of the item with the call's id, which codex writes before it runs PostToolUse. `undefined`
 * when the rollout does not say (then the call counts as succeeded).
 */
export async function codexToolOutcome(path: string | undefined, toolUseId: string | undefined): Promise<boolean | undefined> {
  if (!path || !toolUseId) return undefined;
  const lines = await tailLines(path);
  if (!lines) return undefined;
  const needle = JSON.stringify(toolUseId);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.includes('"item_completed"') || !line.includes(needle)) continue;
    let entry: { payload?: { type?: string; item?: { id?: unknown; status?: unknown; exit_code?: unknown } } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const item = entry.payload?.type === 'item_completed' ? entry.payload.item : undefined;
    if (!item || item.id !== toolUseId) continue;
    if (typeof item.exit_code === 'number') return item.exit_code === 0;
    if (item.status === 'failed' || item.status === 'declined') return false;
    if (item.status === 'completed') return true;
    return undefined;
  }
  return undefined;
}
