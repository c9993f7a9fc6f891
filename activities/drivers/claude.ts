/**
 * The `claude` driver: warden runs Claude Code (tested with 2.1.330) one turn at a time.
 *
 * Each turn is one non-interactive `claude -p` process, in the agent's working directory:
 *
 *   claude -p --output-format stream-json --verbose            (2.1.330 refuses stream-json in
 *          --permission-mode acceptEdits --allowedTools Bash    -p mode without --verbose)
 *          [--model M] (--session-id <uuid> | --resume <uuid>) [config.args…]
 *
 * - **The turn input goes on stdin**, never in argv (it can be long, and argv is world-readable).
 * - **Permissions, unattended:** `acceptEdits` lets Claude edit files inside the working directory
 *   without asking, and `--allowedTools Bash` lets it run commands (builds, tests). Anything else
 *   that would ask (edits outside the work dir, web fetches, …) is denied, since nobody is there to
 *   answer in `-p` mode. `bypassPermissions` is not the default: Claude Code refuses it when
 *   running as root outside a recognised sandbox (a common case for workers in containers), and it
 *   would exit before the turn starts. `config.args` come last, so a deployment can widen this
 *   (`--permission-mode bypassPermissions`, more `--allowedTools`): for a repeated option the last
 *   one wins.
 * - **Session:** the first turn picks a fresh UUID (`--session-id`); later turns `--resume` it, so
 *   the conversation goes on. The id is `TurnResult.session.sessionId`. A turn cancelled before
 *   Claude saved anything simply starts the same id afresh next time.
 * - **State:** HOME and CLAUDE_CONFIG_DIR point into the agent's private `homeDir` (`homeDir` and
 *   `homeDir/.claude`), kept across turns and worker restarts (never deleted here), so sessions
 *   survive a worker restart and the worker's own `~/.claude` (settings, hooks, logins) never
 *   leaks into the agent. The project's own `.claude/settings.json` in the work dir still applies.
 * - **Environment:** explicit (src/config/worker.ts): PATH, HOME, LANG …, proxies, the
 *   ANTHROPIC_* variables (API key, base URL, …) and the operator's WARDEN_SUBPROCESS_ENV_ALLOW —
 *   credentials travel only that way, never in argv; no other worker secret reaches the agent. Variables Claude Code sets for its *own* children (CLAUDECODE, CLAUDE_CODE_ENTRYPOINT)
 *   are dropped, in case the worker itself was started from inside Claude Code. The autoupdater is
 *   off unless the worker's environment says otherwise.
 * - **Events → Turn:** assistant text (top-level only, the final `result` text last), every tool
 *   use with its input (Bash by its command) and its tool_result (`ok` = !is_error), token usage
 *   and cost from the `result` event. Each stdout event is a heartbeat with the partial turn.
 *   `done` = the final result text starts with `req.doneMarker`.
 * - **Cancellation:** the process group gets SIGTERM, then SIGKILL after `killGraceMs`
 *   (`runInGroup`, with a per-turn `WARDEN_TURN_MARKER` in the environment to find stragglers);
 *   the partial turn comes back with `interrupted: true`, and the session stays resumable.
 * - **Compaction** (`req.compact`, the ladder's last resort): a fresh session (a new UUID,
 *   `--session-id`), its first input the handoff warden built. Claude Code does compact on its own
 *   (`/compact` as the prompt of a resumed `-p` session), but that summary is written by the same
 *   model that kept ignoring its corrections and may leave them out; the handoff quotes them word
 *   for word, and codex and the command driver get the same fresh start.
 * - **Failure:** a non-zero exit, no `result` event, or a result flagged `is_error` throws with the
 *   tail of stderr (and Claude's own error text), so the activity retries the turn.
 */
