/** `warden start <agentId> --task TEXT`: start supervising an agent (config file, then flags). */
import { DEFAULT_WARN_AT } from '../../domain/agent/budgets.js';
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfigFile, specFromConfig } from '../../config/file.js';
import type { AgentSpecInput } from '../../domain/contract/schemas.js';
import { groupsOf, parseLabel } from '../../domain/contract/labels.js';
import { sampleOkFlag } from '../flags.js';
import { withClient, globals } from '../context.js';
import { UsageError } from '../exit.js';
import { jsonTooDeep } from '../../json-depth.js';
import { print, printJson } from '../output.js';
import { codexEndpointOverrides, missingCredentials, resolveCommandPaths, resolveWorkDir, type CredentialProbe, type FsProbe } from '../driver-setup.js';

interface StartOptions {
  task?: string;
  config?: string;
  evaluator?: 'heuristic' | 'codex' | 'claude' | 'command' | 'openai' | 'tiered';
  evaluatorCommand?: string;
  tierModel?: 'openai' | 'codex' | 'claude' | 'command';
  sampleOk?: number;
  openaiBaseUrl?: string;
  openaiApiKeyEnv?: string;
  codexConfig?: string[];
  model?: string;
  windowSize?: number;
  evalInterval?: number;
  escalationThreshold?: number;
  lastResort?: 'compact' | 'none';
  idleAfter?: number;
  evalTimeout?: number;
  webhook?: string[];
  webhookSecretEnv?: string;
  webhookFormat?: 'json' | 'slack';
  irc?: string;
  driver?: 'codex' | 'claude' | 'command' | 'scripted';
  driverCommand?: string;
  driverModel?: string;
  driverConfig?: string[];
  script?: string;
  workDir?: string;
  maxTurns?: number;
  driverBaseUrl?: string;
  driverApiKeyEnv?: string;
  driverWireApi?: string;
  credentialCheck?: boolean;
  workflowId?: string;
  verify?: string;
  verifyCwd?: string;
  verifyTimeout?: number;
  protect?: string[];
  budgetTokens?: number;
  budgetCostUsd?: number;
  budgetTurns?: number;
  budgetWallClock?: number;
  label?: string[];
  budgetWarnAt?: number;
}

/** Driven mode from flags: `--driver codex|claude|command|scripted` and its options. */
export function driverFromFlags(o: StartOptions, probe?: FsProbe): Pick<AgentSpecInput, 'driver' | 'driven'> {
  const only = (flag: string, value: unknown, kinds: string[]) => {
    if (value !== undefined && (!o.driver || !kinds.includes(o.driver))) throw new UsageError(`${flag} only goes with --driver ${kinds.join('|')}`);
  };
  only('--driver-command', o.driverCommand, ['command']);
  only('--script', o.script, ['scripted']);
  only('--driver-model', o.driverModel, ['codex', 'claude']);
  only('--driver-config', o.driverConfig, ['codex', 'claude']);
  only('--work-dir', o.workDir, ['codex', 'claude', 'command', 'scripted']);
  only('--max-turns', o.maxTurns, ['codex', 'claude', 'command', 'scripted']);
  only('--driver-base-url', o.driverBaseUrl, ['codex']);
  only('--driver-api-key-env', o.driverApiKeyEnv, ['codex']);
  only('--driver-wire-api', o.driverWireApi, ['codex']);
  if ((o.driverApiKeyEnv !== undefined || o.driverWireApi !== undefined) && o.driverBaseUrl === undefined) {
    throw new UsageError('--driver-api-key-env and --driver-wire-api go with --driver-base-url URL');
  }
  if (!o.driver) return {};
  // Relative paths are the caller's: the worker runs the agent in its own work directory.
  const driven = { ...(o.workDir && { workDir: resolveWorkDir(o.workDir, probe) }), ...(o.maxTurns !== undefined && { maxTurns: o.maxTurns }) };
  switch (o.driver) {
    case 'command':
      if (!o.driverCommand) throw new UsageError('--driver command needs --driver-command "program args…"');
      return { driver: { kind: 'command', command: resolveCommandPaths(o.driverCommand.split(/\s+/).filter(Boolean), probe) }, driven };
    case 'scripted': {
      if (!o.script) throw new UsageError('--driver scripted needs --script FILE (a JSON array of turns)');
      let turns: unknown;
      try {
        const text = readFileSync(o.script, 'utf8');
        const deep = jsonTooDeep(text, `--script ${o.script}`);
        if (deep) throw new Error(deep);
        turns = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`cannot read --script ${o.script}: ${(err as Error).message}`);
      }
      return { driver: { kind: 'scripted', turns: turns as never }, driven };
    }
    case 'codex': {
      const endpoint =
        o.driverBaseUrl !== undefined ? codexEndpointOverrides({ baseUrl: o.driverBaseUrl, apiKeyEnv: o.driverApiKeyEnv, wireApi: o.driverWireApi }) : [];
      // The endpoint first: an explicit --driver-config comes last and wins, as in codex.
      return { driver: { kind: 'codex', config: [...endpoint, ...(o.driverConfig ?? [])], ...(o.driverModel && { model: o.driverModel }) }, driven };
    }
    case 'claude':
      return { driver: { kind: 'claude', args: o.driverConfig ?? [], ...(o.driverModel && { model: o.driverModel }) }, driven };
  }
}

