import { expect, test } from 'vitest';
import { buildSpec } from '../../src/cli/commands/start.js';
import { ConfigError, parseConfig, specFromConfig } from '../../src/config/file.js';
import { AgentSpecSchema } from '../../src/domain/contract/schemas.js';

test('config file: notify.irc (string or object) and webhook format', () => {
  const a = specFromConfig(parseConfig("notify:\n  irc: '#alerts'\n  webhooks:\n    - url: https://hooks.example.com/x\n      format: slack\n"));
  expect(a.notify).toEqual({ webhooks: [{ url: 'https://hooks.example.com/x', format: 'slack' }], irc: { channel: '#alerts' } });
  const b = specFromConfig(parseConfig("notify:\n  irc:\n    channel: '#ops'\n"));
  expect(b.notify?.irc).toEqual({ channel: '#ops' });
  expect(() => parseConfig('notify:\n  webhooks:\n    - url: https://x\n      format: xml\n')).toThrow(ConfigError);
  expect(() => parseConfig('notify:\n  webhooks:\n    - url: https://x\n      format: xml\n')).toThrow(/notify\.webhooks\.0\.format/);
  // An unquoted #alerts is a YAML comment, so irc is null: an error naming the field, not a silent no-op.
  expect(() => parseConfig('notify:\n  irc: #alerts\n')).toThrow(/notify\.irc/);
  // The channel itself is validated when the spec is.
  const bad = AgentSpecSchema.safeParse({ agentId: 'a', task: 't', ...specFromConfig(parseConfig("notify:\n  irc: 'alerts'\n")) });
  expect(bad.success).toBe(false);
});

test('warden start --irc and --webhook-format', () => {
  const spec = AgentSpecSchema.parse(buildSpec('fixer', { task: 'fix it', irc: '#alerts', webhook: ['http://127.0.0.1:9/h'], webhookFormat: 'slack' }));
  expect(spec.notify).toEqual({ webhooks: [{ url: 'http://127.0.0.1:9/h', format: 'slack' }], log: true, irc: { channel: '#alerts' } });
  expect(() => buildSpec('fixer', { task: 'fix it', webhookFormat: 'slack' })).toThrow(/--webhook-format only goes with --webhook/);
});
