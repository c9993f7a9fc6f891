/**
 * `warden evaluate --transcript FILE`: run one evaluation offline (no Temporal needed).
 * `warden evaluate --cases FILE.jsonl`: score an evaluator on labelled `{task, turns, label}` lines.
 */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { makeEvaluate } from '../../../activities/evaluate.js';
import { parseOrThrow } from '../../client/index.js';
import { loadConfigFile, specFromConfig } from '../../config/file.js';
import { EvaluatorConfigSchema, SupervisorConfigSchema, TurnSchema, type EvaluatorConfig } from '../../domain/contract/schemas.js';
import { CaseFileError, formatGroups, formatScore, parseCases, type GroupBy } from '../../domain/judgement/scoring.js';
import { createLogger } from '../../logger.js';
import { formatTriage } from '../../domain/judgement/triage.js';
import { scoreCases, type EvaluateFn } from './score-cases.js';
import { globals } from '../context.js';
import { openaiEvaluatorFromFlags, tieredEvaluatorFromFlags } from './start.js';
import { UsageError } from '../exit.js';
import { jsonTooDeep } from '../../json-depth.js';
import { print, printJson } from '../output.js';

export const TranscriptSchema = z
  .object({
    task: z.string().min(1, 'task must not be empty'),
    turns: z.array(TurnSchema),
    reason: z.enum(['interval', 'idle']).optional(),
    evidenceFrom: z.number().int().nonnegative().optional(),
    firstTurnNumber: z.number().int().positive().optional(),
  })
  .strict();

interface EvaluateOptions {
  transcript?: string;
  cases?: string;
  split?: string;
  by?: GroupBy;
  evaluator: string;
  evaluatorCommand?: string;
  codexConfig?: string[];
  tierModel?: string;
  sampleOk?: number;
  openaiBaseUrl?: string;
  openaiApiKeyEnv?: string;
  model: string;
  config?: string;
  timeout: string;
}

