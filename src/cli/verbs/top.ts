/** The definition of this command (options, help); the implementation is ../commands/top.ts, loaded when it runs. */
import { type Command } from 'commander';
import { SORT_KEYS } from '../../roster/sort-keys.js';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('top')
    .description('the roster and focus pane over every agent and live mesh (a terminal UI); --once prints the roster once')
    .option('--once', 'print the roster once and exit')
    .option('--json', 'with --once: print the roster as JSON')
    .option('--hide-finished', 'leave out finished agents')
    .option('--filter <text>', 'fuzzy filter (as `/` does)')
    .option('--sort <column>', `sort column: ${SORT_KEYS.join('|')} (default priority)`)
    .option('--desc', 'reverse the sort')
    .option(
      '--details <n|all>',
      'with --once: query status for the first N rows, as the live view queries the rows on screen (default 50; "all" for every row)',
    )
    .option('--concurrency <n>', 'status queries in flight at once (default 32 with --once, 16 live)')
    .option('--poll-ms <ms>', 'live: query rows in view this often (default 1000)')
    .option('--list-ms <ms>', 'live: re-read the roster from visibility this often (default 2000)')
    .option('--width <cols>', 'with --once (text): table width (default the terminal, else 160)')
    .action(
      lazy(
        () => import('../commands/top.js'),
        (m) => m.topAction,
      ),
    );
}
