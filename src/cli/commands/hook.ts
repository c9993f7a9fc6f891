/**
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
 *    deny the tool call with the pause reason.
 *  - Stop: report Claude's final text; when whispers come back, block the stop
 *    (`decision: "block"`) with the whispers as the reason, so Claude carries on with them. A stop
 *    that a hook already blocked once (`stop_hook_active`) is never blocked again.
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
 *
 * The agent must never suffer for its supervisor: when Temporal is unreachable, the agent is
 * unknown or ended, or anything else goes wrong, the hook writes one line to stderr and exits 0
 * with no output, so the agent goes on unsupervised. `--strict` turns that off (the error exits
 * non-zero, as in every other verb).
 */
import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { WardenClient } from '../../client/index.js';
import { connectionSettings } from '../../config/connection.js';
import { MAX_TOOL_FIELD, MAX_TURN_TEXT, truncate } from '../../domain/limits.js';
import type { TurnInput, Whisper } from '../../domain/schemas.js';
import type { ReportTurnResult } from '../../domain/status.js';
import { globals } from '../context.js';
import { UsageError } from '../exit.js';
import { readStdin } from '../output.js';

/** The fields of Claude Code's hook input that warden reads (it sends more). */
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
  /** PostToolUseFailure */
  error?: string;
  is_interrupt?: boolean;
  /** UserPromptSubmit */
  prompt?: string;
  /** SessionStart */
  source?: string;
  /** Stop */
  stop_hook_active?: boolean;
  last_assistant_message?: string;
}

/** The fields of Codex's hook input that warden reads beyond Claude's (its names are Claude's). */
export interface CodexHookInput extends ClaudeHookInput {
  /** The codex turn the event belongs to (every event but SessionStart). */
  turn_id?: string;
  model?: string;
  permission_mode?: string;
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
export type HookClient = Pick<WardenClient, 'reportTurn' | 'status'>;

const DEFAULT_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 3_000;

// ---------- rendering ----------

const tag = (w: Whisper) => (w.type === 'STEERING' ? 'steering' : w.type);

/** Whispers as the lines Claude reads: `[CORRECTION] …`, `[steering] …`. */
export function renderWhispers(whispers: readonly Whisper[]): string {
  return whispers.map((w) => `[${tag(w)}] ${w.text}`).join('\n');
}

function whisperContext(agentId: string, whispers: readonly Whisper[], reply?: ReportTurnResult): string | undefined {
  const lines: string[] = [];
  if (whispers.length) lines.push(`warden, the supervisor of this session (agent ${agentId}), says:`, renderWhispers(whispers));
  if (reply?.paused && !reply.stop && !reply.interrupt)
    lines.push(`[warden] You are paused (state ${reply.state}): tool calls are refused until a human resumes you. Say where you are and wait.`);
  return lines.length ? lines.join('\n') : undefined;
}

/** `continue: false` when the reply asks the agent to stop or abandon its turn. */
function haltFor(agentId: string, reply: ReportTurnResult): Pick<ClaudeHookOutput, 'continue' | 'stopReason'> {
  if (reply.stop) return { continue: false, stopReason: `warden: a stop was requested for agent ${agentId}; ending here.` };
  if (reply.interrupt) return { continue: false, stopReason: `warden: agent ${agentId} was interrupted; waiting for input.` };
  return {};
}

// ---------- turn ids and contents ----------

const hash = (...parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 20);

/** A stable turn id (at most 200 characters): the same hook event always reports the same id. */
function turnId(agent: HookAgent, input: ClaudeHookInput, kind: string, key: string | undefined, ...extra: unknown[]): string {
  const session = input.session_id ?? 'nosession';
  const plain = key && /^[\w.:-]{1,100}$/.test(key) && session.length <= 80 ? `${agent}-${session}-${kind}-${key}` : undefined;
  return plain ?? `${agent}-${hash(session, kind, key, ...extra)}`;
}

/** As text, cut to `max` here already: a tool's output can be megabytes, an update payload cannot. */
function bounded(value: unknown, max = MAX_TOOL_FIELD): string | undefined {
  if (value === undefined) return undefined;
  return truncate(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)), max);
}

