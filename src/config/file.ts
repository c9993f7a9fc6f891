/**
 * The warden config file (YAML). The supervisor's keys in snake_case, the evaluator, and
 * notification channels. Validated strictly: an unknown key is an error naming it. Flags override it.
 *
 *   supervisor:
 *     model: gpt-5.4
 *     window_size: 20          # turns of history to evaluate
 *     eval_interval: 5         # evaluate every N turns
 *     escalation_threshold: 3  # non-OK verdicts before escalation (never below 3)
 *     idle_after: 10m          # idle watchdog (0 disables)
 *     eval_timeout: 30s
 *     last_resort: none        # compact: before escalating, move the agent to a fresh context with a handoff (once)
 *     session_end_grace: 10m   # a hooked session that ended ends its agent done after this, unless it resumes
 *   evaluator:
 *     kind: heuristic          # heuristic | codex | claude | command | openai | tiered
 *     # kind: openai           # any OpenAI-compatible chat-completions server
 *     # base_url: http://127.0.0.1:11434/v1
 *     # model: llama3.2         # default: supervisor.model
 *     # api_key_env: OPENAI_API_KEY   # env var on the worker; omit for keyless servers
 *     # temperature: 0
 *     # kind: tiered           # the heuristic on every window, a model only where it pays
 *     # sample_ok: 0.05        # fraction of OK windows also sent to the model
 *     # model:                 # the model tier: a codex, claude, command or openai evaluator as above
 *     #   kind: openai
 *     #   base_url: http://127.0.0.1:11434/v1
 *   notify:
 *     log: true
 *     webhooks:
 *       - url: https://hooks.example.com/warden
 *         secret_env: WARDEN_WEBHOOK_SECRET
 *       - url: https://hooks.slack.com/services/…
 *         format: slack         # json (default) | slack: a {text, blocks} body for chat tools
 *     irc: '#alerts'            # posted by the `warden irc` bot (quote it: # starts a YAML comment)
 *   verify:                      # definition of done: checked when the agent claims it is done
 *     command: npm test
 *     cwd: /path/to/repo         # default: the driven agent's work dir, else the worker's
 *     timeout: 10m
 *   protect: ['test/**', '*.snap']   # deleting or weakening these is reward hacking
 *   hooks:
 *     auto_start: true           # a hook of a session nobody started starts supervising it (warden install)
 *   budgets:                     # hard ceilings, checked before every turn (--budget-* flags override them)
 *     tokens: 2000000
 *     cost_usd: 5
 *     turns: 200
 *     wall_clock: 2h
 *     warn_at: 0.8               # warn the agent and notify once at this share of each budget
 *   safety:
 *     max_restarts: 3            # failed turns within restart_window that open the circuit
 *     restart_window: 60s
 *     max_blocked: 1h            # rate-limited or overloaded this long opens the circuit
 *     max_held: 4h               # a hold (block) longer than this awaits a human
 *     heartbeat_interval: 30s    # external agents: silence for twice this makes the agent orphaned
 *     group_report_interval: 30s # agents with labels: their spend is published for their groups at most this often
 *   labels:                      # the agent's groups (--label flags add to them); a project's file cannot set them
 *     team: payments
 *   prices:                      # USD per million tokens, to cost hooked sessions whose CLI writes no cost; your own config only
 *     claude-sonnet-*: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { DurationSchema, LabelsSchema, describeZodError, type AgentSpecInput } from '../domain/contract/schemas.js';

const SupervisorFile = z
  .object({
    model: z.string().min(1),
    window_size: z.number().int().min(1).max(200),
    eval_interval: z.number().int().min(1).max(1000),
    escalation_threshold: z.number().int().min(3, 'escalation_threshold is never below 3').max(20),
    idle_after: DurationSchema,
    eval_timeout: DurationSchema,
    last_resort: z.enum(['compact', 'none']),
    session_end_grace: DurationSchema,
  })
  .partial()
  .strict();

const CodexEvaluatorFile = z
  .object({
    kind: z.literal('codex'),
    codex_path: z.string().optional(),
    config: z.array(z.string()).optional(),
    credentials_home: z.string().optional(),
  })
  .strict();
const ClaudeEvaluatorFile = z.object({ kind: z.literal('claude'), claude_path: z.string().optional(), model: z.string().optional() }).strict();
const CommandEvaluatorFile = z.object({ kind: z.literal('command'), command: z.array(z.string()).min(1), cwd: z.string().optional() }).strict();
const OpenAIEvaluatorFile = z
  .object({
    kind: z.literal('openai'),
    base_url: z.string(),
    model: z.string().optional(),
    api_key_env: z.string().optional(),
    temperature: z.number().optional(),
  })
  .strict();
/** The evaluators that ask a model; also `tiered`'s `model:`. */
const ModelEvaluatorFile = z.discriminatedUnion('kind', [CodexEvaluatorFile, ClaudeEvaluatorFile, CommandEvaluatorFile, OpenAIEvaluatorFile]);

