/** The YAML config file: seed 000's supervisor keys, evaluator, channels; strict; flags override. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildSpec } from '../../src/cli/commands/start.js';
import { ConfigError, loadConfigFile, parseConfig, specFromConfig } from '../../src/config/file.js';
import { AgentSpecSchema } from '../../src/domain/schemas.js';

const FULL = `
supervisor:
  model: gpt-5.4-mini
  window_size: 30
  eval_interval: 4
  escalation_threshold: 4
  idle_after: 5m
  eval_timeout: 20s
evaluator:
  kind: command
  command: [python3, judge.py]
notify:
  log: true
  webhooks:
    - url: https://hooks.example.com/warden
      secret_env: WARDEN_WEBHOOK_SECRET
`;

describe('parseConfig', () => {
  test('maps every documented key onto the AgentSpec', () => {
    const spec = AgentSpecSchema.parse({ agentId: 'a', task: 't', ...specFromConfig(parseConfig(FULL)) });
    expect(spec.supervisor).toEqual({ model: 'gpt-5.4-mini', windowSize: 30, evalInterval: 4, escalationThreshold: 4, idleAfterMs: 300_000, evalTimeoutMs: 20_000 });
    expect(spec.evaluator).toEqual({ kind: 'command', command: ['python3', 'judge.py'] });
    expect(spec.notify.webhooks).toEqual([{ url: 'https://hooks.example.com/warden', secretEnv: 'WARDEN_WEBHOOK_SECRET' }]);
  });

  test.each([
    ['supervisor:\n  windw_size: 3\n', /windw_size/],
    ['supervisr: {}\n', /supervisr/],
    ['supervisor:\n  escalation_threshold: 2\n', /supervisor\.escalation_threshold: escalation_threshold is never below 3/],
    ['supervisor:\n  idle_after: soon\n', /supervisor\.idle_after/],
    ['evaluator:\n  kind: oracle\n', /evaluator\.kind/],
    ['notify:\n  webhooks:\n    - url: https://x\n      secret: abc\n', /notify\.webhooks\.0.*secret/],
    ['supervisor: [1, 2\n', /not valid YAML/],
  ])('rejects %j naming the problem', (text, re) => {
    expect(() => parseConfig(text, 'warden.yaml')).toThrow(ConfigError);
    expect(() => parseConfig(text, 'warden.yaml')).toThrow(re);
  });

  test('an empty file is an empty config', () => {
    expect(parseConfig('')).toEqual({});
  });

  test('a missing file is a clear error', () => {
    expect(() => loadConfigFile('/nonexistent/warden.yaml')).toThrow(/cannot read config file \/nonexistent\/warden.yaml: ENOENT/);
  });
});

describe('warden start: flags override the config file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-cfg-'));
  const file = join(dir, 'warden.yaml');
  writeFileSync(file, FULL);

  test('file values, then flags on top; webhooks from both', () => {
    const spec = AgentSpecSchema.parse(
      buildSpec('fixer', { task: 'fix it', config: file, evalInterval: 7, model: 'other', webhook: ['http://127.0.0.1:9/h'], evaluator: 'heuristic' }),
    );
    expect(spec.supervisor).toMatchObject({ model: 'other', windowSize: 30, evalInterval: 7, escalationThreshold: 4 });
    expect(spec.evaluator).toEqual({ kind: 'heuristic' });
    expect(spec.notify.webhooks.map((w) => w.url)).toEqual(['https://hooks.example.com/warden', 'http://127.0.0.1:9/h']);
  });

  test('defaults without a file are seed 000’s', () => {
    const spec = AgentSpecSchema.parse(buildSpec('fixer', { task: 'fix it' }));
    expect(spec.supervisor).toMatchObject({ model: 'gpt-5.4', windowSize: 20, evalInterval: 5, escalationThreshold: 3 });
    expect(spec.evaluator).toEqual({ kind: 'heuristic' });
  });

  test('--task is required', () => {
    expect(() => buildSpec('fixer', {})).toThrow(/--task is required/);
  });
});
