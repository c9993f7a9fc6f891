/** `warden schemas`: the JSON Schemas of AgentSpec and Turn, generated from the zod schemas. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('schemas')
    .description('print (or write) JSON Schemas of AgentSpec, Turn and the signal payloads, for services in other languages')
    .option('--out <dir>', 'write one <name>.schema.json file per schema into this directory')
    .action(
      lazy(
        () => import('../commands/schemas.js'),
        (m) => m.schemasAction,
      ),
    );
}
