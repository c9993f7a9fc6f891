/** `warden mesh run|status|apply|cancel|resume`: many driven workers in parallel (meshWorkflow). */
import { type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { applyMesh, cancelMesh, meshStatus, newRunId, resumeMesh, startMesh } from '../../client/mesh.js';
import { meshWorkflowId } from '../../client/mesh.js';
import { TunablesSchema, type MeshInput, type TunablesInput } from '../../domain/mesh/config.js';
import { renderDashboard } from '../../domain/mesh/render.js';
import { parseTaskFile, TaskFileError } from '../../domain/mesh/tasks.js';
import type { AgentSpecInput, DriverConfig } from '../../domain/contract/schemas.js';
import { checkDriverCredentials, driverFromFlags } from './start.js';
import { describeZodError } from '../../domain/contract/schemas.js';
import { UsageError } from '../exit.js';
import { globals, withClient } from '../context.js';
import { print, printJson } from '../output.js';
import { visibleDeep } from '../../text/sanitize.js';

interface RunOptions {
  tasks: string;
  repo: string;
  runId?: string;
  cap?: string;
  tick?: string;
  ackSla?: string;
  checkpointInterval?: string;
  patchDraftTimeout?: string;
  firstEditTarget?: string;
  stallThreshold?: string;
  hedgeBudget?: string;
  conflictBudget?: string;
  timeBudget?: string;
  continueWaiting?: boolean;
  driver: string;
  driverCommand?: string;
  driverModel?: string;
  driverConfig?: string[];
  driverBaseUrl?: string;
  driverApiKeyEnv?: string;
  driverWireApi?: string;
  credentialCheck?: boolean;
  maxTurns?: string;
  /** Old name of --driver-command. */
  command?: string;
  /** Refused: on `warden start` --model is the evaluator's model; the workers' model is --driver-model. */
  model?: string;
  codexPath?: string;
  claudePath?: string;
  validate?: string;
  webhook?: string[];
  keepWorktrees?: boolean;
  webhookSecretEnv?: string;
  webhookFormat?: 'json' | 'slack';
  irc?: string;
}

const int = (v: string | undefined, name: string) => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name}: expected a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
};

/** Flags override the task file's "Tunable thresholds" block. */
export function tunablesFrom(o: RunOptions, fromFile: TunablesInput): TunablesInput {
  const flags: TunablesInput = {
    cap: int(o.cap, 'cap'),
    tickInterval: o.tick,
    ackSla: o.ackSla,
    checkpointInterval: o.checkpointInterval,
    patchDraftTimeout: o.patchDraftTimeout,
    firstEditTarget: o.firstEditTarget,
    stallThreshold: int(o.stallThreshold, 'stall-threshold'),
    hedgeBudget: int(o.hedgeBudget, 'hedge-budget'),
    conflictBudget: int(o.conflictBudget, 'conflict-budget'),
    timeBudget: o.timeBudget,
    continueWaiting: o.continueWaiting,
  };
  const merged = { ...fromFile, ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) } as TunablesInput;
  const r = TunablesSchema.safeParse(merged);
  if (!r.success) throw new UsageError(`invalid tunables: ${describeZodError(r.error)}`);
  return merged;
}

/**
 * `--model` was once the old name of --driver-model here, but on `warden start` it is the
 * evaluator's model: refused, so nobody sets the workers' model while meaning the evaluator's.
 */
export const MESH_MODEL_REFUSED =
  "--model: on mesh run, set the workers' model with --driver-model NAME (--model is the evaluator's model on warden start and evaluate; mesh run takes no evaluator flags)";

/**
 * The workers' driver, from the same flags as `warden start` (`--driver-command`, `--driver-model`,
 * `--driver-config`, `--driver-base-url`, …; the old `--command` still works, `--model` is refused), checked
 * the same way (relative paths resolved here, credentials looked for).
 */
export function driverFrom(o: RunOptions): { driver: DriverConfig; maxTurns?: number } {
  if (!['command', 'codex', 'claude'].includes(o.driver)) throw new UsageError(`--driver: one of command, codex, claude (got ${o.driver})`);
  if (o.command !== undefined && o.driverCommand !== undefined) throw new UsageError('--command is the old name of --driver-command: give one of them');
  if (o.model !== undefined) throw new UsageError(MESH_MODEL_REFUSED);
  if (o.codexPath !== undefined && o.driver !== 'codex') throw new UsageError('--codex-path only goes with --driver codex');
  if (o.claudePath !== undefined && o.driver !== 'claude') throw new UsageError('--claude-path only goes with --driver claude');
  const maxTurns = int(o.maxTurns, 'max-turns');
  const flags = {
    driver: o.driver as 'command' | 'codex' | 'claude',
    driverCommand: o.driverCommand ?? o.command,
    driverModel: o.driverModel,
    driverConfig: o.driverConfig,
    driverBaseUrl: o.driverBaseUrl,
    driverApiKeyEnv: o.driverApiKeyEnv,
    driverWireApi: o.driverWireApi,
    maxTurns,
    credentialCheck: o.credentialCheck,
  };
  const { driver } = driverFromFlags(flags);
  const withPath = { ...driver, ...(o.codexPath && { codexPath: o.codexPath }), ...(o.claudePath && { claudePath: o.claudePath }) } as DriverConfig;
  checkDriverCredentials({ driver: withPath } as AgentSpecInput, flags);
  return { driver: withPath, ...(maxTurns !== undefined && { maxTurns }) };
}