import { randomUUID } from 'node:crypto';
import { accessSync, constants as fsConstants, existsSync, mkdirSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_TOOL_CALLS, MAX_TOOL_FIELD, MAX_TURN_TEXT, truncate } from '../../src/domain/contract/limits.js';
import { PROXY_ENV, subprocessEnv } from '../../src/config/worker.js';
import { type DriverConfig, type Turn, TurnSchema } from '../../src/domain/contract/schemas.js';
import { runInGroup } from '../process-group.js';
import { extractResult } from '../../src/domain/contract/result.js';
import type { Driver, DriverSession, TurnRequest } from './types.js';

export type ClaudeDriverConfig = Extract<DriverConfig, { kind: 'claude' }>;

/** Permission flags for unattended turns (see the header for why not bypassPermissions). */
export const CLAUDE_PERMISSION_ARGS: readonly string[] = ['--permission-mode', 'acceptEdits', '--allowedTools', 'Bash'];
/** Variables Claude Code sets for the processes it starts itself; never handed to the agent. */
const DROPPED_ENV = new Set(['CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT', 'CLAUDE_CONFIG_DIR', 'WARDEN_TURN_MARKER']);
const STDERR_TAIL_LINES = 12;
/** stdout is also buffered by runInGroup; a very long turn's event stream may be large. */
const MAX_STDOUT_BYTES = 256 * 1024 * 1024;

// ---------- the binary ----------

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** The project root: three levels up from dist/activities/drivers, two from activities/drivers. */
const PROJECT_ROOT = resolve(HERE, /[\\/]dist[\\/]activities[\\/]drivers[\\/]?$/.test(HERE) ? '../../..' : '../..');

/** The project's own Claude Code (the devDependency): the platform's native binary first. */
export function projectClaudeCandidates(root = PROJECT_ROOT): string[] {
  const scope = join(root, 'node_modules', '@anthropic-ai');
  const exe = process.platform === 'win32' ? 'claude.exe' : 'claude';
  const musl =
    process.platform === 'linux' && !(process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;
  return [
    join(scope, `claude-code-${process.platform}-${process.arch}${musl ? '-musl' : ''}`, exe),
    // When npm ran the package's postinstall, the native binary was copied over this placeholder.
    join(scope, 'claude-code', 'bin', 'claude.exe'),
  ];
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The npm package's `bin/claude.exe` before its postinstall: a small placeholder, not Claude. */
function isPlaceholder(p: string): boolean {
  try {
    const real = realpathSync(p);
    return /[\\/]claude-code[\\/]bin[\\/]claude\.exe$/.test(real) && statSync(real).size < 1_000_000;
  } catch {
    return false;
  }
}

/**
 * Find Claude Code: `config.claudePath`, else `$WARDEN_CLAUDE_PATH`, else `claude` on PATH (not the
 * npm placeholder), else the project's own native binary. Throws when there is none.
 */
export function resolveClaudeBinary(
  config: Pick<ClaudeDriverConfig, 'claudePath'>,
  env: NodeJS.ProcessEnv = process.env,
  projectCandidates: readonly string[] = projectClaudeCandidates(),
): string {
  if (config.claudePath) return config.claudePath;
  if (env.WARDEN_CLAUDE_PATH) return env.WARDEN_CLAUDE_PATH;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'claude');
    if (isExecutableFile(p) && !isPlaceholder(p)) return p;
  }
  for (const p of projectCandidates) if (isExecutableFile(p) && !isPlaceholder(p)) return p;
  throw new Error('claude binary not found: set driver.claudePath or WARDEN_CLAUDE_PATH, put `claude` on PATH, or install @anthropic-ai/claude-code');
}

// ---------- argv and environment ----------

export interface ClaudeArgsInput {
  model?: string;
  sessionId: string;
  /** Continue the saved session (`--resume`) rather than start it (`--session-id`). */
  resume: boolean;
  /** `config.args`; last, so they win. */
  extra?: readonly string[];
  /** A delegated child's allowed tools: Claude Code itself refuses every other tool. */
  toolAllowlist?: readonly string[];
}

