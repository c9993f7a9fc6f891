/** The definition of this command (options, help); the implementation is ../commands/evaluate.ts, loaded when it runs. */
import { Option, type Command } from 'commander';
import { GROUP_BY } from '../../domain/judgement/group-by.js';
import { sampleOkFlag } from '../flags.js';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('evaluate')
    .description('evaluate a transcript offline and print the verdict (no Temporal needed)')
    .option('--transcript <file>', 'JSON file: {"task": "…", "turns": [Turn, …]}')
    .option(
      '--cases <file>',
      'JSONL file, one {"task", "turns", "label"} per line: score the evaluator on it (heuristic, tiered: also the triage of the first tier, no model asked)',
    )
    .option('--split <name>', 'with --cases: only the cases whose "split" is this')
    .addOption(new Option('--by <key>', 'with --cases: also score each group of cases: by the repository of "source", or by "split"').choices([...GROUP_BY]))
    .addOption(
      new Option('--evaluator <kind>', 'who judges (tiered: the heuristic, and a model only where it pays)')
        .choices(['heuristic', 'codex', 'claude', 'command', 'openai', 'tiered'])
        .default('heuristic'),
    )
    .addOption(
      new Option('--tier-model <kind>', 'for --evaluator tiered: the model asked where the heuristic flags, is unsure, or samples an OK').choices([
        'openai',
        'codex',
        'claude',
        'command',
      ]),
    )
    .option('--sample-ok <fraction>', 'for --evaluator tiered: fraction of OK windows also sent to the model (default 0.05)', sampleOkFlag)
    .option('--evaluator-command <argv>', 'for --evaluator command (or --tier-model command): program and args')
    .option('--openai-base-url <url>', 'for --evaluator openai (or --tier-model openai): an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1')
    .option('--openai-api-key-env <name>', 'for --evaluator openai (or --tier-model openai): env var holding the API key (omit for keyless servers)')
    .option(
      '--codex-config <key=value>',
      'for --evaluator codex (or --tier-model codex): a `-c` override passed to codex exec (repeatable)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option('--model <name>', 'evaluator model', 'gpt-5.4')
    .option('--config <file>', 'take the evaluator from a config file')
    .option('--timeout <ms>', 'evaluation timeout in ms', '30000')
    .option(
      '--json',
      'print {kind, pattern, message, evidence, finding?} (finding: the detector and a hash of its evidence, what dismiss matches) or {skipped: true, reason}; with --cases, one score object (with model calls, per window the tier that decided, and the triage of the first tier)',
    )
    .action(
      lazy(
        () => import('../commands/evaluate.js'),
        (m) => m.evaluateAction,
      ),
    );
}
