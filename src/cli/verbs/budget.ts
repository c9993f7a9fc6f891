/** `warden budget <agentId> --cost-usd 20 …`: set new budget limits; an agent paused at a budget runs again. */
import type { Command } from 'commander';
import { positiveDuration, positiveInt, positiveNumber } from '../flags.js';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('budget')
    .description(
      "raise the agent's budgets: each given limit replaces the old one (recorded with who and when, shown in status); an agent paused because a budget was reached runs again once none is",
    )
    .argument('<agentId>')
    .option('--tokens <n>', 'the new tokens limit (in + out; as start --budget-tokens)', positiveInt('--tokens'))
    .option('--cost-usd <usd>', 'the new cost limit in US dollars, e.g. 20 (as start --budget-cost-usd)', positiveNumber('--cost-usd', 1e12))
    .option('--turns <n>', 'the new turns limit (as start --budget-turns)', positiveInt('--turns'))
    .option('--wall-clock <time>', 'the new wall-clock limit since the agent started, e.g. 2h (as start --budget-wall-clock)', positiveDuration('--wall-clock'))
    .option('--by <name>', 'who raises it (default: your OS user name)')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
A new limit must be above what the agent has already spent (else it would pause again at once);
it may be lower than the old limit. Each raised budget warns again at its share (budgets.warn_at)
of the new limit.

Examples:
  warden budget fixer --cost-usd 20
  warden budget fixer --tokens 4000000 --wall-clock 4h --by alice`,
    )
    .action(
      lazy(
        () => import('../commands/budget.js'),
        (m) => m.budgetAction,
      ),
    );
}
