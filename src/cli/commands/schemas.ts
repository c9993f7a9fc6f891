/** `warden schemas`: the JSON Schemas of AgentSpec and Turn, generated from the zod schemas. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonSchemas } from '../../domain/contract/json-schemas.js';
import { print, printJson } from '../output.js';

export const schemasAction = (o: { out?: string }) => {
  const schemas = jsonSchemas();
  if (!o.out) return printJson(schemas);
  mkdirSync(o.out, { recursive: true });
  for (const [name, schema] of Object.entries(schemas)) {
    const file = join(o.out, `${name}.schema.json`);
    writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`);
    print(`wrote ${file}`);
  }
};
