/**
 * The `codex` driver: warden runs a real Codex agent, one `codex exec` per turn.
 *
 * - Turn 1: `codex exec --json --sandbox <sandbox> --skip-git-repo-check --color never [-m <model>]
 *   -C <workDir> -c … -`, the turn's input on stdin. Later turns continue the same session:
 *   `codex exec --json <same options> resume <sessionId> -`, the new input on stdin (codex 0.169:
 *   `resume` is a subcommand of `exec`; the options before it apply to the resumed session).
 * - CODEX_HOME is the agent's own `homeDir`: created on first use, the credentials (`auth.json`,
 *   `config.toml`) copied in once from `credentialsHome ?? $CODEX_HOME ?? ~/.codex` (a stamp file
 *   records it), and never deleted — it holds the session (rollout files, state db) that `resume`
 *   needs, across turns and worker restarts.
 * - Same quiet overrides as the codex evaluator (no analytics, OTel export, plugins, apps, hosted
 *   web search, `notify`, and the MCP servers of a copied config.toml switched off); the config's
 *   own `-c` overrides come last, so they can undo any of that.
 * - The turn is built from the JSONL events on stdout: `thread.started {thread_id}` (the session),
 *   `item.started|updated|completed {item}` with items `agent_message {text}`, `reasoning`,
 *   `command_execution {command, aggregated_output, exit_code, status}`, `file_change {changes}`,
 *   `mcp_tool_call`, `web_search`, `todo_list`, `error` (a warning); `turn.completed {usage}`;
 *   `turn.failed {error}` and top-level `error`. Every event is a heartbeat with the partial turn,
 *   and there is one every few seconds while codex is quiet (a model that thinks for long).
 * - Tokens: `turn.completed.usage` counts the whole session (it grows across `resume`s), so the
 *   turn's tokens are the difference from the totals of the previous completed turn, which the
 *   session carries. What an interrupted turn used is counted in the next completed one.
 *   `turn.completed` counts only the session's own thread: what its sub-agents (`spawn_agent`,
 *   named in `collab_tool_call` items) spent is read from their own rollouts under CODEX_HOME and
 *   added, each sub-agent once (codex-subagents.ts).
 * - Cancellation: the process group gets SIGTERM, then SIGKILL after `killGraceMs`; runTurn
 *   resolves once the whole tree is gone, with the partial turn and `interrupted: true`. codex has
 *   recorded the session as it went, so the next turn resumes it.
 * - A non-zero exit that is not a cancellation throws, with the exit code and stderr's tail.
 * - Compaction (`req.compact`, the ladder's last resort): a new session (no `resume`), its first
 *   input the handoff warden built. codex 0.169's `exec` has no compact command (its compaction is
 *   automatic at a token limit, or the TUI's `/compact`, or the experimental app-server), and a
 *   summary the model writes for itself could drop the very corrections it ignored: the handoff
 *   quotes them word for word.
 */
import { PROXY_ENV, subprocessEnv } from '../../src/config/worker.js';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_TOOL_CALLS, MAX_TOOL_FIELD, MAX_TURN_TEXT, MAX_TURN_TOKENS, TRUNCATION_MARKER, truncate } from '../../src/domain/contract/limits.js';
import { type DriverConfig, type ToolCall, type Turn, TurnSchema } from '../../src/domain/contract/schemas.js';
import { CODEX_QUIET_OVERRIDES, configTomlOverrides, copyCodexCredentials, credentialsSource, resolveCodexBinary, stderrTail } from '../codex-home.js';
import { type GroupRunResult, runInGroup } from '../process-group.js';
import { extractResult } from '../../src/domain/contract/result.js';
import type { Driver, DriverSession, TurnRequest, TurnResult } from './types.js';
import { SUBAGENT_TOTALS_KEY, carriedSubagentTotals, carryForm, collabThreadIds, countSubagents } from './codex-subagents.js';

export type CodexDriverConfig = Extract<DriverConfig, { kind: 'codex' }>;

/** Heartbeat at least this often while codex runs, even when it prints nothing. */
export const CODEX_DRIVER_HEARTBEAT_MS = 5_000;
/** Written into the agent's CODEX_HOME once the credentials have been copied in. */
export const CODEX_CREDENTIALS_STAMP = '.warden-credentials';
/** A session id goes into argv after `resume`: nothing that could pass for an option. */
const SESSION_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

