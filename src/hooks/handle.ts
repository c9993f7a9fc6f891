/** One hook event of a coding agent (Claude Code or Codex), answered with warden's help. The protocol: src/hooks/protocol.ts. */
import { AgentEndedError } from '../client/index.js';
import { MAX_TURN_COST_USD, MAX_TURN_TEXT, MAX_TURN_TOKENS, truncate } from '../domain/contract/limits.js';
import type { SignalPayload, TurnInput } from '../domain/contract/schemas.js';
import type { AgentStatus } from '../domain/contract/status.js';
import { SELF_CONTROL_TOOL } from '../domain/judgement/heuristic/self-control.js';
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
import { deniedTurn, stopFailureWait } from './api-error.js';
import { ownGuard, type OwnGuard } from './own-files.js';
import { mcpSelfControl, selfControlCall, type SelfControlHit } from './self-control.js';
import { treeFingerprint } from '../tree/fingerprint.js';
import { CODEX_SUBAGENT_TAIL_BYTES, SUBAGENT_TRANSCRIPT_MAX_BYTES, readCodexSubagentSpend, readSubagentSpend } from './subagent-spend.js';
import { sessionSpendAtTurn } from './session-spend.js';
import type { PriceTable } from './prices.js';
import { codexSpendAtTurn } from './codex-spend.js';
import { sayOnce } from './auto-start.js';
import { wardenHome } from './endpoint-file.js';
import { join } from 'node:path';
import type { TreeFingerprint } from '../domain/contract/schemas.js';

// ---------- the working tree ----------

/**
 * Tools that only read: their turns go without a fingerprint of the working tree (they cannot
 * change it, and the hook saves the git processes). Every other tool call, and every stop, carries one.
 */
const READ_ONLY_TOOLS = new Set(['Read', 'Grep', 'Glob', 'LS', 'WebFetch', 'WebSearch', 'TodoWrite', 'NotebookRead', 'BashOutput', 'TaskOutput']);

/** The working tree's fingerprint in the session's directory, started at once (it runs beside the hook's other work); null when not a git tree. */
function treeNow(input: CodexHookInput, own?: { cwd: string }): Promise<TreeFingerprint | null> {
  return treeFingerprint(input.cwd || own?.cwd || process.cwd());
}

/** warden's own files as the hook process has them, and the user's prices (read when a stop needs them). */
export interface OwnFiles {
  guard: () => OwnGuard;
  cwd: string;
  /** Where the session's spend state lives (session-spend.ts); default `$WARDEN_HOME/hook-spend`. */
  spendDir?: string;
  /** The user's `prices:` (their own config only), or undefined. */
  prices?: () => PriceTable | undefined;
}

/** The model the hook input names (Codex's do), or undefined. */
const modelOf = (input: { model?: unknown }): string | undefined => (typeof input.model === 'string' && input.model ? input.model.slice(0, 100) : undefined);

// ---------- a sub-agent's spend ----------

type SubagentSpendPayload = NonNullable<SignalPayload<'subagent'>['spend']>;

/**
 * What the stopped sub-agent spent, from its transcript (`agent_transcript_path`, checked and
 * bounded in subagent-spend.ts: Claude Code's summed, Codex's rollout totals); null, with the
 * reason on stderr, when it is not read.
 */
