/** Run the real `temporal` CLI (found or installed the way warden dev finds it). */
import { execa } from 'execa';
import { ensureTemporalCli } from '../../src/devserver/temporal-cli.js';

export async function temporalCli(address: string, args: string[]) {
  const cli = await ensureTemporalCli();
  return execa(cli, [...args, '--address', address], { reject: false, all: true });
}