/** The tool call's arguments: Bash by its command (its description varies between tries), others as given. */
function toolArgs(name: string, toolInput: unknown): string | undefined {
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

/** The last assistant message with text in a Claude Code transcript (JSONL), read from its tail. */
export function lastAssistantFromTranscript(path: string | undefined): { text: string; uuid?: string } | null {
  const lines = path ? tailLines(path) : null;
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

/** The last `limit` bytes of a file as lines (`null` when it cannot be read). */
function tailLines(path: string, limit = 2 * 1024 * 1024): string[] | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const len = Math.min(size, limit);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf.toString('utf8').split('\n');
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Whether a codex tool call succeeded, from the session's rollout (JSONL): the `item_completed`
 * event of the item with the call's id, which codex writes before it runs PostToolUse. `undefined`
 * when the rollout does not say (then the call counts as succeeded).
 */
export function codexToolOutcome(path: string | undefined, toolUseId: string | undefined): boolean | undefined {
  if (!path || !toolUseId) return undefined;
  const lines = tailLines(path);
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
): Promise<ClaudeHookOutput | null> {
  const event = input.hook_event_name;
  switch (event) {
    case 'PreToolUse': {
      const s = await (await client()).status(agentId);
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
          ? (codexToolOutcome(input.transcript_path, input.tool_use_id) ?? true) // its tool_response is the output only
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

    case 'UserPromptSubmit':
    case 'SessionStart': {
      // A prompt is the user's, not the agent's: it becomes a turn only to carry pending whispers.
      const c = await client();
      const s = await c.status(agentId);
      if (s.pendingWhispers === 0) return null;
      const what = truncate(event === 'UserPromptSubmit' ? `User prompt: ${input.prompt ?? ''}` : `Session ${input.source ?? 'start'}.`, MAX_TURN_TEXT);
      const reply = await c.reportTurn(agentId, {
        id: turnId(agent, input, event === 'UserPromptSubmit' ? 'prompt' : 'session', input.prompt_id ?? input.turn_id, input.prompt, input.source, Date.now()),
        text: what,
      });
      const context = whisperContext(agentId, reply.whispers);
      return context ? { hookSpecificOutput: { hookEventName: event, additionalContext: context } } : null;
    }

    case 'Stop': {
      // Claude's transcript names its last message (the key of the turn); codex's stop has a turn_id,
      // the same for a stop that was blocked and the one after it, so its id is a hash of the lot.
      const fromTranscript = agent === 'claude' ? lastAssistantFromTranscript(input.transcript_path) : null;
      const text = truncate(input.last_assistant_message ?? fromTranscript?.text ?? '', MAX_TURN_TEXT);
      const c = await client();
      if (input.stop_hook_active) {
        // This stop was already blocked once: never block again. Pending whispers stay queued
        // for the next prompt or tool call rather than being taken by a report that cannot deliver them.
        const s = await c.status(agentId);
        if (s.pendingWhispers > 0) {
          warn(`${s.pendingWhispers} whisper(s) stay queued for agent ${agentId}: this stop was already continued once by a hook`);
          return null;
        }
      }
      const reply = await c.reportTurn(agentId, {
        id: turnId(agent, input, 'stop', fromTranscript?.uuid, input.prompt_id ?? input.turn_id, input.stop_hook_active, text),
        text,
      });
      if (!reply.whispers.length) return null;
      const context = whisperContext(agentId, reply.whispers)!;
      if (input.stop_hook_active) return { systemMessage: context }; // a race: shown to the human, at least
      return { decision: 'block', reason: `${context}\nAct on this before you finish.` };
    }

    default:
      return null; // an event warden has nothing to do with
  }
}

/** One Claude Code hook event (see handleHook). */
export const handleClaudeHook = (input: ClaudeHookInput, agentId: string, client: () => Promise<HookClient>, warn?: (line: string) => void) =>
  handleHook('claude', input, agentId, client, warn);

/** One Codex hook event (see handleHook). */
export const handleCodexHook = (input: CodexHookInput, agentId: string, client: () => Promise<HookClient>, warn?: (line: string) => void) =>
  handleHook('codex', input, agentId, client, warn);

// ---------- the command ----------

interface HookOptions {
  agent?: string;
  strict?: boolean;
  timeout: string;
}

async function connect(cmd: Command, timeoutMs: number): Promise<WardenClient> {
  const g = globals(cmd);
  const settings = connectionSettings({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue });
  let connection: Connection;
  try {
    connection = await Connection.connect({
      ...settings.connectionOptions,
      connectTimeout: Math.min(CONNECT_TIMEOUT_MS, Math.ceil(timeoutMs / 2)), // so its own, clearer error comes first
    } as Parameters<typeof Connection.connect>[0]);
  } catch (err) {
    throw new Error(`cannot reach Temporal at ${settings.connectionOptions.address} (${err instanceof Error ? err.message : String(err)})`);
  }
  return new WardenClient(new Client({ connection, namespace: settings.namespace }), settings.taskQueue, connection);
}

/** The action of `warden hook <agent>`: stdin → handleHook → stdout, never in the agent's way unless --strict. */
function bridge(agent: HookAgent) {
  return async (o: HookOptions, cmd: Command): Promise<void> => {
    const strict = Boolean(o.strict);
    const timeoutMs = Number(o.timeout);
    const warn = (line: string) => process.stderr.write(`warden hook: ${line}\n`);
    const conn: { client: WardenClient | null } = { client: null };
    try {
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError(`--timeout must be a positive number of milliseconds, not ${o.timeout}`);
      const agentId = o.agent ?? process.env.WARDEN_AGENT_ID;
      if (!agentId) throw new UsageError('no agent: pass --agent <id> or set WARDEN_AGENT_ID');
      const raw = await readStdin();
      let input: CodexHookInput;
      try {
        input = JSON.parse(raw) as CodexHookInput;
      } catch (err) {
        throw new UsageError(`the hook input on stdin is not JSON: ${(err as Error).message}`);
      }
      if (!input || typeof input !== 'object') throw new UsageError('the hook input on stdin is not a JSON object');

      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer from warden within ${timeoutMs} ms (is a worker running?)`)), timeoutMs);
      });
      const work = handleHook(agent, input, agentId, async () => (conn.client ??= await connect(cmd, timeoutMs)), warn);
      work.catch(() => {}); // the deadline may win; the loser's rejection is not news
      let out: ClaudeHookOutput | null;
      try {
        out = await Promise.race([work, deadline]);
      } finally {
        clearTimeout(timer);
      }
      if (out) process.stdout.write(`${JSON.stringify(out)}\n`);
    } catch (err) {
      if (strict) throw err;
      warn(`${err instanceof Error ? err.message : String(err)} — continuing without supervision`);
    } finally {
      // Never wait on a connection that hangs: the process exits right after this (see main.ts).
      void conn.client?.close().catch(() => {});
    }
  };
}

function bridgeCommand(hook: Command, agent: HookAgent, what: string, help: string): void {
  hook
    .command(agent)
    .description(`a ${what} hook: reads the hook event (JSON) on stdin, reports to warden, prints the hook answer`)
    .option('--agent <id>', 'the supervised agent (default $WARDEN_AGENT_ID)')
    .option('--strict', 'fail when warden cannot be reached or the agent is unknown (default: warn on stderr, exit 0, say nothing)')
    .option('--timeout <ms>', 'give up on warden after this long (then the same as unreachable)', String(DEFAULT_TIMEOUT_MS))
    .addHelpText('after', help)
    .action(bridge(agent));
}

export function register(program: Command): void {
  const hook = program
    .command('hook')
    .description("bridges for coding agents' hooks: report their turns to warden and hand them its whispers");

  bridgeCommand(
    hook,
    'claude',
    'Claude Code',
    `
Events: PreToolUse (deny tool calls while the agent is paused), PostToolUse and PostToolUseFailure
(report the call as a turn, deliver whispers), UserPromptSubmit and SessionStart (deliver pending
whispers), Stop (report the final text; block the stop once to deliver whispers).
Wire it in .claude/settings.json, for example:
  {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command",
     "command": "warden hook claude --agent fixer"}]}], ...}}
Start the agent first: warden start fixer --task "…"`,
  );

  bridgeCommand(
    hook,
    'codex',
    'Codex CLI',
    `
Events: PreToolUse (deny tool calls while the agent is paused), PostToolUse (report the call as a
turn, deliver whispers), UserPromptSubmit and SessionStart (deliver pending whispers), Stop (report
the final message; block the stop once to deliver whispers).
Wire it in $CODEX_HOME/config.toml (or .codex/config.toml of a trusted project), for example:
  [[hooks.PostToolUse]]
  matcher = "*"
  [[hooks.PostToolUse.hooks]]
  type = "command"
  command = "warden hook codex --agent fixer"
Codex runs a hook only once it is trusted (/hooks in the TUI), or with --dangerously-bypass-hook-trust.
Start the agent first: warden start fixer --task "…"`,
  );
}