async function subagentSpendAtStop(
  agent: HookAgent,
  input: ClaudeHookInput,
  id: string,
  warn: (line: string) => void,
  prices?: PriceTable,
): Promise<SubagentSpendPayload | null> {
  const path = input.agent_transcript_path;
  if (typeof path !== 'string' || !path) return null; // an older CLI: no transcript named
  try {
    const spend =
      agent === 'claude'
        ? await readSubagentSpend(path, input.transcript_path, SUBAGENT_TRANSCRIPT_MAX_BYTES, prices)
        : await readCodexSubagentSpend(path, input.transcript_path, CODEX_SUBAGENT_TAIL_BYTES, prices, modelOf(input as { model?: unknown }));
    if (spend.partial)
      warn(
        agent === 'claude'
          ? `sub-agent ${id}: its transcript is longer than ${SUBAGENT_TRANSCRIPT_MAX_BYTES} bytes; counted that much of it`
          : `sub-agent ${id}: no token totals in the last ${CODEX_SUBAGENT_TAIL_BYTES} bytes of its rollout; nothing counted`,
      );
    return { tokensIn: spend.tokensIn, tokensOut: spend.tokensOut, costUsd: spend.costUsd, ...(spend.partial ? { partial: true } : {}) };
  } catch (err) {
    warn(`sub-agent ${id}: its spend is not counted: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  }
}

// ---------- the session's own spend ----------

/** Where a hooked session's spend state lives unless told otherwise: `$WARDEN_HOME/hook-spend` (this process's home). */
export const defaultSpendDir = () => join(wardenHome(), 'hook-spend');

/**
 * What the session's own model calls spent since its last counted turn, as the turn's tokens: read
 * incrementally from its transcript (`transcript_path`; transcript-increment.ts), Claude Code's
 * (session-spend.ts: each message's usage, priced from the user's `prices:`, prices.ts) or Codex's
 * rollout (codex-spend.ts: the growth of its cumulative totals). Nothing, with the reason on
 * stderr, when it is not read. With a cost budget and model calls whose cost is unknown (Claude
 * Code's without a price for their model; Codex's, which warden does not price), says once that
 * the cost budget cannot hold.
 */
async function ownSpendAtStop(
  agent: HookAgent,
  input: CodexHookInput,
  agentId: string,
  turn: string,
  s: AgentStatus,
  dir: string,
  warn: (line: string) => void,
  prices?: PriceTable,
): Promise<Pick<TurnInput, 'tokensIn' | 'tokensOut' | 'costUsd'>> {
  const path = input.transcript_path;
  if (typeof path !== 'string' || !path) return {};
  const cli = agent === 'claude' ? 'Claude Code' : 'Codex';
  try {
    const model = modelOf(input);
    const spend =
      agent === 'claude'
        ? await sessionSpendAtTurn(dir, agentId, path, turn, undefined, prices)
        : await codexSpendAtTurn(dir, agentId, path, turn, undefined, prices, model);
    if (spend.more) warn(`agent ${agentId}: its transcript grew by more than one read since the last turn; the rest counts at the next`);
    const unpriced = spend.unpriced ?? [];
    if (s.budgets?.costUsd?.limit != null && unpriced.length > 0) {
      const why = `${cli} writes no cost per model call; give the model's price under prices: in your own warden.yaml`;
      sayOnce(
        dir,
        agentId,
        `agent ${agentId}: cost budget cannot be enforced: no price for model ${unpriced.join(', ')} (${why}); its token budget is counted`,
        warn,
        'noprice',
      );
    }
    const cap = (n: number) => Math.min(MAX_TURN_TOKENS, n);
    return { tokensIn: cap(spend.tokensIn), tokensOut: cap(spend.tokensOut), costUsd: Math.min(MAX_TURN_COST_USD, spend.costUsd) };
  } catch (err) {
    warn(`agent ${agentId}: this turn's tokens are not counted: ${err instanceof Error ? err.message : String(err)}`);
    return {};
  }
}

// ---------- an aborted agent ----------

/** A human aborted the agent: why (its state reason, `aborted: <reason>`) and when; null for any other state. */
export function abortOf(s: Pick<AgentStatus, 'state' | 'stateReason' | 'transitions'>): { reason: string; at: string | null } | null {
  if (s.state !== 'failed') return null;
  const last = s.transitions.at(-1);
  if (last?.event !== 'abort') return null;
  return { reason: s.stateReason ?? last.cause, at: last.at ?? null };
}

/** What the session is told about its aborted agent. */
export function abortedText(agentId: string, a: { reason: string; at: string | null }): string {
  return (
    `warden: agent ${agentId} was aborted (${a.reason}${a.at ? `, at ${a.at}` : ''}): a human ended its task, so this session's tool calls are refused. ` +
    'Stop here and tell the human where you are. To go on under supervision, the human starts a new session (a new session is a new agent), ' +
    `or starts this agent again by hand (warden start ${agentId} …) when it was started by hand.`
  );
}

/**
 * The answer to any event of an aborted agent's session: its workflow has closed and stays closed
 * (nothing is reported, signalled or started again), tool calls are denied, a tool call already
 * made ends the turn, a prompt hears why; other events say nothing.
 */
export function abortedAnswer(event: string | undefined, agentId: string, a: { reason: string; at: string | null }): ClaudeHookOutput | null {
  const text = abortedText(agentId, a);
  switch (event) {
    case 'PreToolUse':
      return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: text } };
    case 'PostToolUse':
    case 'PostToolUseFailure':
      return { continue: false, stopReason: text };
    case 'UserPromptSubmit':
    case 'SessionStart':
      return { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
    default:
      return null;
  }
}