export interface CodexTurnArgsInput {
  sandbox: CodexDriverConfig['sandbox'];
  model?: string;
  workDir: string;
  /** Continue this session (`resume <id>`); a new session when absent. */
  sessionId?: string | null;
  /** Overrides derived from the home's config.toml (its MCP servers switched off). */
  derivedOverrides?: readonly string[];
  /** The config's own `-c` overrides; last, so they win. */
  overrides?: readonly string[];
}

/** The argv of one turn, after the binary. The input is not in it: it goes on stdin (`-`). */
export function buildCodexTurnArgs(input: CodexTurnArgsInput): string[] {
  const args = ['exec', '--json', '--sandbox', input.sandbox, '--skip-git-repo-check', '--color', 'never'];
  if (input.model) args.push('-m', input.model);
  args.push('-C', input.workDir);
  for (const o of [...CODEX_QUIET_OVERRIDES, ...(input.derivedOverrides ?? []), ...(input.overrides ?? [])]) args.push('-c', o);
  if (input.sessionId) {
    if (!SESSION_ID_RE.test(input.sessionId)) throw new Error(`not a codex session id: ${JSON.stringify(input.sessionId)}`);
    args.push('resume', input.sessionId);
  }
  args.push('-');
  return args;
}

// ---------- the events of one turn ----------

interface Usage {
  input: number;
  output: number;
}

/** What `codex exec --json` printed so far, folded into the pieces of a Turn. */
export class CodexTurnEvents {
  sessionId: string | null = null;
  /** The agent's messages, in order. */
  readonly messages: string[] = [];
  /** Tool calls by item id, in the order they started; `null` result/ok while still running. */
  private readonly calls = new Map<string, ToolCall & { running: boolean }>();
  /** Session totals from `turn.completed`. */
  usage: Usage | null = null;
  completed = false;
  /** `turn.failed` and top-level `error` messages. */
  readonly errors: string[] = [];
  /** Non-fatal `error` items (e.g. "model metadata not found"). */
  readonly warnings: string[] = [];
  /** Lines that were not JSON events. */
  unparsed = 0;
  /** The sub-agent threads the session's `collab_tool_call` items named (spawned, waited on, sent input). */
  readonly subagentIds = new Set<string>();

  /** Feed one stdout line. Returns true when it was an event. */
  push(line: string): boolean {
    let e: Record<string, unknown>;
    try {
      const v: unknown = JSON.parse(line);
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
      e = v as Record<string, unknown>;
    } catch {
      this.unparsed += 1;
      return false;
    }
    switch (e.type) {
      case 'thread.started':
        if (typeof e.thread_id === 'string' && e.thread_id) this.sessionId = e.thread_id;
        break;
      case 'item.started':
      case 'item.updated':
      case 'item.completed':
        if (e.item && typeof e.item === 'object') this.item(e.item as Record<string, unknown>, e.type === 'item.completed');
        break;
      case 'turn.completed': {
        const u = (e.usage ?? {}) as Record<string, unknown>;
        this.usage = { input: count(u.input_tokens), output: count(u.output_tokens) };
        this.completed = true;
        break;
      }
      case 'turn.failed': {
        const err = e.error as { message?: unknown } | undefined;
        this.errors.push(typeof err?.message === 'string' ? err.message : 'turn failed');
        break;
      }
      case 'error':
        this.errors.push(typeof e.message === 'string' ? e.message : JSON.stringify(e));
        break;
      default:
        break;
    }
    return true;
  }