/** Refuse (exit 2) a codex/claude agent that could not authenticate; see driver-setup.ts. */
export function checkDriverCredentials(spec: AgentSpecInput, o: StartOptions, probe?: CredentialProbe): void {
  if (o.credentialCheck === false || !spec.driver) return;
  const why = missingCredentials(
    spec.driver as { kind: string; config?: string[]; credentialsHome?: string },
    o.driverBaseUrl !== undefined ? { apiKeyEnv: o.driverApiKeyEnv } : undefined,
    probe,
  );
  if (why) throw new UsageError(why);
}

export function buildSpec(agentId: string, o: StartOptions): AgentSpecInput {
  const fromFile = o.config ? specFromConfig(loadConfigFile(o.config)) : {};
  if (!o.task) throw new UsageError('--task is required: what the agent was asked to do');
  const supervisor = {
    ...(fromFile.supervisor ?? {}),
    ...(o.model !== undefined && { model: o.model }),
    ...(o.windowSize !== undefined && { windowSize: o.windowSize }),
    ...(o.evalInterval !== undefined && { evalInterval: o.evalInterval }),
    ...(o.escalationThreshold !== undefined && { escalationThreshold: o.escalationThreshold }),
    ...(o.lastResort !== undefined && { lastResort: o.lastResort }),
    ...(o.idleAfter !== undefined && { idleAfterMs: o.idleAfter }),
    ...(o.evalTimeout !== undefined && { evalTimeoutMs: o.evalTimeout }),
  };
  const evaluator = evaluatorFromFlags(o, fromFile.evaluator);
  const notify = { ...(fromFile.notify ?? {}) };
  if (o.webhook?.length) {
    notify.webhooks = [
      ...(notify.webhooks ?? []),
      ...o.webhook.map((url) => ({ url, ...(o.webhookSecretEnv && { secretEnv: o.webhookSecretEnv }), ...(o.webhookFormat && { format: o.webhookFormat }) })),
    ];
  } else if (o.webhookFormat) {
    throw new UsageError('--webhook-format only goes with --webhook URL');
  }
  if (o.irc !== undefined) notify.irc = { channel: o.irc };
  const budgets = budgetsFromFlags(o, fromFile.budgets);
  const labels = labelsFromFlags(o.label, fromFile.labels);
  return {
    agentId,
    task: o.task,
    supervisor,
    ...(evaluator && { evaluator }),
    notify,
    ...driverFromFlags(o),
    ...doneFromFlags(o, fromFile),
    ...(Object.keys(budgets).length > 0 && { budgets }),
    ...(fromFile.safety && { safety: fromFile.safety }),
    ...(Object.keys(labels).length > 0 && { labels }),
  };
}

