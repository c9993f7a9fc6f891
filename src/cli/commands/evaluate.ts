/** `warden evaluate --transcript FILE`: run one evaluation offline (no Temporal needed). */
import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { makeEvaluate } from '../../../activities/evaluate.js';
import { parseOrThrow } from '../../client/index.js';
import { loadConfigFile, specFromConfig } from '../../config/file.js';
import { EvaluatorConfigSchema, SupervisorConfigSchema, TurnSchema, type EvaluatorConfig } from '../../domain/schemas.js';
import { createLogger } from '../../logger.js';
import { globals } from '../context.js';
import { openaiEvaluatorFromFlags } from './start.js';
import { UsageError } from '../exit.js';
import { print, printJson } from '../output.js';

export const TranscriptSchema = z.object({ task: z.string().min(1, 'task must not be empty'), turns: z.array(TurnSchema) }).strict();

interface EvaluateOptions {
  transcript: string;
  evaluator: string;
  evaluatorCommand?: string;
  openaiBaseUrl?: string;
  openaiApiKeyEnv?: string;
  model: string;
  config?: string;
  timeout: string;
}

export function register(program: Command): void {
  program
    .command('evaluate')
    .description('evaluate a transcript offline and print the verdict (no Temporal needed)')
    .requiredOption('--transcript <file>', 'JSON file: {"task": "…", "turns": [Turn, …]}')
    .addOption(new Option('--evaluator <kind>', 'who judges').choices(['heuristic', 'codex', 'command', 'openai']).default('heuristic'))
    .option('--evaluator-command <argv>', 'for --evaluator command: program and args')
    .option('--openai-base-url <url>', 'for --evaluator openai: an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1')
    .option('--openai-api-key-env <name>', 'for --evaluator openai: env var holding the API key (omit for keyless servers)')
    .option('--model <name>', 'evaluator model', 'gpt-5.4')
    .option('--config <file>', 'take the evaluator from a config file')
    .option('--timeout <ms>', 'evaluation timeout in ms', '30000')
    .option('--json', 'print {kind, pattern, message} or {skipped: true, reason}')
    .action(async (o: EvaluateOptions, cmd: Command) => {
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(o.transcript, 'utf8'));
      } catch (err) {
        throw new UsageError(`cannot read transcript ${o.transcript}: ${(err as Error).message}`);
      }
      const transcript = parseOrThrow(TranscriptSchema, raw, 'transcript');
      let evaluator: EvaluatorConfig = { kind: 'heuristic' };
      if (o.config) evaluator = parseOrThrow(EvaluatorConfigSchema, specFromConfig(loadConfigFile(o.config)).evaluator ?? evaluator, 'evaluator');
      if (o.evaluator === 'command') {
        if (!o.evaluatorCommand) throw new UsageError('--evaluator command needs --evaluator-command "program args…"');
        evaluator = { kind: 'command', command: o.evaluatorCommand.split(/\s+/).filter(Boolean) };
      } else if (o.evaluator === 'codex') evaluator = { kind: 'codex', config: [] };
      else if (!o.config) evaluator = { kind: 'heuristic' };
      // --evaluator openai, or its flags over an openai evaluator from the config file.
      const openai = openaiEvaluatorFromFlags(o, evaluator);
      if (openai !== evaluator) evaluator = parseOrThrow(EvaluatorConfigSchema, openai, 'evaluator');
      const timeoutMs = SupervisorConfigSchema.shape.evalTimeoutMs.parse(Number(o.timeout));
      const evaluate = makeEvaluate(createLogger('warden-evaluate', process.env.WARDEN_LOG_LEVEL ?? 'warn'));
      const result = await evaluate({ agentId: 'offline', task: transcript.task, turns: transcript.turns, reason: 'interval', evaluator, model: o.model, timeoutMs });
      if (globals(cmd).json) {
        return printJson(result.kind === 'verdict' ? result.verdict : { skipped: true, reason: result.reason });
      }
      if (result.kind === 'skipped') return print(`skipped: ${result.reason}`);
      const v = result.verdict;
      print(v.kind === 'OK' ? 'OK' : `${v.kind}${v.pattern ? ` ${v.pattern}` : ''}: ${v.message}`);
    });
}