// ---------- an attempt on the agent's own controls ----------

/**
 * Deny a tool call that targets warden's controls of the agent itself (self-control.ts), and
 * record it in the agent's workflow as a turn whose tool call the judgement takes as
 * REWARD_HACKING evidence. The denial does not wait on the record: when it cannot be made, the
 * hook says so on stderr and denies all the same. Whispers the report takes go out with the reason.
 */
async function denySelfControl(
  agent: HookAgent,
  input: CodexHookInput,
  agentId: string,
  hit: SelfControlHit,
  client: () => Promise<HookClient>,
  warn: (line: string) => void,
): Promise<ClaudeHookOutput> {
  const tool = input.tool_name || 'unknown-tool';
  let context: string | undefined;
  try {
    const reply = await (await client()).reportTurn(agentId, {
      id: turnId(agent, input, 'self-control', input.tool_use_id, tool, input.tool_input),
      text: `The hook denied a ${tool} call that targets warden's controls of this agent itself (${hit.what}).`,
      toolCalls: [{ name: SELF_CONTROL_TOOL, args: toolArgs(tool, input.tool_input), result: `denied by warden's hook: ${hit.what}`, ok: false }],
    });
    context = whisperContext(agentId, reply.whispers);
  } catch (err) {
    warn(`denied a tool call on agent ${agentId}'s own controls (${hit.what}), but could not record it: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason:
        `warden: this tool call targets warden's controls of agent ${agentId} itself (${hit.what}). ` +
        "Your supervision is the human's: you do not dismiss, resume, unblock, stop or signal it yourself, " +
        "nor read warden's hook token, post hook events, stop warden's hook endpoint or edit the hooks that supervise you. " +
        'The attempt is recorded as REWARD_HACKING evidence. If a finding is wrong, say why in your reply and let the human decide.' +
        (context ? `\n${context}` : ''),
    },
  };
}

// ---------- the events ----------

/**
 * Handle one hook event of a coding agent (Claude Code or Codex): talk to warden, and return what
 * to print on stdout (or `null` for nothing). Errors propagate; the command decides whether they
 * are fatal. An agent a human aborted is the exception: its closed workflow answers every event
 * of the session (abortedAnswer), so the session does not go on unsupervised.
 *
 * `own`: warden's installation as the hook (or the endpoint) has it, and the session's directory,
 * for the tripwire on warden's own files, endpoint and process (default: this process's
 * environment and the event's `cwd`).
 */
export async function handleHook(
  agent: HookAgent,
  input: CodexHookInput,
  agentId: string,
  client: () => Promise<HookClient>,
  warn: (line: string) => void = () => {},
  waitUntil: number = Date.now() + DEFAULT_VERIFY_WAIT_MS,
  own?: OwnFiles,
): Promise<ClaudeHookOutput | null> {
  try {
    return await answer(agent, input, agentId, client, warn, waitUntil, own);
  } catch (err) {
    if (!(err instanceof AgentEndedError)) throw err;
    // Its workflow has closed: aborted by a human, the session is answered so; ended otherwise, as before.
    const s = await (await client()).status(agentId).catch(() => null);
    const aborted = s && abortOf(s);
    if (!aborted) throw err;
    return abortedAnswer(input.hook_event_name, agentId, aborted);
  }
}