const EvaluatorFile = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('heuristic') }).strict(),
  CodexEvaluatorFile,
  ClaudeEvaluatorFile,
  CommandEvaluatorFile,
  OpenAIEvaluatorFile,
  z.object({ kind: z.literal('tiered'), model: ModelEvaluatorFile, sample_ok: z.number().min(0).max(1).optional() }).strict(),
]);

const NotifyFile = z
  .object({
    log: z.boolean(),
    webhooks: z.array(z.object({ url: z.string(), secret_env: z.string().optional(), format: z.enum(['json', 'slack']).optional() }).strict()),
    /** `irc: '#alerts'` or `irc: {channel: '#alerts'}`: alerts go to that channel through `warden irc`. */
    irc: z.union([z.string(), z.object({ channel: z.string() }).strict()]),
  })
  .partial()
  .strict();

/** Definition of done: `verify: {command, cwd?, timeout?}` (or just the command as a string) and `protect: [globs]`. */
const VerifyFile = z.union([
  z.string().min(1),
  z.object({ command: z.string().min(1), cwd: z.string().min(1).optional(), timeout: DurationSchema.optional() }).strict(),
]);

/**
 * Budgets: hard ceilings, checked before every turn, and the share of each at which the agent is
 * warned (AgentSpec.budgets; the `--budget-*` flags of `warden start`). Bounds as the spec's, so a bad value is refused here, naming its key.
 */
export const BudgetsFile = z
  .object({
    tokens: z.number().int('must be a whole number').positive('must be above 0').max(Number.MAX_SAFE_INTEGER),
    cost_usd: z.number().positive('must be above 0').max(1e12, 'at most 1e12 USD'),
    turns: z.number().int('must be a whole number').positive('must be above 0'),
    wall_clock: DurationSchema.pipe(z.number().int().positive('must be above 0')),
    /** The share of each budget at which the agent is warned once (default 0.8). */
    warn_at: z.number().gt(0, 'must be above 0').lt(1, 'must be below 1 (a share of the budget, e.g. 0.8)'),
  })
  .partial()
  .strict();

/** Safety rails (AgentSpec.safety); durations without the spec's `Ms` suffix, as elsewhere in the file. */
const SafetyFile = z
  .object({
    max_restarts: z.number().int().min(0).max(100),
    restart_window: DurationSchema,
    max_blocked: DurationSchema.pipe(z.number().int().min(1000, 'at least 1s')),
    max_held: DurationSchema.pipe(z.number().int().min(1000, 'at least 1s')),
    heartbeat_interval: DurationSchema.pipe(z.number().int().min(100, 'at least 100ms')),
    group_report_interval: DurationSchema.pipe(z.number().int().min(100, 'at least 100ms').max(3_600_000, 'at most 1h')),
  })
  .partial()
  .strict();

/** USD per million tokens. */
const UsdPerMTok = z.number().min(0, 'must be 0 or more').max(1e6, 'at most 1e6 USD per million tokens');
/** One model's price: input, output, and prompt cache reads and writes (each the input price when not given). */
const PriceFile = z
  .object({ input: UsdPerMTok, output: UsdPerMTok, cache_read: UsdPerMTok, cache_write: UsdPerMTok })
  .partial({ cache_read: true, cache_write: true })
  .strict();
/**
 * Prices of the models hooked sessions call, for a CLI that writes tokens but no cost (Claude Code):
 * model name (or a prefix ending in `*`) → price. Honoured only from the user's own config.
 */
const PricesFile = z.record(z.string().min(1).max(200), PriceFile).refine((r) => Object.keys(r).length <= 200, 'at most 200 models');

/** The hooks of `warden install`: `auto_start: false` leaves sessions nobody started unsupervised. */
const HooksFile = z.object({ auto_start: z.boolean() }).partial().strict();

export const ConfigFileSchema = z
  .object({
    supervisor: SupervisorFile,
    evaluator: EvaluatorFile,
    notify: NotifyFile,
    verify: VerifyFile,
    protect: z.array(z.string().min(1)),
    hooks: HooksFile,
    budgets: BudgetsFile,
    safety: SafetyFile,
    /** Labels (groups) of the sessions this file starts: honoured only from the user's own config (trust.ts). */
    labels: LabelsSchema,
    /** Model prices for hooked sessions' cost: honoured only from the user's own config (userPrices). */
    prices: PricesFile,
  })
  .partial()
  .strict();
