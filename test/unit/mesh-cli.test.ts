/** `warden mesh run`'s driver flags: the names `warden start` uses, the old --command as an alias, --model refused, the same checks. */
import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { driverFrom, MESH_MODEL_REFUSED, notifyFrom } from '../../src/cli/commands/mesh.js';
import { meshAlert } from '../../src/domain/mesh/notify.js';

const ROOT = join(import.meta.dirname, '..', '..');
const base = { tasks: 't.md', repo: '.', credentialCheck: false } as const;

describe('mesh run driver flags', () => {
  test.each([
    ['--driver-command', { driver: 'command', driverCommand: 'python3 w.py -v' }, { driver: { kind: 'command', command: ['python3', 'w.py', '-v'] } }],
    ['--command (the old name)', { driver: 'command', command: 'python3 w.py' }, { driver: { kind: 'command', command: ['python3', 'w.py'] } }],
    [
      '--driver-model, --driver-config, --max-turns',
      { driver: 'codex', driverModel: 'm1', driverConfig: ['a=b'], maxTurns: '30' },
      { driver: { kind: 'codex', model: 'm1', config: ['a=b'] }, maxTurns: 30 },
    ],
    [
      '--driver-model, --codex-path',
      { driver: 'codex', driverModel: 'm2', codexPath: '/opt/codex' },
      { driver: { kind: 'codex', model: 'm2', codexPath: '/opt/codex', config: [] } },
    ],
    [
      '--driver-base-url',
      { driver: 'codex', driverBaseUrl: 'http://127.0.0.1:9/v1' },
      { driver: { kind: 'codex', config: expect.arrayContaining(['model_provider="warden-endpoint"']) } },
    ],
    [
      'claude with --claude-path',
      { driver: 'claude', driverModel: 'opus', claudePath: '/bin/claude' },
      { driver: { kind: 'claude', model: 'opus', claudePath: '/bin/claude', args: [] } },
    ],
  ])('%s', (_what, flags, want) => {
    expect(driverFrom({ ...base, ...flags } as never)).toEqual(want);
  });

  test('a relative program path is made absolute (workers run in their own worktrees)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mesh-cli-'));
    writeFileSync(join(dir, 'w.py'), '');
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(driverFrom({ ...base, driver: 'command', driverCommand: 'python3 w.py' } as never).driver).toEqual({
        kind: 'command',
        command: ['python3', join(dir, 'w.py')],
      });
    } finally {
      process.chdir(cwd);
    }
  });

  test.each([
    [{ driver: 'command' }, /--driver command needs --driver-command/],
    [{ driver: 'command', command: 'a', driverCommand: 'b' }, /--command is the old name of --driver-command: give one of them/],
    // --model is the evaluator's model on start: here it is refused, naming the flag for the workers' model.
    [
      { driver: 'codex', model: 'a' },
      /^--model: on mesh run, set the workers' model with --driver-model NAME \(--model is the evaluator's model on warden start/,
    ],
    [{ driver: 'claude', model: 'a', driverModel: 'b' }, /--driver-model NAME/],
    [{ driver: 'command', driverCommand: 'a', driverModel: 'm' }, /--driver-model only goes with --driver codex\|claude/],
    [{ driver: 'claude', codexPath: '/x' }, /--codex-path only goes with --driver codex/],
    [{ driver: 'scripted' }, /--driver: one of command, codex, claude/],
    [{ driver: 'codex', maxTurns: 'many' }, /--max-turns: expected a whole number/],
  ])('refused: %j', (flags, err) => {
    expect(() => driverFrom({ ...base, ...flags } as never)).toThrow(err);
  });

  test('the built CLI: `mesh run --model` exits 2 (bad usage) with the message naming --driver-model, before any server is needed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mesh-cli-model-'));
    writeFileSync(join(dir, 'tasks.md'), '1. Fix the flaky test.\n');
    const r = await execa(
      process.execPath,
      [
        join(ROOT, 'dist/src/cli/main.js'),
        'mesh',
        'run',
        '--tasks',
        join(dir, 'tasks.md'),
        '--repo',
        dir,
        '--driver',
        'codex',
        '--no-credential-check',
        '--model',
        'gpt-5',
        '--address',
        '127.0.0.1:1',
      ],
      { reject: false, timeout: 60_000 },
    );
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(MESH_MODEL_REFUSED);
  });

  test('the credential check runs as for start', () => {
    const env = { ...process.env };
    for (const k of ['CODEX_API_KEY', 'OPENAI_API_KEY', 'CODEX_HOME']) delete process.env[k];
    process.env.CODEX_HOME = mkdtempSync(join(tmpdir(), 'no-codex-'));
    try {
      expect(() => driverFrom({ tasks: 't', repo: '.', driver: 'codex' } as never)).toThrow(/the codex driver has no credentials/);
    } finally {
      process.env = env;
    }
  });
});

describe('mesh run alert flags (the names start uses)', () => {
  test.each([
    [{}, undefined],
    [{ webhook: ['https://h/1', 'https://h/2'] }, { webhooks: [{ url: 'https://h/1' }, { url: 'https://h/2' }], log: true }],
    [
      { webhook: ['https://h/1'], webhookFormat: 'slack', webhookSecretEnv: 'K' },
      { webhooks: [{ url: 'https://h/1', format: 'slack', secretEnv: 'K' }], log: true },
    ],
    [{ irc: '#mesh' }, { webhooks: [], irc: { channel: '#mesh' }, log: true }],
  ])('%j', (flags, want) => expect(notifyFrom(flags as never)).toEqual(want));
  test('a webhook format without a webhook is refused', () => {
    expect(() => notifyFrom({ webhookFormat: 'slack' })).toThrow(/--webhook-format only goes with --webhook URL/);
  });
});

describe('mesh alerts', () => {
  const base = { runId: 'r', workflowId: 'mesh-r', temporalRunId: 'abc', reason: 'mesh ready: 1 of 1 tasks through', at: Date.UTC(2026, 0, 1) };
  test('its own event kind when given (a mesh started before sent escalations)', () => {
    for (const kind of ['mesh-ready', 'mesh-failed', 'mesh-awaiting-input'] as const)
      expect(meshAlert({ ...base, kind, notify: { webhooks: [{ url: 'https://h' } as never], log: true } })?.event.event).toBe(kind);
  });
  test('no channel: no alert at all; else one notify input for every channel', () => {
    expect(meshAlert({ ...base, notify: { webhooks: [], log: true } })).toBeNull();
    expect(meshAlert({ ...base, notify: { webhooks: [{ url: 'https://h', format: 'slack' } as never], irc: { channel: '#m' } as never, log: true } })).toEqual({
      event: {
        event: 'escalation',
        agentId: 'mesh-r',
        workflowId: 'mesh-r',
        runId: 'abc',
        task: 'mesh r',
        step: 0,
        reason: 'mesh ready: 1 of 1 tasks through',
        at: '2026-01-01T00:00:00.000Z',
      },
      webhooks: [{ url: 'https://h', format: 'slack' }],
      irc: { channel: '#m' },
    });
  });
});