  private item(item: Record<string, unknown>, done: boolean): void {
    const id = typeof item.id === 'string' ? item.id : `anon-${this.calls.size}`;
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    // A sub-agent call (spawn_agent, wait, send_input, …): its threads are counted at the turn's
    // end (codex-subagents.ts); the call itself is shown as any other kind (default, below).
    if (item.type === 'collab_tool_call') for (const t of collabThreadIds(item)) this.subagentIds.add(t);
    switch (item.type) {
      case 'agent_message':
        if (done && str(item.text)) this.messages.push(str(item.text));
        return;
      case 'reasoning':
        return; // the model's private reasoning summary: not the agent's message
      case 'todo_list':
        return; // a plan, not an action
      case 'error':
        if (done && str(item.message)) this.warnings.push(str(item.message));
        return;
      case 'command_execution': {
        const exit = typeof item.exit_code === 'number' ? item.exit_code : null;
        const running = !done && item.status === 'in_progress';
        const output = str(item.aggregated_output);
        this.calls.set(id, {
          name: 'shell',
          args: unwrapShellCommand(str(item.command)),
          ...(running ? {} : { result: boundOutput(output || (item.status === 'declined' ? '(declined)' : '')), ok: exit === 0 }),
          running,
        });
        return;
      }
      case 'file_change': {
        const changes = Array.isArray(item.changes) ? (item.changes as Array<{ path?: unknown; kind?: unknown }>) : [];
        const args = changes.map((c) => `${str(c.kind) || 'change'} ${str(c.path)}`).join('\n');
        const running = !done && item.status === 'in_progress';
        this.calls.set(id, { name: 'apply_patch', args, ...(running ? {} : { ok: item.status === 'completed' }), running });
        return;
      }
      case 'mcp_tool_call': {
        const running = !done && item.status === 'in_progress';
        const err = (item.error as { message?: unknown } | null | undefined)?.message;
        const result = typeof err === 'string' ? err : mcpResultText(item.result);
        this.calls.set(id, {
          name: `${str(item.server) || 'mcp'}.${str(item.tool) || 'tool'}`,
          args: item.arguments === undefined || item.arguments === null ? undefined : boundOutput(JSON.stringify(item.arguments)),
          ...(running ? {} : { result: boundOutput(result), ok: item.status === 'completed' && typeof err !== 'string' }),
          running,
        });
        return;
      }
      case 'web_search':
        this.calls.set(id, { name: 'web_search', args: str(item.query), ...(done ? { ok: true } : {}), running: !done });
        return;
      default: {
        // A kind this version of warden does not know: keep it visible, bounded.
        const { id: _id, type, ...rest } = item;
        const status = str(rest.status);
        this.calls.set(id, {
          name: str(type) || 'unknown',
          args: boundOutput(JSON.stringify(rest)),
          ...(done ? { ok: status === '' || status === 'completed' } : {}),
          running: !done,
        });
      }
    }
  }

  /** The tool calls, those still running marked as cut short when `interrupted`. */
  toolCalls(interrupted = false): ToolCall[] {
    return [...this.calls.values()].map(({ running, ...c }) => (running && interrupted ? { ...c, result: '(interrupted before it finished)' } : c));
  }

  /** The turn so far. `previous` is the session totals after the last completed turn. */
  turn(id: string, opts: { previous?: Usage | null; interrupted?: boolean } = {}): Turn {
    let text = boundMessages(this.messages);
    if (!text && opts.interrupted) text = '(interrupted before the agent replied)';
    const calls = this.toolCalls(opts.interrupted).slice(-MAX_TOOL_CALLS);
    const t: Turn = TurnSchema.parse({ id, text, ...(calls.length ? { toolCalls: calls } : {}) });
    if (this.usage) {
      const prev = opts.previous ?? { input: 0, output: 0 };
      // Session totals grow; if they ever do not (another codex's per-turn numbers), take them as they are.
      t.tokensIn = this.usage.input >= prev.input ? this.usage.input - prev.input : this.usage.input;
      t.tokensOut = this.usage.output >= prev.output ? this.usage.output - prev.output : this.usage.output;
    }
    return t;
  }

  /** The last message the agent sent this turn. */
  finalMessage(): string | null {
    return this.messages.at(-1) ?? null;
  }
}

const capTokens = (n: number) => Math.min(MAX_TURN_TOKENS, n);

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0;
}

function mcpResultText(result: unknown): string {
  if (!result || typeof result !== 'object') return '';
  const content = (result as { content?: unknown }).content;
  if (Array.isArray(content)) {
    const texts = content.flatMap((c) =>
      c && typeof c === 'object' && typeof (c as { text?: unknown }).text === 'string' ? [(c as { text: string }).text] : [],
    );
    if (texts.length) return texts.join('\n');
  }
  return JSON.stringify(result);
}

/**
 * A command output bounded to MAX_TOOL_FIELD: its head and, mostly, its tail (where errors are),
 * with the marker in between.
 */
export function boundOutput(s: string, max: number = MAX_TOOL_FIELD): string {
  if (s.length <= max) return s;
  const room = max - TRUNCATION_MARKER.length;
  const head = Math.floor(room / 4);
  return s.slice(0, head) + TRUNCATION_MARKER + s.slice(s.length - (room - head));
}

/** The messages, final one last; when too long, the earliest go first and the final one survives. */
function boundMessages(messages: string[]): string {
  if (messages.length === 0) return '';
  const final = truncate(messages.at(-1)!, MAX_TURN_TEXT);
  const earlier = messages.slice(0, -1).join('\n\n');
  if (!earlier) return final;
  const room = MAX_TURN_TEXT - final.length - 2;
  if (earlier.length <= room) return `${earlier}\n\n${final}`;
  if (room <= TRUNCATION_MARKER.length) return final;
  return `${TRUNCATION_MARKER}${earlier.slice(earlier.length - (room - TRUNCATION_MARKER.length))}\n\n${final}`;
}