async function answer(
  agent: HookAgent,
  input: CodexHookInput,
  agentId: string,
  client: () => Promise<HookClient>,
  warn: (line: string) => void,
  waitUntil: number,
  own?: OwnFiles,
): Promise<ClaudeHookOutput | null> {
  const event = input.hook_event_name;
  switch (event) {
    case 'PreToolUse': {
      // The agent going for warden's controls of itself (or for its files, endpoint, process): denied and recorded, whatever its state.
      let hit: SelfControlHit | null;
      try {
        hit = selfControlCall(input.tool_input, agentId, {
          guard: own ? own.guard() : ownGuard(),
          cwd: input.cwd || own?.cwd || process.cwd(),
          tool: input.tool_name ?? '',
        });
      } catch (err) {
        // The tripwire on warden's own files failing is no reason to leave the rest unchecked.
        warn(`could not check the tool call against warden's own files: ${err instanceof Error ? err.message : String(err)}`);
        hit = mcpSelfControl(input.tool_name ?? '', input.tool_input, agentId) ?? selfControlCall(input.tool_input, agentId);
      }
      if (hit) return denySelfControl(agent, input, agentId, hit, client, warn);
      const c = await client();
      const s = await c.status(agentId);
      const aborted = abortOf(s);
      if (aborted) return abortedAnswer(event, agentId, aborted);
      // A new tool call: its human has answered whatever its CLI was waiting for (or its model's rate limit passed).
      if (s.waitingForHuman || s.blockedByCli) await c.signal(agentId, 'humanWait', { phase: 'end' });
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
      const tree = READ_ONLY_TOOLS.has(name) ? Promise.resolve(null) : treeNow(input, own);
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
      const fingerprint = await tree;
      if (fingerprint) turn.tree = fingerprint;
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
      const aborted = abortOf(s);
      if (aborted) return abortedAnswer(event, agentId, aborted);
      if (s.waitingForHuman || s.blockedByCli) await c.signal(agentId, 'humanWait', { phase: 'end' }); // its human answered
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
      const tree = treeNow(input, own);
      const c = await client();
      const s = await c.status(agentId);
      if (abortOf(s)) return null; // nothing to report to; let it stop
      // What its model calls spent since the last counted turn (a stop that reports nothing leaves it for the next).
      const spent = () => ownSpendAtStop(agent, input, agentId, id, s, own?.spendDir ?? defaultSpendDir(), warn, own?.prices?.());
      // An agent with a definition of done (verify / protect): its stop is a done-claim (stop.ts).
      if (s.checksDone === true && (s.state === 'running' || s.state === 'spawning'))
        return claimAtStop(agentId, input, id, text, c, waitUntil, warn, await spent());
      if (input.stop_hook_active && s.pendingWhispers > 0) {
        // This stop was already blocked once: never block again. Pending whispers stay queued
        // for the next prompt or tool call rather than being taken by a report that cannot deliver them.
        warn(`${s.pendingWhispers} whisper(s) stay queued for agent ${agentId}: this stop was already continued once by a hook`);
        return null;
      }
      const [fingerprint, tokens] = await Promise.all([tree, spent()]);
      const reply = await c.reportTurn(agentId, { id, text, ...tokens, ...(fingerprint ? { tree: fingerprint } : {}) });
      if (!reply.whispers.length && !reply.compact) return null;
      const context = whisperContext(agentId, reply.whispers, reply.compact ? { ...reply, paused: false } : undefined)!;
      if (input.stop_hook_active) return { systemMessage: context }; // a race: shown to the human, at least
      return { decision: 'block', reason: `${context}\nAct on this before you finish.` };
    }

    case 'StopFailure': {
      // The turn ended on an API error: blocked (a rate limit), or awaiting its human (a login, a bill).
      if (agent !== 'claude') return null;
      await (await client()).signal(agentId, 'humanWait', stopFailureWait(input));
      return null;
    }

    case 'PermissionDenied': {
      // A denied tool call: a failed call with `denied: true`, for the heuristic. Its answer has room
      // only for `retry`, so whispers the report takes are shown to the human.
      const reply = await (await client()).reportTurn(agentId, deniedTurn(agent, input));
      const context = whisperContext(agentId, reply.whispers, reply);
      return context ? { systemMessage: context } : null;
    }

    case 'SubagentStart':
    case 'SubagentStop': {
      // Its CLI ran a sub-agent (Claude Code's Task tool or a custom agent, Codex's spawn_agent): listed
      // under the agent in its status; at its stop, what it spent (its own transcript) counts toward
      // the agent's budgets. A Codex sub-agent given more work stops again: its totals then count what grew.
      if (typeof input.agent_id !== 'string' || !input.agent_id) return null;
      const type = typeof input.agent_type === 'string' && input.agent_type ? input.agent_type.slice(0, 100) : undefined;
      const id = input.agent_id.slice(0, 200);
      const spend = event === 'SubagentStop' ? await subagentSpendAtStop(agent, input, id, warn, own?.prices?.()) : null;
      await (await client()).signal(agentId, 'subagent', {
        phase: event === 'SubagentStart' ? 'start' : 'stop',
        id,
        ...(type ? { type } : {}),
        ...(spend ? { spend } : {}),
      });
      return null;
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