export type ConfigFile = z.output<typeof ConfigFileSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * The largest config file warden reads. A real one is a few hundred bytes; the spec it becomes is
 * itself capped at 256 KiB. Checked before parsing, so a huge file is refused at once, not after
 * seconds of parsing and gigabytes of memory.
 */
export const CONFIG_MAX_BYTES = 256 * 1024;
/** YAML aliases a config may expand (`*name`): enough for shared blocks, too few for a "billion laughs". */
export const CONFIG_MAX_ALIASES = 20;

const tooLarge = (source: string, size: number) =>
  new ConfigError(`${source}: the config file is ${size} bytes; the most warden reads is ${CONFIG_MAX_BYTES} bytes (${CONFIG_MAX_BYTES / 1024} KiB)`);

export function parseConfig(text: string, source = 'config'): ConfigFile {
  const size = Buffer.byteLength(text, 'utf8');
  if (size > CONFIG_MAX_BYTES) throw tooLarge(source, size);
  let data: unknown;
  try {
    data = parseYaml(text, { maxAliasCount: CONFIG_MAX_ALIASES }) ?? {};
  } catch (err) {
    throw new ConfigError(`${source}: not valid YAML: ${err instanceof YAMLParseError ? err.message : String(err)}`);
  }
  const r = ConfigFileSchema.safeParse(data);
  if (!r.success) throw new ConfigError(`${source}: ${describeZodError(r.error)}`);
  return r.data;
}

/**
 * Read and validate a config file: a regular file of at most CONFIG_MAX_BYTES (its size is
 * checked before a byte is read; a FIFO or a device is refused without waiting on it).
 */
export function loadConfigFile(path: string): ConfigFile {
  return parseConfig(readConfigText(path), path);
}

/**
 * A config file's text, read as loadConfigFile reads it (a regular file of at most
 * CONFIG_MAX_BYTES). For a caller that must parse exactly the bytes it judged (trust.ts hashes them).
 */