/** Where the mesh's alerts go, from the same flags as `warden start` (`--webhook`, `--webhook-secret-env`, `--webhook-format`, `--irc`). */
export function notifyFrom(o: Pick<RunOptions, 'webhook' | 'webhookSecretEnv' | 'webhookFormat' | 'irc'>): MeshInput['notify'] | undefined {
  if (!o.webhook?.length && (o.webhookFormat || o.webhookSecretEnv))
    throw new UsageError(`${o.webhookFormat ? '--webhook-format' : '--webhook-secret-env'} only goes with --webhook URL`);
  if (!o.webhook?.length && o.irc === undefined) return undefined;
  return {
    webhooks: (o.webhook ?? []).map((url) => ({
      url,
      ...(o.webhookSecretEnv && { secretEnv: o.webhookSecretEnv }),
      ...(o.webhookFormat && { format: o.webhookFormat }),
    })),
    ...(o.irc !== undefined && { irc: { channel: o.irc } }),
    log: true,
  };
}

export const runAction = async (o: RunOptions, cmd: Command) => {
  // `--webhook A B` (its old form) left B behind: name the flag, not just "too many arguments".
  if (cmd.args.length) throw new UsageError(`unexpected argument ${cmd.args[0]}: mesh run takes none (give --webhook once per URL: --webhook A --webhook B)`);
  let text: string;
  try {
    text = readFileSync(o.tasks, 'utf8');
  } catch (err) {
    throw new UsageError(`--tasks: cannot read ${o.tasks}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let file;
  try {
    file = parseTaskFile(text);
  } catch (err) {
    if (err instanceof TaskFileError) throw new UsageError(`--tasks ${o.tasks}: ${err.message}`);
    throw err;
  }
  const workers = driverFrom(o);
  const notify = notifyFrom(o);
  const input: MeshInput = {
    runId: o.runId ?? newRunId(),
    repo: o.repo,
    tasks: file.tasks,
    tunables: tunablesFrom(o, file.tunables),
    driver: workers.driver,
    ...(workers.maxTurns !== undefined && { workerMaxTurns: workers.maxTurns }),
    ...((o.validate ?? file.validate) ? { validate: o.validate ?? file.validate } : {}),
    ...(notify ? { notify } : {}),
    ...(o.keepWorktrees && { keepWorktrees: true }),
  };
  const r = await withClient(cmd, (c) => startMesh(c, input));
  if (globals(cmd).json) return printJson({ runId: r.runId, workflowId: r.workflowId });
  print(r.runId);
};

export const statusAction = async (runId: string, o: { log: string }, cmd: Command) => {
  const s = await withClient(cmd, (c) => meshStatus(c, runId));
  if (globals(cmd).json) return printJson(s);
  // Worker checkpoints reach the monitoring log as written: every string one line, controls visible.
  print(renderDashboard(visibleDeep(s), Date.now(), { logLines: Number(o.log) || 20 }));
};

export const applyAction = async (runId: string, _o: unknown, cmd: Command) => {
  const r = await withClient(cmd, (c) => applyMesh(c, runId));
  if (globals(cmd).json) return printJson(r);
  print(`merged mesh/${runId}/integration into ${r.branch} (${r.commit.slice(0, 12)})`);
};

export const cancelAction = async (runId: string, o: { reason?: string }, cmd: Command) => {
  await withClient(cmd, (c) => cancelMesh(c, runId, o.reason));
  if (globals(cmd).json) return printJson({ ok: true, workflowId: meshWorkflowId(runId) });
  print(`cancel sent to mesh ${runId}`);
};

export const resumeAction = async (runId: string, o: { note?: string }, cmd: Command) => {
  await withClient(cmd, (c) => resumeMesh(c, runId, o.note)); // exit 3 for an unknown run
  if (globals(cmd).json) return printJson({ ok: true });
  print(`resume sent to mesh ${runId}`);
};