/** `--label key=value` (repeatable) over the config file's `labels:`; a bad one is refused naming it. */
export function labelsFromFlags(flags: string[] = [], fromFile: Record<string, string> = {}): Record<string, string> {
  const out = { ...fromFile };
  for (const f of flags) {
    const l = parseLabel(f);
    if ('error' in l) throw new UsageError(`--label ${l.error}`);
    out[l.key] = l.value;
  }
  return out;
}

/**
 * Budgets from `--budget-tokens`, `--budget-cost-usd`, `--budget-turns`, `--budget-wall-clock` and
 * `--budget-warn-at`, each over the config file's `budgets.tokens`, `.cost_usd`, `.turns`,
 * `.wall_clock`, `.warn_at` (the flags and
 * `--config` are both the caller's, so a flag may set a budget higher than the file's).
 */
export function budgetsFromFlags(
  o: Pick<StartOptions, 'budgetTokens' | 'budgetCostUsd' | 'budgetTurns' | 'budgetWallClock' | 'budgetWarnAt'>,
  fromFile: AgentSpecInput['budgets'] = {},
): NonNullable<AgentSpecInput['budgets']> {
  return {
    ...fromFile,
    ...(o.budgetTokens !== undefined && { tokens: o.budgetTokens }),
    ...(o.budgetCostUsd !== undefined && { costUsd: o.budgetCostUsd }),
    ...(o.budgetTurns !== undefined && { turns: o.budgetTurns }),
    ...(o.budgetWallClock !== undefined && { wallClockMs: o.budgetWallClock }),
    ...(o.budgetWarnAt !== undefined && { warnAt: o.budgetWarnAt }),
  };
}

/** Definition of done from `--verify`, `--verify-cwd`, `--verify-timeout` and `--protect`, over the config file's. */
export function doneFromFlags(o: StartOptions, fromFile: Pick<AgentSpecInput, 'verify' | 'protect'> = {}): Pick<AgentSpecInput, 'verify' | 'protect'> {
  const command = o.verify ?? fromFile.verify?.command;
  if (command === undefined && (o.verifyCwd !== undefined || o.verifyTimeout !== undefined))
    throw new UsageError('--verify-cwd and --verify-timeout go with --verify "<command>"');
  // A relative --verify-cwd is the caller's: the worker may run elsewhere.
  const cwd = o.verifyCwd !== undefined ? resolve(o.verifyCwd) : fromFile.verify?.cwd;
  const timeoutMs = o.verifyTimeout ?? fromFile.verify?.timeoutMs;
  const protect = [...(fromFile.protect ?? []), ...(o.protect ?? [])];
  return {
    ...(command !== undefined && { verify: { command, ...(cwd !== undefined && { cwd }), ...(timeoutMs !== undefined && { timeoutMs }) } }),
    ...(protect.length > 0 && { protect }),
  };
}

/** The evaluator from `--evaluator` and its flags, over the config file's. */
function evaluatorFromFlags(o: StartOptions, fromFile: EvaluatorInput | undefined): EvaluatorInput | undefined {
  if (o.evaluator === 'tiered' || (o.evaluator === undefined && fromFile?.kind === 'tiered')) return tieredEvaluatorFromFlags(o, fromFile);
  if (o.tierModel !== undefined || o.sampleOk !== undefined) throw new UsageError('--tier-model and --sample-ok only go with --evaluator tiered');
  let evaluator = fromFile;
  if (o.evaluator === 'heuristic') evaluator = { kind: 'heuristic' };
  if (o.evaluator === 'codex') evaluator = { kind: 'codex', config: o.codexConfig ?? [] };
  // The model of a claude evaluator comes from the config file (default haiku), not --model.
  if (o.evaluator === 'claude') evaluator = fromFile?.kind === 'claude' ? fromFile : { kind: 'claude' };
  if (o.evaluator === 'command') {
    if (!o.evaluatorCommand) throw new UsageError('--evaluator command needs --evaluator-command "program args…"');
    evaluator = { kind: 'command', command: resolveCommandPaths(o.evaluatorCommand.split(/\s+/).filter(Boolean)) };
  } else if (o.evaluatorCommand) {
    throw new UsageError('--evaluator-command only goes with --evaluator command');
  }
  return openaiEvaluatorFromFlags(o, evaluator);
}

