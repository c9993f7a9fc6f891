/** `warden status <agentId>` and `warden list`. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('status')
    .description("show an agent's supervision state (the workflow's status query)")
    .argument('<agentId>')
    .option('--json', 'print the status as JSON')
    .action(
      lazy(
        () => import('../commands/status.js'),
        (m) => m.statusAction,
      ),
    );

  program
    .command('list')
    .description('list supervised agents (newest first)')
    .option('--query <visibility query>', `extra filter, e.g. "WardenState = 'awaiting-input'"`)
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'print the list as JSON')
    .action(
      lazy(
        () => import('../commands/status.js'),
        (m) => m.listAction,
      ),
    );
}
