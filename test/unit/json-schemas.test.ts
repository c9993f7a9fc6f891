/** The committed JSON Schemas (schemas/*.schema.json) are exactly what the zod schemas generate. */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { jsonSchemas } from '../../src/domain/contract/json-schemas.js';

const DIR = resolve(import.meta.dirname, '../../schemas');

test('committed schemas are up to date (regenerate with `warden schemas --out schemas`)', () => {
  const generated = jsonSchemas();
  const committed = readdirSync(DIR)
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => f.replace('.schema.json', ''))
    .sort();
  expect(committed).toEqual(Object.keys(generated).sort());
  for (const [name, schema] of Object.entries(generated)) {
    expect(JSON.parse(readFileSync(join(DIR, `${name}.schema.json`), 'utf8')), name).toEqual(schema);
  }
});

test('the AgentSpec schema names what a service in another language must send', () => {
  const spec = jsonSchemas()['agent-spec'] as {
    required: string[];
    properties: Record<string, { properties?: Record<string, unknown> }>;
    additionalProperties: boolean;
  };
  expect(spec.required).toEqual(['agentId', 'task']);
  expect(spec.additionalProperties).toBe(false);
  expect(Object.keys(spec.properties.supervisor!.properties!)).toEqual(
    expect.arrayContaining(['model', 'windowSize', 'evalInterval', 'escalationThreshold', 'idleAfterMs', 'evalTimeoutMs']),
  );
  const turn = jsonSchemas().turn as { required: string[]; properties: Record<string, unknown> };
  expect(turn.required).toEqual(['text']);
  expect(Object.keys(turn.properties)).toEqual([
    'id',
    'text',
    'toolCalls',
    'tokensIn',
    'tokensOut',
    'costUsd',
    'at',
    'generation',
    'done',
    'awaitChildren',
    'tree',
  ]);
});