export function readConfigText(path: string): string {
  let fd: number | undefined;
  let text: string;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ConfigError(`${path}: not a regular file; the config must be a YAML file`);
    if (st.size > CONFIG_MAX_BYTES) throw tooLarge(path, st.size);
    // Read at most one byte past the limit, so a file that grew since fstat is refused too.
    const buf = Buffer.alloc(CONFIG_MAX_BYTES + 1);
    let got = 0;
    for (let n; got < buf.length && (n = readSync(fd, buf, got, buf.length - got, got)) > 0; ) got += n;
    if (got > CONFIG_MAX_BYTES) throw tooLarge(path, got);
    text = buf.subarray(0, got).toString('utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return text;
}

/** The AgentSpec fields a config file sets (camelCase, as the workflow takes them). */
export function specFromConfig(cfg: ConfigFile): Omit<Partial<AgentSpecInput>, 'agentId' | 'task'> {
  const out: Omit<Partial<AgentSpecInput>, 'agentId' | 'task'> = {};
  if (cfg.supervisor) {
    const s = cfg.supervisor;
    out.supervisor = {
      ...(s.model !== undefined && { model: s.model }),
      ...(s.window_size !== undefined && { windowSize: s.window_size }),
      ...(s.eval_interval !== undefined && { evalInterval: s.eval_interval }),
      ...(s.escalation_threshold !== undefined && { escalationThreshold: s.escalation_threshold }),
      ...(s.idle_after !== undefined && { idleAfterMs: s.idle_after }),
      ...(s.eval_timeout !== undefined && { evalTimeoutMs: s.eval_timeout }),
      ...(s.last_resort !== undefined && { lastResort: s.last_resort }),
      ...(s.session_end_grace !== undefined && { sessionEndGraceMs: s.session_end_grace }),
    };
  }
  if (cfg.evaluator) {
    const e = cfg.evaluator;
    out.evaluator =
      e.kind === 'heuristic'
        ? { kind: 'heuristic' }
        : e.kind === 'tiered'
          ? { kind: 'tiered', model: modelEvaluatorFromFile(e.model), ...(e.sample_ok !== undefined && { sampleOk: e.sample_ok }) }
          : modelEvaluatorFromFile(e);
  }
  if (cfg.notify) {
    out.notify = {
      ...(cfg.notify.log !== undefined && { log: cfg.notify.log }),
      webhooks: (cfg.notify.webhooks ?? []).map((w) => ({
        url: w.url,
        ...(w.secret_env && { secretEnv: w.secret_env }),
        ...(w.format && { format: w.format }),
      })),
      ...(cfg.notify.irc !== undefined && { irc: { channel: typeof cfg.notify.irc === 'string' ? cfg.notify.irc : cfg.notify.irc.channel } }),
    };
  }
  if (cfg.verify !== undefined) {
    const v = typeof cfg.verify === 'string' ? { command: cfg.verify } : cfg.verify;
    out.verify = { command: v.command, ...(v.cwd !== undefined && { cwd: v.cwd }), ...(v.timeout !== undefined && { timeoutMs: v.timeout }) };
  }
  if (cfg.protect) out.protect = cfg.protect;
  if (cfg.budgets) out.budgets = budgetsFromFile(cfg.budgets);
  if (cfg.safety) {
    const f = cfg.safety;
    out.safety = {
      ...(f.max_restarts !== undefined && { maxRestarts: f.max_restarts }),
      ...(f.restart_window !== undefined && { restartWindowMs: f.restart_window }),
      ...(f.max_blocked !== undefined && { maxBlockedMs: f.max_blocked }),
      ...(f.max_held !== undefined && { maxHeldMs: f.max_held }),
      ...(f.heartbeat_interval !== undefined && { heartbeatIntervalMs: f.heartbeat_interval }),
      ...(f.group_report_interval !== undefined && { groupReportIntervalMs: f.group_report_interval }),
    };
  }
  if (cfg.labels) out.labels = cfg.labels;
  return out;
}

/** The config file's `budgets:` as the spec's (`cost_usd` → `costUsd`, `wall_clock` → `wallClockMs`). */
export function budgetsFromFile(b: z.output<typeof BudgetsFile>): NonNullable<AgentSpecInput['budgets']> {
  return {
    ...(b.tokens !== undefined && { tokens: b.tokens }),
    ...(b.cost_usd !== undefined && { costUsd: b.cost_usd }),
    ...(b.turns !== undefined && { turns: b.turns }),
    ...(b.wall_clock !== undefined && { wallClockMs: b.wall_clock }),
    ...(b.warn_at !== undefined && { warnAt: b.warn_at }),
  };
}

type ModelEvaluatorInput = Extract<NonNullable<AgentSpecInput['evaluator']>, { kind: 'codex' | 'claude' | 'command' | 'openai' }>;

function modelEvaluatorFromFile(e: z.output<typeof ModelEvaluatorFile>): ModelEvaluatorInput {
  switch (e.kind) {
    case 'codex':
      return { kind: 'codex', codexPath: e.codex_path, config: e.config ?? [], credentialsHome: e.credentials_home };
    case 'claude':
      return { kind: 'claude', ...(e.claude_path !== undefined && { claudePath: e.claude_path }), ...(e.model !== undefined && { model: e.model }) };
    case 'command':
      return { kind: 'command', command: e.command, cwd: e.cwd };
    case 'openai':
      return {
        kind: 'openai',
        baseUrl: e.base_url,
        ...(e.model !== undefined && { model: e.model }),
        ...(e.api_key_env !== undefined && { apiKeyEnv: e.api_key_env }),
        ...(e.temperature !== undefined && { temperature: e.temperature }),
      };
  }
}

/** The user's config directory for warden: $XDG_CONFIG_HOME/warden, default ~/.config/warden. */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'warden');
}

/** The user's own config file (userConfigDir()/warden.yaml): trusted, as the user wrote it. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(userConfigDir(env), 'warden.yaml');
}

/** A project's config file: `warden.yaml` in its directory. Untrusted until the user trusts it (trust.ts). */
export function projectConfigFile(projectDir: string): string {
  return join(projectDir, 'warden.yaml');
}

/** The user's config file when there is one. */
export function findUserConfig(env: NodeJS.ProcessEnv = process.env): string | null {
  const path = userConfigFile(env);
  return existsSync(path) ? path : null;
}

/**
 * The model prices of the user's own config (`prices:`), as hooks price a session's messages
 * (camelCase); undefined without a user config or prices. A project's file never sets them: a
 * repository must not make its agent's spend look cheaper. Throws ConfigError for a bad file.
 */
export function userPrices(
  env: NodeJS.ProcessEnv = process.env,
): Record<string, { input: number; output: number; cacheRead?: number; cacheWrite?: number }> | undefined {
  const path = findUserConfig(env);
  const prices = path ? loadConfigFile(path).prices : undefined;
  if (!prices) return undefined;
  return Object.fromEntries(
    Object.entries(prices).map(([model, p]) => [
      model,
      {
        input: p.input,
        output: p.output,
        ...(p.cache_read !== undefined && { cacheRead: p.cache_read }),
        ...(p.cache_write !== undefined && { cacheWrite: p.cache_write }),
      },
    ]),
  );
}
