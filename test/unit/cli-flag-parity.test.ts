/**
 * One name for one thing: every verb that picks an evaluator takes the evaluator's flags under the
 * same names (a user who learned them on `start` uses them on `evaluate`).
 */
import type { Command } from 'commander';
import { join } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

test('evaluate takes every evaluator flag that start takes', async () => {
  // The built program: the one `warden` runs.
  const { buildProgram } = (await import(join(ROOT, 'dist/src/cli/program.js'))) as { buildProgram: () => Command };
  const verb = (name: string) => buildProgram().commands.find((c) => c.name() === name)!;
  const EVALUATOR_FLAGS = [
    '--evaluator',
    '--tier-model',
    '--sample-ok',
    '--evaluator-command',
    '--openai-base-url',
    '--openai-api-key-env',
    '--codex-config',
    '--model',
    '--config',
  ];
  for (const name of ['start', 'evaluate']) {
    const flags = new Set(verb(name).options.map((o) => o.long));
    expect(
      EVALUATOR_FLAGS.filter((f) => !flags.has(f)),
      `${name} lacks`,
    ).toEqual([]);
  }
});

test('install and uninstall take the same flags', async () => {
  const { buildProgram } = (await import(join(ROOT, 'dist/src/cli/program.js'))) as { buildProgram: () => Command };
  const flags = (name: string) =>
    buildProgram()
      .commands.find((c) => c.name() === name)!
      .options.map((o) => o.long)
      .sort();
  expect(flags('install')).toEqual(['--dry-run', '--endpoint', '--json', '--project', '--user']);
  expect(flags('uninstall')).toEqual(flags('install'));
});

test('mesh run takes every driver flag that start takes (the old --command stays, hidden; a hidden --model is there to be refused by name)', async () => {
  const { buildProgram } = (await import(join(ROOT, 'dist/src/cli/program.js'))) as { buildProgram: () => Command };
  const program = buildProgram();
  const start = program.commands.find((c) => c.name() === 'start')!;
  const run = program.commands.find((c) => c.name() === 'mesh')!.commands.find((c) => c.name() === 'run')!;
  // Every flag of start's driven mode, except those of drivers or places a mesh does not have (scripted turns, one work dir).
  const driverFlags = start.options.map((o) => o.long!).filter((f) => /^--driver|^--no-credential-check$|^--max-turns$/.test(f));
  expect(driverFlags).toEqual(
    expect.arrayContaining([
      '--driver',
      '--driver-command',
      '--driver-model',
      '--driver-config',
      '--driver-base-url',
      '--driver-api-key-env',
      '--driver-wire-api',
      '--no-credential-check',
      '--max-turns',
    ]),
  );
  const flags = new Set(run.options.map((o) => o.long));
  expect(
    driverFlags.filter((f) => !flags.has(f)),
    'mesh run lacks',
  ).toEqual([]);
  const hidden = run.options.filter((o) => o.hidden).map((o) => o.long);
  expect(hidden.sort()).toEqual(['--command', '--model']);
});
