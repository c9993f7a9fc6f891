/** The definition of this command (options, help); the implementation is ../commands/cases.ts, loaded when it runs. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  const cases = program.command('cases').description('labelled cases from what humans decided about flagged windows');
  cases
    .command('export')
    .description(
      'write the flagged windows humans decided as JSONL cases for `warden evaluate --cases`: dismissed → OK, an escalation resumed without dismissing or aborted → its pattern; windows nobody decided are skipped',
    )
    .argument('<agentId...>', 'one or more agents')
    .option('--out <file>', 'write the cases to this file (default: stdout)')
    .option('--json', 'print a summary as JSON (with --out), or the summary and the cases (without)')
    .action(
      lazy(
        () => import('../commands/cases.js'),
        (m) => m.exportCasesAction,
      ),
    );
}