/**
 * codex reports a command as the shell invocation it ran (`/bin/bash -lc 'npm test'`); the
 * transcript shows what the agent asked for (`npm test`). Anything else is left as it is.
 */
export function unwrapShellCommand(command: string): string {
  const m = /^(?:(?:\/usr)?\/bin\/)?(?:bash|sh|zsh|dash) -l?c (.+)$/s.exec(command);
  if (!m) return command;
  return shellWord(m[1]!) ?? command;
}

/** The value of `s` if it is exactly one POSIX shell word (quotes and escapes removed); else null. */
function shellWord(s: string): string | null {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return null;
      out += s.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i += 1;
      for (;;) {
        if (i >= s.length) return null;
        const d = s[i]!;
        if (d === '"') break;
        if (d === '\\' && i + 1 < s.length && '"\\$`\n'.includes(s[i + 1]!)) {
          out += s[i + 1];
          i += 2;
        } else if (d === '$' || d === '`') {
          return null; // an expansion: not a literal word
        } else {
          out += d;
          i += 1;
        }
      }
      i += 1;
    } else if (c === '\\') {
      if (i + 1 >= s.length) return null;
      out += s[i + 1];
      i += 2;
    } else if (/[\s;&|<>()$`*?[\]{}~#]/.test(c)) {
      return null; // more than one word, or shell syntax around the word
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

// ---------- the driver ----------

function sessionTotals(session: DriverSession | null): Usage | null {
  if (!session) return null;
  const i = session.inputTokensTotal;
  const o = session.outputTokensTotal;
  return typeof i === 'number' && typeof o === 'number' ? { input: i, output: o } : null;
}

function priorSessionId(session: DriverSession | null): string | null {
  const id = session?.sessionId;
  return typeof id === 'string' && id ? id : null;
}

/** Create the agent's CODEX_HOME; on first use, copy the credentials in. Returns what was copied (null: already set up). */
async function prepareHome(config: CodexDriverConfig, home: string): Promise<{ copied: string[]; from: string } | null> {
  await mkdir(home, { recursive: true, mode: 0o700 });
  const stamp = join(home, CODEX_CREDENTIALS_STAMP);
  if (existsSync(stamp)) return null;
  const from = credentialsSource(config);
  const copied = await copyCodexCredentials(from, home);
  await writeFile(stamp, `${JSON.stringify({ from, copied, at: new Date().toISOString() })}\n`, { mode: 0o600 });
  return { copied, from };
}

export function codexDriver(config: CodexDriverConfig): Driver {
  return {
    name: 'codex',
    async runTurn(req: TurnRequest, ctx) {
      const id = `${req.agentId}-turn-${req.turnNumber}`;
      // A compaction starts a fresh session: nothing of the old one is resumed or counted.
      const previous = req.compact ? null : sessionTotals(req.session);
      const resumeId = req.compact ? null : priorSessionId(req.session);
      if (ctx.signal.aborted) {
        return { turn: new CodexTurnEvents().turn(id, { interrupted: true }), session: req.session, done: false, interrupted: true };
      }

      const file = resolveCodexBinary(config);
      const home = req.homeDir;
      const setup = await prepareHome(config, home);
      await mkdir(req.workDir, { recursive: true });
      const args = buildCodexTurnArgs({
        sandbox: config.sandbox,
        model: config.model,
        workDir: req.workDir,
        sessionId: resumeId,
        derivedOverrides: await configTomlOverrides(home),
        overrides: config.config,
      });

      const live = new CodexTurnEvents();
      const beat = () => ctx.heartbeat(live.turn(id, { previous }));
      const ticker = setInterval(beat, CODEX_DRIVER_HEARTBEAT_MS);
      ticker.unref();
      const started = Date.now();
      let pid: number | undefined;
      let result: GroupRunResult;
      try {
        ctx.heartbeat();
        result = await runInGroup(
          file,
          args,
          {
            input: req.input,
            cwd: req.workDir,
            extendEnv: false, // explicit: no worker secret reaches codex (a spec's -c env_key could name one)
            env: subprocessEnv({ CODEX_HOME: home, NO_COLOR: '1' }, { passThrough: PROXY_ENV }),
            stdout: 'pipe',
            stderr: 'pipe',
            maxBuffer: { stdout: 256_000_000, stderr: 20_000_000 },
          },
          {
            signal: ctx.signal,
            killGraceMs: ctx.killGraceMs,
            marker: `CODEX_HOME=${home}`,
            onSpawn: (p) => {
              pid = p;
              ctx.log.debug(
                {
                  agentId: req.agentId,
                  turn: req.turnNumber,
                  codexHome: home,
                  pid,
                  file,
                  resume: resumeId,
                  ...(setup ? { credentialsFrom: setup.from, copied: setup.copied } : {}),
                },
                'codex turn started',
              );
            },
            onStdoutLine: (line) => {
              if (live.push(line)) beat();
            },
          },
        );
      } finally {
        clearInterval(ticker);
      }
      const ms = Date.now() - started;

      // The buffered stdout decodes UTF-8 across chunk boundaries; the live copy served the heartbeats.
      let events = live;
      if (typeof result.stdout === 'string' && !result.isMaxBuffer) {
        events = new CodexTurnEvents();
        for (const line of result.stdout.split('\n')) if (line.trim()) events.push(line);
      }
      for (const w of events.warnings) ctx.log.debug({ agentId: req.agentId, warning: w }, 'codex warning');
      const sessionId = events.sessionId ?? resumeId;
      const finished = events.completed && result.exitCode === 0;

      if (result.aborted && !finished) {
        ctx.log.debug({ agentId: req.agentId, pid, ms, sessionId }, 'codex turn interrupted');
        // The totals stay those of the last completed turn: what this one used is counted in the next.
        const session: DriverSession | null = sessionId ? { ...(req.compact ? {} : (req.session ?? {})), sessionId } : req.compact ? null : req.session;
        return withSubagents({ turn: events.turn(id, { previous, interrupted: true }), session, done: false, interrupted: true }, events, sessionId);
      }
      if (result.failed && result.exitCode === undefined && !result.signal) {
        throw new Error(`could not run ${file}: ${result.shortMessage ?? result.message}`);
      }
      if (result.exitCode !== 0 || (events.errors.length > 0 && !events.completed)) {
        const how =
          result.exitCode === 0
            ? 'reported a failed turn'
            : result.exitCode !== undefined
              ? `exited with code ${result.exitCode}`
              : `was killed by ${result.signal}`;
        const reported = events.errors.length ? `; codex: ${truncate(events.errors.join(' | '), 1_000)}` : '';
        throw new Error(`codex exec ${how} after ${ms} ms${reported}; stderr: ${stderrTail(String(result.stderr ?? ''))}`);
      }
      if (!sessionId) throw new Error(`codex exec printed no thread id (no thread.started event); stderr: ${stderrTail(String(result.stderr ?? ''))}`);

      const turn = events.turn(id, { previous });
      const session: DriverSession = {
        ...(req.compact ? {} : (req.session ?? {})),
        sessionId,
        inputTokensTotal: events.usage?.input ?? previous?.input ?? 0,
        outputTokensTotal: events.usage?.output ?? previous?.output ?? 0,
      };
      const final = events.finalMessage();
      const done = final !== null && final.trimStart().startsWith(req.doneMarker);
      ctx.log.debug({ agentId: req.agentId, pid, ms, sessionId, toolCalls: turn.toolCalls?.length ?? 0, done }, 'codex turn finished');
      return withSubagents({ turn, session, done, ...(done && final !== null && { result: extractResult(final, req.doneMarker) }) }, events, sessionId);

      /**
       * The turn's result with what its sub-agents spent added to its tokens (each once: the totals
       * counted of each carried in the session; codex-subagents.ts). A compaction's new session
       * carries none of the old one's.
       */
      async function withSubagents(r: TurnResult, ev: CodexTurnEvents, threadId: string | null): Promise<TurnResult> {
        if (ev.subagentIds.size === 0) return r;
        const carried = carriedSubagentTotals(req.compact ? null : req.session);
        const subs = await countSubagents(home, ev.subagentIds, threadId, carried, ctx.log);
        if (subs.counted.length === 0) return r;
        ctx.log.debug({ agentId: req.agentId, subagents: subs.counted }, 'codex sub-agents counted');
        const turn = { ...r.turn, tokensIn: capTokens((r.turn.tokensIn ?? 0) + subs.tokensIn), tokensOut: capTokens((r.turn.tokensOut ?? 0) + subs.tokensOut) };
        return { ...r, turn, session: { ...(r.session ?? {}), [SUBAGENT_TOTALS_KEY]: carryForm(subs.totals) } };
      }
    },
  };
}