/** The argv after the binary. The turn input is not in it: it goes on stdin. */
export function buildClaudeArgs(input: ClaudeArgsInput): string[] {
  return [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    ...(input.toolAllowlist?.length ? ['--permission-mode', 'default', '--allowedTools', ...input.toolAllowlist] : CLAUDE_PERMISSION_ARGS),
    ...(input.model ? ['--model', input.model] : []),
    ...(input.resume ? ['--resume', input.sessionId] : ['--session-id', input.sessionId]),
    ...(input.extra ?? []),
  ];
}

/**
 * An explicit environment (src/config/worker.ts): the base set, the operator's
 * WARDEN_SUBPROCESS_ENV_ALLOW, proxies, and Claude Code's own ANTHROPIC_* credentials and
 * DISABLE_AUTOUPDATER — minus Claude Code's own child markers — with the agent's homes and warden's
 * markers. Nothing else of the worker's environment (its other secrets) reaches the agent.
 */
export function claudeEnv(
  base: NodeJS.ProcessEnv,
  add: { homeDir: string; configDir: string; agentId: string; turnNumber: number; marker: string },
): Record<string, string> {
  const own = Object.keys(base).filter((k) => k.startsWith('ANTHROPIC_') || k === 'DISABLE_AUTOUPDATER');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(subprocessEnv({}, { passThrough: [...PROXY_ENV, ...own] }, base))) if (!DROPPED_ENV.has(k)) env[k] = v;
  const [markerName, markerValue] = add.marker.split('=', 2) as [string, string];
  return {
    ...env,
    DISABLE_AUTOUPDATER: env.DISABLE_AUTOUPDATER ?? '1',
    HOME: add.homeDir,
    CLAUDE_CONFIG_DIR: add.configDir,
    WARDEN_AGENT_ID: add.agentId,
    WARDEN_TURN: String(add.turnNumber),
    [markerName]: markerValue,
  };
}

/** Whether Claude saved session `id` under this config dir (`projects/<project>/<id>.jsonl`). */
export function sessionSaved(configDir: string, id: string): boolean {
  const projects = join(configDir, 'projects');
  let dirs: string[];
  try {
    dirs = readdirSync(projects);
  } catch {
    return false;
  }
  return dirs.some((d) => existsSync(join(projects, d, `${id}.jsonl`)));
}

// ---------- events → Turn ----------

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

function bounded(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return truncate(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)), MAX_TOOL_FIELD);
}

/** A tool call's arguments: Bash by its command (its description varies between tries), others as given. */
function toolArgs(name: string, input: unknown): string | undefined {
  const command = isObj(input) ? input.command : undefined;
  return bounded(name === 'Bash' && typeof command === 'string' ? command : input);
}

/** The text of a tool_result's content: a string, or text blocks. */
function toolResultText(content: unknown): string | undefined {
  if (typeof content === 'string') return bounded(content);
  if (Array.isArray(content))
    return bounded(
      content
        .map((c) => (isObj(c) && typeof c.text === 'string' ? c.text : isObj(c) && typeof c.type === 'string' ? `[${c.type}]` : ''))
        .filter(Boolean)
        .join('\n'),
    );
  return bounded(content);
}

interface Call {
  name: string;
  args?: string;
  result?: string;
  ok?: boolean;
}

export interface ClaudeResultEvent {
  text: string;
  isError: boolean;
  subtype: string;
}

/** Accumulates Claude's stream-json events into a Turn. */
export class ClaudeTurnBuilder {
  sessionId: string | null = null;
  private texts: string[] = [];
  private calls: Call[] = [];
  private byId = new Map<string, Call>();
  result: ClaudeResultEvent | null = null;
  private tokensIn = 0;
  private tokensOut = 0;
  private usageSeen = false;
  private cost: number | undefined;
  /** Claude's cumulative session cost, as last reported (`total_cost_usd`). */
  totalCostUsd: number | undefined;

