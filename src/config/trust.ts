/**
 * Project config and trust. A `warden.yaml` in a project directory comes with the repository: whoever
 * wrote the repository wrote it. Until the user trusts it, warden takes from it only thresholds that
 * make supervision at least as strict as it would be without the file, and never anything that runs
 * or sends something (an evaluator, a verify command, endpoints, webhooks, IRC, the names of
 * credentials, paths to programs).
 *
 * The user trusts a project with `warden trust [DIR]`: the decision is recorded in the user's config
 * directory (`trusted-projects`, mode 0600), keyed by the project's real path and the SHA-256 of its
 * `warden.yaml` as it was then. A changed file (a `git pull`, a checkout, an edit by the agent) is
 * untrusted again until the user trusts it again, as direnv's `allow` works.
 *
 * The base an untrusted project's file can only tighten is the user's own config
 * (userConfigDir()/warden.yaml), else the defaults. Budgets are the user's ceiling even under a
 * trusted file: a project's budgets only ever make them tighter (capBudgets). Labels, and with
 * them the group budgets that cap a team's agents together, come only from the user's config:
 * a project's `labels:` is never taken, trusted or not; nor its `prices:` (a repository must not
 * make its agent's spend look cheaper).
 */
import { DEFAULT_WARN_AT } from '../domain/agent/budgets.js';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { SupervisorConfigSchema, describeZodError } from '../domain/contract/schemas.js';
import { ConfigError, findUserConfig, loadConfigFile, parseConfig, projectConfigFile, readConfigText, userConfigDir, type ConfigFile } from './file.js';

// ---------- the record ----------

const TrustEntrySchema = z
  .object({
    dir: z.string().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex digits'),
    trustedAt: z.string(),
  })
  .strict();
export type TrustEntry = z.output<typeof TrustEntrySchema>;
const TrustStoreSchema = z.object({ version: z.literal(1), projects: z.array(TrustEntrySchema) }).strict();

/** The file that records which projects' warden.yaml the user trusts: userConfigDir()/trusted-projects. */
export function trustFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(userConfigDir(env), 'trusted-projects');
}

