#!/usr/bin/env node
/**
 * The `warden` command. Each verb is defined in src/cli/verbs/ and implemented in src/cli/commands/,
 * which is loaded only when the verb runs: this file and what it imports statically stay cheap.
 */
import { CommanderError } from 'commander';
import { EXIT } from './errors.js';
import { printError } from './output.js';
import { buildProgram, verbOf } from './program.js';
import { visibleBlock } from '../text/sanitize.js';

export { buildProgram };

export async function main(argv = process.argv): Promise<number> {
  const program = buildProgram(verbOf(argv));
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv);
    return EXIT.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.OK;
      return EXIT.USAGE; // commander already printed the message
    }
    const { exitCodeFor } = await import('./exit.js'); // the error classes of the client and the config file
    const code = exitCodeFor(err);
    printError(err instanceof Error ? err.message : String(err), json, code);
    if (process.env.WARDEN_DEBUG && err instanceof Error) process.stderr.write(`${visibleBlock(err.stack ?? '')}\n`);
    return code;
  }
}

// `warden … | head`: once the reader has gone, writes fail with EPIPE. Stop quietly, as a shell
// tool does, instead of crashing with an unhandled 'error' event. One place for every verb.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

main().then(
  (code) => {
    process.exitCode = code;
    // Let pending stdout flush, then leave even if a library kept a handle open.
    setTimeout(() => process.exit(code), 50).unref();
  },
  (err: unknown) => {
    // main() turns every error into an exit code; this is for a bug in that handling itself.
    process.stderr.write(`${visibleBlock(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`);
    process.exit(EXIT.FAILURE);
  },
);
