/** `warden start <agentId> --task TEXT`: start supervising an agent (config file, then flags). */
import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfigFile, specFromConfig } from '../../config/file.js';
import type { AgentSpecInput } from '../../domain/contract/schemas.js';
import { parseDuration } from '../../domain/contract/schemas.js';
import { withClient, globals } from '../context.js';
import { UsageError } from '../exit.js';
import { jsonTooDeep } from '../../json-depth.js';
import { print, printJson } from '../output.js';
import { codexEndpointOverrides, missingCredentials, resolveCommandPaths, resolveWorkDir, type CredentialProbe, type FsProbe } from '../driver-setup.js';

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n)) throw new UsageError(`${name} must be an integer, got ${JSON.stringify(v)}`);
  return n;
};
const duration = (name: string) => (v: string) => {
  if (/^\d+$/.test(v)) return Number(v);
  try {
    return parseDuration(v);
  } catch {
    throw new UsageError(`${name} must be a duration like 30s, 10m or a number of ms, got ${JSON.stringify(v)}`);
  }
};
const collect = (v: string, prev: string[] = []) => [...prev, v];

interface StartOptions {
  task?: string;
  config?: string;
  evaluator?: 'heuristic' | 'codex' | 'command' | 'openai' | 'tiered';
  evaluatorCommand?: string;
  tierModel?: 'openai' | 'codex' | 'command';
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
  return { agentId, task: o.task, supervisor, ...(evaluator && { evaluator }), notify, ...driverFromFlags(o), ...doneFromFlags(o, fromFile) };
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
  if (o.evaluator === 'command') {
    if (!o.evaluatorCommand) throw new UsageError('--evaluator command needs --evaluator-command "program args…"');
    evaluator = { kind: 'command', command: resolveCommandPaths(o.evaluatorCommand.split(/\s+/).filter(Boolean)) };
  } else if (o.evaluatorCommand) {
    throw new UsageError('--evaluator-command only goes with --evaluator command');
  }
  return openaiEvaluatorFromFlags(o, evaluator);
}

/** `--sample-ok FRACTION`: a number from 0 to 1. */
export function sampleOkFlag(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new UsageError(`--sample-ok must be a fraction from 0 to 1 (e.g. 0.05), got ${JSON.stringify(v)}`);
  return n;
}

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
  if (!kind) throw new UsageError('--evaluator tiered needs --tier-model openai|codex|command: the model asked where the heuristic flags or is unsure');
  if (!['openai', 'codex', 'command'].includes(kind)) throw new UsageError(`--tier-model must be openai, codex or command, got ${JSON.stringify(kind)}`);
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

