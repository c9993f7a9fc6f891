/** `warden setup`: find or install what the embedded stack needs (the Temporal CLI). */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('setup')
    .description('find the Temporal CLI ($TEMPORAL_CLI_PATH, PATH, warden cache) or install a pinned copy')
    .option('--json', 'print {temporalCli, version} as JSON')
    .action(
      lazy(
        () => import('../commands/setup.js'),
        (m) => m.setupAction,
      ),
    );
}