async function runCases(
  file: string,
  split: string | undefined,
  by: GroupBy | undefined,
  evaluate: EvaluateFn,
  evaluator: EvaluatorConfig,
  model: string,
  timeoutMs: number,
  json: boolean,
) {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read cases ${file}: ${(err as Error).message}`);
  }
  const deep = jsonTooDeep(text, file);
  if (deep) throw new UsageError(deep);
  let cases;
  try {
    cases = parseCases(text);
  } catch (err) {
    if (err instanceof CaseFileError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
  if (split) cases = cases.filter((c) => c.split === split);
  if (cases.length === 0) throw new UsageError(`${file}: no case has split ${JSON.stringify(split)}`);
  const { results, windows, score: s, groups, triage: tri, cost } = await scoreCases(cases, { by, evaluate, evaluator, model, timeoutMs });
  const misses = results.filter((r) => r.predicted !== r.label);
  if (json) {
    return printJson({
      file,
      split: split ?? null,
      evaluator: evaluator.kind,
      ...s,
      ...(groups ? { by, groups } : {}),
      ...cost,
      misses: misses.map(({ verdict, group, ...m }) => ({ ...m, ...(by ? { group } : {}), message: verdict?.message ?? null })),
      ...(evaluator.kind === 'tiered' && { tiers: windows }),
      ...(tri && { triage: tri }),
    });
  }
  for (const l of formatScore(s)) print(l);
  if (groups) {
    print();
    print(`by ${by}:`);
    for (const l of formatGroups(groups)) print(`  ${l}`);
  }
  print();
  print(
    `model calls: ${cost.modelCalls} for ${cost.windows} windows${cost.modelFailures ? ` (${cost.modelFailures} failed)` : ''}; ${cost.modelTokens.total} tokens, $${cost.modelCostUsd.toFixed(4)}${evaluator.kind === 'tiered' ? `; decided by the heuristic ${cost.decided.heuristic}, by the model ${cost.decided.model}` : ''}`,
  );
  if (evaluator.kind === 'tiered') {
    const asked = (why: string) => windows.filter((w) => w.asked === why).length;
    print(
      `  the model was asked on ${asked('flagged')} flagged, ${asked('unsure')} unsure and ${asked('sampled')} sampled windows; an ${evaluator.model.kind} evaluator alone would make ${cost.windows} calls`,
    );
  }
  if (tri) {
    print();
    for (const l of formatTriage(tri)) print(l);
  }
  if (misses.length) {
    print();
    print('misses:');
    for (const m of misses)
      print(
        `  line ${m.line}${m.id ? ` (${m.id})` : ''}: label ${m.label}, got ${m.predicted}${m.skipped ? ` (${m.skipped})` : m.verdict?.message ? `: ${m.verdict.message.slice(0, 100)}` : ''}`,
      );
  }
}

export const evaluateAction = async (o: EvaluateOptions, cmd: Command) => {
  if (!o.transcript === !o.cases) throw new UsageError('give exactly one of --transcript FILE or --cases FILE.jsonl');
  if (o.split && !o.cases) throw new UsageError('--split goes with --cases');
  if (o.by && !o.cases) throw new UsageError('--by goes with --cases');
  let evaluator: EvaluatorConfig = { kind: 'heuristic' };
  if (o.config) evaluator = parseOrThrow(EvaluatorConfigSchema, specFromConfig(loadConfigFile(o.config)).evaluator ?? evaluator, 'evaluator');
  if (o.evaluator === 'tiered' || (evaluator.kind === 'tiered' && o.evaluator === 'heuristic')) {
    // --evaluator tiered --tier-model …, or a tiered evaluator from the config file (flags override it).
    evaluator = parseOrThrow(EvaluatorConfigSchema, tieredEvaluatorFromFlags(o, evaluator), 'evaluator');
  } else {
    if (o.tierModel !== undefined || o.sampleOk !== undefined) throw new UsageError('--tier-model and --sample-ok only go with --evaluator tiered');
    if (o.codexConfig && o.evaluator !== 'codex') throw new UsageError('--codex-config goes with --evaluator codex (or --tier-model codex)');
    if (o.evaluator === 'command') {
      if (!o.evaluatorCommand) throw new UsageError('--evaluator command needs --evaluator-command "program args…"');
      evaluator = { kind: 'command', command: o.evaluatorCommand.split(/\s+/).filter(Boolean) };
    } else if (o.evaluator === 'codex') evaluator = { kind: 'codex', config: o.codexConfig ?? [] };
    else if (o.evaluator === 'claude') evaluator = evaluator.kind === 'claude' ? evaluator : { kind: 'claude' };
    else if (!o.config) evaluator = { kind: 'heuristic' };
    // --evaluator openai, or its flags over an openai evaluator from the config file.
    const openai = openaiEvaluatorFromFlags(o, evaluator);
    if (openai !== evaluator) evaluator = parseOrThrow(EvaluatorConfigSchema, openai, 'evaluator');
  }
  const timeoutMs = SupervisorConfigSchema.shape.evalTimeoutMs.parse(Number(o.timeout));
  const evaluate = makeEvaluate(createLogger('warden-evaluate', process.env.WARDEN_LOG_LEVEL ?? 'warn'));
  if (o.cases) return runCases(o.cases, o.split, o.by, evaluate, evaluator, o.model, timeoutMs, globals(cmd).json === true);
  let raw: unknown;
  try {
    const text = readFileSync(o.transcript!, 'utf8');
    const deep = jsonTooDeep(text, 'the transcript');
    if (deep) throw new Error(deep);
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`cannot read transcript ${o.transcript}: ${(err as Error).message}`);
  }
  const transcript = parseOrThrow(TranscriptSchema, raw, 'transcript');
  const result = await evaluate({
    agentId: 'offline',
    task: transcript.task,
    turns: transcript.turns,
    reason: transcript.reason ?? 'interval',
    evidenceFrom: transcript.evidenceFrom,
    firstTurnNumber: transcript.firstTurnNumber,
    evaluator,
    model: o.model,
    timeoutMs,
  });
  if (globals(cmd).json) {
    return printJson(result.kind === 'verdict' ? result.verdict : { skipped: true, reason: result.reason });
  }
  if (result.kind === 'skipped') return print(`skipped: ${result.reason}`);
  const v = result.verdict;
  const on = v.evidence?.length ? ` (turns ${v.evidence.join(', ')})` : '';
  print(v.kind === 'OK' ? 'OK' : `${v.kind}${v.pattern ? ` ${v.pattern}` : ''}: ${v.message}${on}`);
  if (evaluator.kind === 'tiered') {
    const why = result.asked ? `the model was asked (${result.asked})` : 'the model was not asked';
    print(`  decided by the ${result.tier}; ${why}${result.modelError ? `; the model failed: ${result.modelError}` : ''}`);
  }
};