  constructor(private readonly previousTotalCostUsd?: number) {}

  /** Take one event (one stdout line, parsed). Unknown event types are ignored. */
  add(e: unknown): void {
    if (!isObj(e)) return;
    if (typeof e.session_id === 'string' && e.session_id) this.sessionId = e.session_id;
    const message = isObj(e.message) ? e.message : null;
    const content = Array.isArray(message?.content) ? (message!.content as unknown[]) : [];
    switch (e.type) {
      case 'assistant':
        for (const b of content) {
          if (!isObj(b)) continue;
          if (b.type === 'text' && typeof b.text === 'string' && b.text && e.parent_tool_use_id == null) this.texts.push(b.text);
          else if (b.type === 'tool_use' && typeof b.name === 'string' && b.name) {
            const call: Call = { name: b.name.slice(0, 200), args: toolArgs(b.name, b.input) };
            this.calls.push(call);
            if (typeof b.id === 'string') this.byId.set(b.id, call);
          }
        }
        break;
      case 'user':
        for (const b of content) {
          if (!isObj(b) || b.type !== 'tool_result' || typeof b.tool_use_id !== 'string') continue;
          const call = this.byId.get(b.tool_use_id);
          if (!call) continue;
          call.result = toolResultText(b.content);
          call.ok = b.is_error !== true;
        }
        break;
      case 'result': {
        const text = typeof e.result === 'string' ? e.result : '';
        this.result = { text, isError: e.is_error === true, subtype: typeof e.subtype === 'string' ? e.subtype : '' };
        if (text && this.texts.at(-1) !== text) this.texts.push(text);
        const usage = isObj(e.usage) ? e.usage : null;
        if (usage) {
          this.usageSeen = true;
          this.tokensIn += (num(usage.input_tokens) ?? 0) + (num(usage.cache_creation_input_tokens) ?? 0) + (num(usage.cache_read_input_tokens) ?? 0);
          this.tokensOut += num(usage.output_tokens) ?? 0;
        }
        const total = num(e.total_cost_usd);
        const since = isObj(e.model_usage_since_last_result) ? Object.values(e.model_usage_since_last_result) : null;
        let turnCost: number | undefined;
        if (since) turnCost = since.reduce<number>((sum, m) => sum + (isObj(m) ? (num(m.costUSD) ?? 0) : 0), 0);
        else if (total !== undefined) {
          // total_cost_usd is the session's running total on a resumed session: this turn is the difference.
          const before = this.totalCostUsd ?? this.previousTotalCostUsd;
          turnCost = before !== undefined && total >= before ? total - before : total;
        }
        if (turnCost !== undefined) this.cost = (this.cost ?? 0) + turnCost;
        if (total !== undefined) this.totalCostUsd = total;
        break;
      }
    }
  }

  /** The turn so far (or in full, once the result event is in), within warden's bounds. */
  turn(id: string, fallbackText = ''): Turn {
    return TurnSchema.parse({
      id,
      text: fitText(this.texts) || fallbackText,
      toolCalls: this.calls.slice(-MAX_TOOL_CALLS).map((c) => ({ ...c })),
      ...(this.usageSeen ? { tokensIn: this.tokensIn, tokensOut: this.tokensOut } : {}),
      ...(this.cost !== undefined ? { costUsd: this.cost } : {}),
    });
  }
}

/** The texts joined, final one last; when too long, the earliest are dropped (the final answer matters most). */
function fitText(texts: readonly string[]): string {
  const all = texts.join('\n\n');
  if (all.length <= MAX_TURN_TEXT) return all;
  const marker = '…[earlier text cut by warden]\n\n';
  const kept: string[] = [];
  let size = marker.length;
  for (let i = texts.length - 1; i >= 0; i--) {
    const t = texts[i]!;
    if (kept.length && size + t.length + 2 > MAX_TURN_TEXT) break;
    kept.unshift(t);
    size += t.length + 2;
  }
  return marker + kept.join('\n\n'); // a single over-long final text is cut by TurnSchema, its start kept
}