export function register(program: Command): void {
  program
    .command('start')
    .description('start supervising an agent (workflow agent-<agentId>)')
    .argument('<agentId>', 'the agent id: letters, digits, . _ -')
    .option('--task <text>', 'the original task the agent was given (required)')
    .option('--config <file>', 'YAML config file with supervisor defaults and channels (flags override it)')
    .addOption(
      new Option('--evaluator <kind>', 'who judges the window (tiered: the heuristic, and a model only where it pays)').choices([
        'heuristic',
        'codex',
        'command',
        'openai',
        'tiered',
      ]),
    )
    .addOption(
      new Option('--tier-model <kind>', 'for --evaluator tiered: the model asked where the heuristic flags, is unsure, or samples an OK').choices([
        'openai',
        'codex',
        'command',
      ]),
    )
    .option('--sample-ok <fraction>', 'for --evaluator tiered: fraction of OK windows also sent to the model (default 0.05)', sampleOkFlag)
    .option(
      '--evaluator-command <argv>',
      'for --evaluator command (or --tier-model command): the program and its args (prompt on stdin, verdict line on stdout)',
    )
    .option(
      '--openai-base-url <url>',
      'for --evaluator openai (or --tier-model openai): an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 (model: --model)',
    )
    .option(
      '--openai-api-key-env <name>',
      'for --evaluator openai (or --tier-model openai): env var on the worker holding the API key (omit for keyless servers)',
    )
    .option('--codex-config <key=value>', 'for --evaluator codex (or --tier-model codex): a `-c` override passed to codex exec (repeatable)', collect)
    .option('--model <name>', 'evaluator model (default gpt-5.4)')
    .option('--window-size <n>', 'turns of history to evaluate (default 20)', int('--window-size'))
    .option('--eval-interval <n>', 'evaluate every N turns (default 5)', int('--eval-interval'))
    .option('--escalation-threshold <n>', 'non-OK verdicts in a row before escalating (default 3, never below 3)', int('--escalation-threshold'))
    .addOption(
      new Option(
        '--last-resort <what>',
        'at the escalation threshold, first compact the agent (a fresh context holding a handoff) and escalate only if the problem persists; none escalates at once (default)',
      ).choices(['compact', 'none']),
    )
    .option('--idle-after <duration>', 'evaluate once after this much silence, e.g. 10m (0 disables)', duration('--idle-after'))
    .option('--eval-timeout <duration>', 'evaluation timeout (default and maximum 30s)', duration('--eval-timeout'))
    .option('--webhook <url>', 'POST escalations to this URL (repeatable)', collect)
    .option('--webhook-secret-env <name>', 'env var on the worker holding the HMAC secret for --webhook')
    .addOption(
      new Option('--webhook-format <format>', 'body of --webhook: json (the event) or slack ({text, blocks} for chat tools)').choices(['json', 'slack']),
    )
    .option('--irc <#channel>', "post this agent's alerts to an IRC channel through the `warden irc` bot")
    .addOption(new Option('--driver <kind>', 'driven mode: warden runs the agent itself').choices(['codex', 'claude', 'command', 'scripted']))
    .option('--driver-command <argv>', 'for --driver command: a program speaking the turn protocol (docs/using/driven.md)')
    .option('--script <file>', 'for --driver scripted: a JSON array of turns to play')
    .option('--driver-model <name>', 'for --driver codex|claude: the agent model')
    .option(
      '--driver-config <value>',
      'for --driver codex: a `-c key=value` override for codex exec; for --driver claude: an extra CLI argument (repeatable)',
      collect,
    )
    .option('--work-dir <dir>', "driven mode: the agent's working directory (default $WARDEN_HOME/agents/<id>/work)")
    .option('--max-turns <n>', 'driven mode: stop after this many turns (default 50)', int('--max-turns'))
    .option('--driver-base-url <url>', 'for --driver codex: an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (a codex model_providers entry)')
    .option('--driver-api-key-env <name>', 'for --driver codex with --driver-base-url: env var on the worker holding the API key (omit for keyless servers)')
    .option('--driver-wire-api <api>', 'for --driver codex with --driver-base-url: the wire API codex speaks to it (default responses)')
    .option('--no-credential-check', 'for --driver codex|claude: start even if no credentials are visible here (the worker has its own)')
    .option('--verify <command>', 'definition of done: run this (sh -c) when the agent claims it is done; exit 0 passes, else the agent is told and goes on')
    .option('--verify-cwd <dir>', "for --verify: where it runs (default a driven agent's work dir, else the worker's)")
    .option('--verify-timeout <duration>', 'for --verify: kill it after this long, e.g. 5m (default 10m, at most 1h)', duration('--verify-timeout'))
    .option(
      '--protect <glob>',
      "a path the agent must not delete or weaken, e.g. 'test/**' or '*.snap' (repeatable); checked in the working tree's git diff at a done-claim",
      collect,
    )
    .option('--workflow-id <id>', 'refuse to start unless the workflow id is this (it is always agent-<agentId>)')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
Examples:
  warden start fixer --task "make the failing build pass"
  warden start fixer --task "…" --verify "npm test" --verify-cwd ./repo --protect 'test/**' --protect '*.snap'
  warden start fixer --task "…" --driver codex --last-resort compact
  warden start fixer --task "…" --config warden.yaml --webhook http://127.0.0.1:9000/hook
  warden start fixer --task "…" --irc '#alerts' --webhook https://hooks.slack.com/services/… --webhook-format slack
  warden start fixer --task "…" --evaluator command --evaluator-command "python3 judge.py"
  warden start bot --task "…" --driver command --driver-command "python3 my_agent.py" --work-dir ./repo
  warden start cx --task "…" --driver codex --driver-base-url http://127.0.0.1:8000/v1 --driver-api-key-env MY_KEY --driver-model my-model
  warden start fixer --task "…" --evaluator openai --openai-base-url http://127.0.0.1:11434/v1 --model llama3.2
  warden start fixer --task "…" --evaluator tiered --tier-model openai --openai-base-url http://127.0.0.1:11434/v1 --sample-ok 0.05`,
    )
    .action(async (agentId: string, o: StartOptions, cmd: Command) => {
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
      if (!r.searchAttributes) print('  note: Warden* search attributes are not registered on this namespace; list/filters by state are unavailable');
      print(`  report turns: echo '{"text":"…"}' | warden report ${agentId}`);
    });
}