/** `--sample-ok FRACTION`: a number from 0 to 1 (the parser lives with the definitions, in ../flags.ts). */
export { sampleOkFlag };

/**
 * `--evaluator tiered --tier-model openai|codex|command [--sample-ok FRACTION]`: the heuristic on
 * every window, the model tier configured with the flags of that evaluator (`--openai-base-url`,
 * `--openai-api-key-env`; `--evaluator-command`; `--codex-config`). Over a `tiered` evaluator from
 * the config file, the flags override its fields. Shared with `warden evaluate`.
 */
export function tieredEvaluatorFromFlags(
  o: { tierModel?: string; sampleOk?: number; openaiBaseUrl?: string; openaiApiKeyEnv?: string; evaluatorCommand?: string; codexConfig?: string[] },
  current: EvaluatorInput | undefined,
): EvaluatorInput {
  const fromFile = current?.kind === 'tiered' ? current : undefined;
  const kind = o.tierModel ?? fromFile?.model.kind;
  if (!kind) throw new UsageError('--evaluator tiered needs --tier-model openai|codex|claude|command: the model asked where the heuristic flags or is unsure');
  if (!['openai', 'codex', 'claude', 'command'].includes(kind))
    throw new UsageError(`--tier-model must be openai, codex, claude or command, got ${JSON.stringify(kind)}`);
  const fileModel = fromFile?.model.kind === kind ? fromFile.model : undefined;
  const only = (flag: string, value: unknown, k: string) => {
    if (value !== undefined && kind !== k) throw new UsageError(`${flag} goes with --tier-model ${k}, not ${kind}`);
  };
  only('--openai-base-url', o.openaiBaseUrl, 'openai');
  only('--openai-api-key-env', o.openaiApiKeyEnv, 'openai');
  only('--evaluator-command', o.evaluatorCommand, 'command');
  only('--codex-config', o.codexConfig, 'codex');
  let model: Extract<EvaluatorInput, { kind: 'tiered' }>['model'];
  if (kind === 'openai') {
    model = openaiEvaluatorFromFlags({ ...o, evaluator: 'openai' }, fileModel) as typeof model;
  } else if (kind === 'command') {
    const command = o.evaluatorCommand
      ? resolveCommandPaths(o.evaluatorCommand.split(/\s+/).filter(Boolean))
      : fileModel?.kind === 'command'
        ? fileModel.command
        : undefined;
    if (!command?.length) throw new UsageError('--tier-model command needs --evaluator-command "program args…"');
    model = { ...(fileModel?.kind === 'command' ? fileModel : {}), kind: 'command', command };
  } else if (kind === 'claude') {
    model = fileModel?.kind === 'claude' ? fileModel : { kind: 'claude' };
  } else {
    model = {
      ...(fileModel?.kind === 'codex' ? fileModel : {}),
      kind: 'codex',
      config: o.codexConfig ?? (fileModel?.kind === 'codex' ? (fileModel.config ?? []) : []),
    };
  }
  const sampleOk = o.sampleOk ?? fromFile?.sampleOk;
  return { kind: 'tiered', model, ...(sampleOk !== undefined && { sampleOk }) };
}

type EvaluatorInput = NonNullable<AgentSpecInput['evaluator']>;

