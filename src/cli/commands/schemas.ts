/** `warden schemas`: the JSON Schemas of AgentSpec and Turn, generated from the zod schemas. */
import type { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonSchemas } from '../../domain/contract/json-schemas.js';
import { print, printJson } from '../output.js';

export function register(program: Command): void {
  program
    .command('schemas')
    .description('print (or write) JSON Schemas of AgentSpec, Turn and the signal payloads, for services in other languages')
    .option('--out <dir>', 'write one <name>.schema.json file per schema into this directory')
    .action((o: { out?: string }) => {
      const schemas = jsonSchemas();
      if (!o.out) return printJson(schemas);
      mkdirSync(o.out, { recursive: true });
      for (const [name, schema] of Object.entries(schemas)) {
        const file = join(o.out, `${name}.schema.json`);
        writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`);
        print(`wrote ${file}`);
      }
    });
}