// ---------- the driver ----------

function tail(s: unknown): string {
  return String(s ?? '')
    .trim()
    .split('\n')
    .slice(-STDERR_TAIL_LINES)
    .join('\n');
}

function sessionFrom(req: TurnRequest): { sessionId: string | null; totalCostUsd?: number } {
  const id = req.session?.sessionId;
  const total = req.session?.totalCostUsd;
  return { sessionId: typeof id === 'string' && id ? id : null, ...(typeof total === 'number' ? { totalCostUsd: total } : {}) };
}

export function claudeDriver(config: ClaudeDriverConfig): Driver {
  return {
    name: 'claude',
    async runTurn(req, ctx) {
      const bin = resolveClaudeBinary(config);
      const configDir = join(req.homeDir, '.claude');
      mkdirSync(configDir, { recursive: true, mode: 0o700 });
      const previous = req.compact ? { sessionId: null } : sessionFrom(req);
      const sessionId = previous.sessionId ?? randomUUID();
      const resume = previous.sessionId !== null && sessionSaved(configDir, sessionId);
      const args = buildClaudeArgs({ model: config.model, sessionId, resume, extra: config.args, toolAllowlist: req.toolAllowlist });
      const marker = `WARDEN_TURN_MARKER=${randomUUID()}`;
      const env = claudeEnv(process.env, { homeDir: req.homeDir, configDir, agentId: req.agentId, turnNumber: req.turnNumber, marker });
      const id = `${req.agentId}-turn-${req.turnNumber}`;
      const builder = new ClaudeTurnBuilder(previous.totalCostUsd);
      ctx.log.debug({ bin, args, resume }, 'starting claude');

      const r = await runInGroup(
        bin,
        args,
        {
          input: req.input,
          cwd: req.workDir,
          env,
          extendEnv: false,
          stdout: 'pipe',
          stderr: 'pipe',
          maxBuffer: { stdout: MAX_STDOUT_BYTES, stderr: 10_000_000 },
        },
        {
          signal: ctx.signal,
          killGraceMs: ctx.killGraceMs,
          marker,
          onSpawn: (pid) => ctx.log.info({ pid, sessionId, resume }, 'claude started'),
          onStdoutLine: (line) => {
            let event: unknown;
            try {
              event = JSON.parse(line);
            } catch {
              return; // not an event
            }
            builder.add(event);
            ctx.heartbeat(builder.turn(id));
          },
        },
      );

      const session = (): DriverSession => ({
        sessionId: builder.sessionId ?? sessionId,
        ...(builder.totalCostUsd !== undefined
          ? { totalCostUsd: builder.totalCostUsd }
          : previous.totalCostUsd !== undefined
            ? { totalCostUsd: previous.totalCostUsd }
            : {}),
      });
      if (r.aborted) return { turn: builder.turn(id, '(interrupted)'), session: session(), done: false, interrupted: true };

      const claudeSaid = builder.result?.isError && builder.result.text ? `\n${builder.result.text}` : '';
      if (r.exitCode !== 0) {
        const how = r.exitCode === undefined ? `was killed by ${r.signal ?? 'a signal'}` : `exited with code ${r.exitCode}`;
        throw new Error(`claude ${how}: ${tail(r.stderr) || '(no stderr)'}${claudeSaid}`);
      }
      if (!builder.result) throw new Error(`claude printed no result event: ${tail(r.stderr) || '(no stderr)'}`);
      if (builder.result.isError)
        throw new Error(`claude reported an error (${builder.result.subtype || 'error'}): ${builder.result.text || tail(r.stderr) || '(no message)'}`);
      const turn = builder.turn(id);
      const done = builder.result.text.trimStart().startsWith(req.doneMarker);
      return { turn, session: session(), done, ...(done && { result: extractResult(builder.result.text, req.doneMarker) }) };
    },
  };
}