/**
 * `--evaluator openai` with `--openai-base-url` / `--openai-api-key-env` (the model is `--model`).
 * The flags also override the fields of an `openai` evaluator from the config file; with any other
 * evaluator they are a usage error. Shared with `warden evaluate`.
 */
export function openaiEvaluatorFromFlags(
  o: { evaluator?: string; openaiBaseUrl?: string; openaiApiKeyEnv?: string },
  current: EvaluatorInput | undefined,
): EvaluatorInput | undefined {
  const flags = o.openaiBaseUrl !== undefined || o.openaiApiKeyEnv !== undefined;
  const fromFile = current?.kind === 'openai' ? current : undefined;
  if (o.evaluator !== 'openai' && !(fromFile && flags)) {
    if (flags) throw new UsageError('--openai-base-url and --openai-api-key-env only go with --evaluator openai');
    return current;
  }
  const baseUrl = o.openaiBaseUrl ?? fromFile?.baseUrl;
  if (!baseUrl) throw new UsageError('--evaluator openai needs --openai-base-url URL, e.g. http://127.0.0.1:11434/v1');
  const apiKeyEnv = o.openaiApiKeyEnv ?? fromFile?.apiKeyEnv;
  return { ...fromFile, kind: 'openai', baseUrl, ...(apiKeyEnv !== undefined && { apiKeyEnv }) };
}

export const startAction = async (agentId: string, o: StartOptions, cmd: Command) => {
  const spec = buildSpec(agentId, o);
  checkDriverCredentials(spec, o);
  const r = await withClient(cmd, (c) => c.start(spec, { ...(o.workflowId !== undefined && { workflowId: o.workflowId }) }));
  if (globals(cmd).json) return printJson({ agentId, workflowId: r.workflowId, runId: r.runId, spec: r.spec, searchAttributes: r.searchAttributes });
  print(`started ${r.workflowId} (run ${r.runId})`);
  print(
    `  evaluator ${r.spec.evaluator.kind}, every ${r.spec.supervisor.evalInterval} turns over the last ${r.spec.supervisor.windowSize}, ${r.spec.supervisor.lastResort === 'compact' ? 'compacts the agent once, then escalates' : 'escalates'} at step ${r.spec.supervisor.escalationThreshold}`,
  );
  if (r.spec.verify || r.spec.protect.length)
    print(
      `  verified done: ${r.spec.verify ? `\`${r.spec.verify.command}\`` : 'no command'}${r.spec.protect.length ? `, protecting ${r.spec.protect.join(' ')}` : ''} (checked when the agent reports "done": true)`,
    );
  const b = r.spec.budgets;
  const caps = [
    b.tokens !== undefined && `${b.tokens} tokens`,
    b.costUsd !== undefined && `$${b.costUsd}`,
    b.turns !== undefined && `${b.turns} turns`,
    b.wallClockMs !== undefined && `${formatMs(b.wallClockMs)} of wall-clock time`,
  ].filter(Boolean);
  if (caps.length) print(`  budgets: pauses at ${caps.join(', ')}; warns at ${Math.round((b.warnAt ?? DEFAULT_WARN_AT) * 100)}% of each`);
  if (!r.searchAttributes) print('  note: Warden* search attributes are not registered on this namespace; list/filters by state are unavailable');
  const groups = groupsOf(r.spec.labels);
  if (groups.length && r.labelsSearchable) print(`  labels: ${groups.join(', ')} (its spend counts in each group's budget: warden group status <key=value>)`);
  else if (groups.length)
    print(`  note: labels ${groups.join(', ')} are not searchable (WardenLabels is not registered on this namespace): no group budget sees this agent`);
  print(`  report turns: echo '{"text":"…"}' | warden report ${agentId}`);
};

/** A duration in words for the start summary: 2h, 90m, 45s, or ms. */
function formatMs(ms: number): string {
  for (const [unit, n] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % n === 0) return `${ms / n}${unit}`;
  return `${ms}ms`;
}