/** The trusted projects; none when the file does not exist. A damaged file is a ConfigError naming it. */
export function readTrustStore(env: NodeJS.ProcessEnv = process.env): TrustEntry[] {
  const path = trustFilePath(env);
  if (!existsSync(path)) return [];
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${path}: not valid JSON (${err instanceof Error ? err.message : String(err)}); remove it and trust the projects again`);
  }
  const r = TrustStoreSchema.safeParse(data);
  if (!r.success) throw new ConfigError(`${path}: ${describeZodError(r.error)}; remove it and trust the projects again`);
  return r.data.projects;
}

/** Write the record: next to it, then renamed over it, readable by the user only. */
export function writeTrustStore(entries: readonly TrustEntry[], env: NodeJS.ProcessEnv = process.env): void {
  const path = trustFilePath(env);
  mkdirSync(userConfigDir(env), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ version: 1, projects: entries }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** The SHA-256 of a config file's text: what a trust decision is about. */
export function configDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A project's identity in the record: its real path (symlinks resolved), else its absolute path. */
export function projectKey(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/** Whether the user trusts exactly this text of this project's warden.yaml. */
export function isTrusted(entries: readonly TrustEntry[], dir: string, digest: string): boolean {
  const key = projectKey(dir);
  return entries.some((e) => e.dir === key && e.sha256 === digest);
}

/** The record with this project trusted at `digest` (one entry per project: the newest decision). */
export function withTrusted(entries: readonly TrustEntry[], dir: string, digest: string, now = new Date()): TrustEntry[] {
  const key = projectKey(dir);
  return [...entries.filter((e) => e.dir !== key), { dir: key, sha256: digest, trustedAt: now.toISOString() }];
}

/** The record without this project. */
export function withoutProject(entries: readonly TrustEntry[], dir: string): TrustEntry[] {
  const key = projectKey(dir);
  return entries.filter((e) => e.dir !== key);
}

// ---------- what an untrusted file may set ----------

const DEFAULTS = SupervisorConfigSchema.parse({});

/** The result of filtering an untrusted project's config over the user's. */
export interface UntrustedMerge {
  /** The user's config with the project's stricter thresholds on top. */
  cfg: ConfigFile;
  /** The keys taken from the project's file (`supervisor.eval_interval`, …). */
  taken: string[];
  /** The keys ignored, each with why when it is not obvious (`evaluator`, `supervisor.idle_after (0 switches the idle watchdog off)`). */
  ignored: string[];
}

/**
 * An untrusted project's config over the user's own (`base`, or the defaults): only the thresholds
 * that make supervision at least as strict as the base's are taken —
 *  - supervisor.eval_interval: evaluate at least as often (a number no higher);
 *  - supervisor.escalation_threshold: escalate no later (a number no higher; never below 3);
 *  - supervisor.idle_after: an idle watchdog no slower (not 0, which switches it off, unless the
 *    base has it off already, when any watchdog is stricter);
 * and nothing else: not the evaluator (any kind: it runs a command, talks to an endpoint, names a
 * credential or a program), verify (a command), notify (webhooks, IRC), protect (it makes the worker
 * run git in the repository with the repository's patterns), hooks (auto_start: false switches
 * supervision off), nor the supervisor's model, window, timeouts, last resort or session grace,
 * which are not thresholds of strictness, nor `safety` (its settings are honoured only from a trusted
 * file). Budgets are taken only where they are tighter than the base's (capBudgets). Pure.
 */
export function mergeUntrusted(project: ConfigFile, base: ConfigFile | null): UntrustedMerge {
  const taken: string[] = [];
  const ignored: string[] = [];
  const b = base?.supervisor ?? {};
  const supervisor: NonNullable<ConfigFile['supervisor']> = { ...b };
  const p = project.supervisor ?? {};
  for (const key of Object.keys(p) as Array<keyof typeof p>) {
    const name = `supervisor.${key}`;
    if (key === 'eval_interval' && p.eval_interval !== undefined) {
      const was = b.eval_interval ?? DEFAULTS.evalInterval;
      if (p.eval_interval <= was) {
        supervisor.eval_interval = p.eval_interval;
        taken.push(name);
      } else ignored.push(`${name} (${p.eval_interval} would evaluate less often than every ${was} turns)`);
    } else if (key === 'escalation_threshold' && p.escalation_threshold !== undefined) {
      const was = b.escalation_threshold ?? DEFAULTS.escalationThreshold;
      if (p.escalation_threshold <= was) {
        supervisor.escalation_threshold = p.escalation_threshold;
        taken.push(name);
      } else ignored.push(`${name} (${p.escalation_threshold} would escalate later than after ${was})`);
    } else if (key === 'idle_after' && p.idle_after !== undefined) {
      const was = b.idle_after ?? DEFAULTS.idleAfterMs;
      if (p.idle_after > 0 && (was === 0 || p.idle_after <= was)) {
        supervisor.idle_after = p.idle_after;
        taken.push(name);
      } else ignored.push(`${name} (${p.idle_after === 0 ? '0 would switch the idle watchdog off' : 'a slower idle watchdog'})`);
    } else ignored.push(name);
  }
  const budgets = capBudgets(project.budgets, base?.budgets);
  taken.push(...budgets.taken);
  ignored.push(...budgets.ignored);
  for (const key of Object.keys(project) as Array<keyof ConfigFile>) if (key !== 'supervisor' && key !== 'budgets') ignored.push(key);
  const cfg: ConfigFile = { ...(base ?? {}) };
  if (Object.keys(supervisor).length) cfg.supervisor = supervisor;
  if (budgets.budgets) cfg.budgets = budgets.budgets;
  return { cfg, taken, ignored };
}

type BudgetsFile = NonNullable<ConfigFile['budgets']>;
const BUDGET_KEYS = ['tokens', 'cost_usd', 'turns', 'wall_clock', 'warn_at'] as const;
const budgetText = (key: (typeof BUDGET_KEYS)[number], v: number) =>
  key === 'warn_at' ? `a warning at ${v}` : key === 'wall_clock' ? `${v} ms` : key === 'cost_usd' ? `$${v}` : `${v} ${key === 'tokens' ? 'tokens' : 'turns'}`;

/**
 * A project's budgets under the user's (`base`): the user's budgets are a ceiling no project file
 * lifts, trusted or not. Each budget of the project's is taken where the user has none or where it
 * is no higher than the user's; a higher one is ignored, naming the cap it would lift. The user's
 * budgets the project does not set stay. A warning threshold (`warn_at`) is taken only where it is
 * no later than the user's (default 0.8). Pure.
 */
export function capBudgets(
  project: BudgetsFile | undefined,
  base: BudgetsFile | undefined,
): { budgets: BudgetsFile | undefined; taken: string[]; ignored: string[] } {
  const taken: string[] = [];
  const ignored: string[] = [];
  const out: BudgetsFile = { ...(base ?? {}) };
  for (const key of BUDGET_KEYS) {
    const p = project?.[key];
    if (p === undefined) continue;
    // A warning threshold is tighter when lower (an earlier warning); the default is the user's unless they set one.
    const cap = base?.[key] ?? (key === 'warn_at' ? DEFAULT_WARN_AT : undefined);
    if (cap === undefined || p <= cap) {
      out[key] = p;
      taken.push(`budgets.${key}`);
    } else ignored.push(`budgets.${key} (${budgetText(key, p)} would lift your cap of ${budgetText(key, cap)})`);
  }
  return { budgets: Object.keys(out).length ? out : undefined, taken, ignored };
}

// ---------- the session's config ----------

/** `s` as one shell word, quoted only when it must be. */
export const shellWord = (s: string) => (/^[A-Za-z0-9_./:@=+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command that trusts a project (as the hook and the docs say it). */
export const trustCommand = (projectDir: string) => `warden trust ${shellWord(projectDir)}`;

export interface SessionConfig {
  /** The config the session's spec comes from; null: defaults. */
  cfg: ConfigFile | null;
  /** The file `hooks.auto_start` and the rest come from (for messages); null: none. */
  source: string | null;
  /** An untrusted project file that set more than it may: what was ignored, and how to trust it. */
  untrusted?: { file: string; ignored: string[]; trust: string };
}

/**
 * The config of a hooked session in `projectDir`: its `warden.yaml` as it is when the user trusts
 * that very text (its budgets no higher than the user's: capBudgets); else the user's config with the project's stricter thresholds (mergeUntrusted).
 * An untrusted file warden cannot read or parse is ignored as a whole. Throws a ConfigError when a
 * trusted project's file or the user's own is bad (the session is then not supervised, and hears why).
 */
export function sessionConfig(projectDir: string, env: NodeJS.ProcessEnv = process.env): SessionConfig {
  const userPath = findUserConfig(env);
  const loadBase = () => (userPath ? loadConfigFile(userPath) : null);
  const file = projectConfigFile(projectDir);
  if (!existsSync(file)) return { cfg: loadBase(), source: userPath };
  const trust = trustCommand(projectDir);
  let text: string;
  try {
    text = readConfigText(file);
  } catch (err) {
    return { cfg: loadBase(), source: userPath, untrusted: { file, ignored: [`the whole file (${(err as Error).message})`], trust } };
  }
  let entries: TrustEntry[] = [];
  try {
    entries = readTrustStore(env);
  } catch {
    // A damaged record trusts nothing; `warden trust --list` says what is wrong with it.
  }
  if (isTrusted(entries, projectDir, configDigest(text))) {
    // Used as a whole, except that its budgets only tighten the user's (a trusted file is still not the user's cap).
    const cfg = parseConfig(text, file);
    // Labels (groups, and their budgets) come only from the user's config: a repository cannot leave its group.
    const base = loadBase();
    const { budgets } = capBudgets(cfg.budgets, base?.budgets);
    const { budgets: _, labels: _labels, prices: _prices, ...rest } = cfg;
    return { cfg: { ...rest, ...(budgets && { budgets }), ...(base?.labels && { labels: base.labels }) }, source: file };
  }
  const base = loadBase();
  let project: ConfigFile;
  try {
    project = parseConfig(text, file);
  } catch (err) {
    return { cfg: base, source: userPath, untrusted: { file, ignored: [`the whole file (${(err as Error).message})`], trust } };
  }
  const m = mergeUntrusted(project, base);
  return { cfg: m.cfg, source: userPath, ...(m.ignored.length && { untrusted: { file, ignored: m.ignored, trust } }) };
}

// ---------- what a trusted file makes warden do ----------

const words = (argv: readonly string[]) => argv.map(shellWord).join(' ');

/**
 * What trusting a config lets it do, one line each: the commands it runs on the worker, the
 * endpoints it sends the session to, the credentials it reads, and the settings it changes.
 */
export function describeConfig(cfg: ConfigFile): string[] {
  const out: string[] = [];
  const model = (e: Extract<NonNullable<ConfigFile['evaluator']>, { kind: 'codex' | 'claude' | 'command' | 'openai' }>, what: string) => {
    if (e.kind === 'command')
      out.push(`${what}: runs on the worker, with the session's transcript on stdin: ${words(e.command)}${e.cwd ? ` (in ${e.cwd})` : ''}`);
    else if (e.kind === 'codex')
      out.push(
        `${what}: runs ${e.codex_path ?? 'codex'} on the worker with the session's transcript${e.config?.length ? `, config ${words(e.config)}` : ''}${e.credentials_home ? `, credentials from ${e.credentials_home}` : ''}`,
      );
    else if (e.kind === 'claude')
      out.push(
        `${what}: runs ${e.claude_path ?? 'claude'} -p on the worker with the session's transcript (model ${e.model ?? 'haiku'}, the worker's ANTHROPIC_* credentials)`,
      );
    else out.push(`${what}: sends the session's prompts and transcript to ${e.base_url}${e.api_key_env ? ` with the key in $${e.api_key_env}` : ''}`);
  };
  const e = cfg.evaluator;
  if (e?.kind === 'tiered') model(e.model, 'evaluator (tiered)');
  else if (e && e.kind !== 'heuristic') model(e, 'evaluator');
  if (cfg.verify !== undefined) {
    const v = typeof cfg.verify === 'string' ? { command: cfg.verify } : cfg.verify;
    out.push(`verify: runs \`sh -c ${shellWord(v.command)}\` on the worker when the agent claims done${'cwd' in v && v.cwd ? ` (in ${v.cwd})` : ''}`);
  }
  for (const w of cfg.notify?.webhooks ?? [])
    out.push(`notify: posts alerts, with their signed action links, to ${w.url}${w.secret_env ? ` (signed with $${w.secret_env})` : ''}`);
  if (cfg.notify?.irc !== undefined) out.push(`notify: posts alerts to IRC ${typeof cfg.notify.irc === 'string' ? cfg.notify.irc : cfg.notify.irc.channel}`);
  if (cfg.protect?.length) out.push(`protect: runs git in the project to check ${cfg.protect.join(', ')}`);
  if (cfg.hooks?.auto_start === false) out.push('hooks: auto_start: false (sessions here are not supervised)');
  for (const [k, v] of Object.entries(cfg.supervisor ?? {})) out.push(`supervisor.${k}: ${String(v)}`);
  for (const [k, v] of Object.entries(cfg.budgets ?? {})) out.push(`budgets.${k}: ${String(v)} (only where it is no higher than your own config's)`);
  for (const [k, v] of Object.entries(cfg.safety ?? {})) out.push(`safety.${k}: ${String(v)}`);
  if (cfg.labels) out.push('labels: not taken from a project (only your own config and --label set them)');
  if (cfg.prices) out.push('prices: not taken from a project (only your own config sets them)');
  return out;
}
