/** `warden setup`: find or install what the embedded stack needs (the Temporal CLI). */
import type { Command } from 'commander';
import { ensureTemporalCli } from '../../devserver/temporal-cli.js';
import { execa } from 'execa';
import { globals } from '../context.js';
import { print, printJson } from '../output.js';

export const setupAction = async (_o: unknown, cmd: Command) => {
  const cli = await ensureTemporalCli((m) => process.stderr.write(`${m}\n`));
  const version = String((await execa(cli, ['--version'])).stdout).trim();
  if (globals(cmd).json) return printJson({ temporalCli: cli, version });
  print(`temporal CLI: ${cli}`);
  print(version);
};
