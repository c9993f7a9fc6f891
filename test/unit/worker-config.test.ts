import { describe, expect, it } from 'vitest';
import {
  endpointAllowed,
  groupWindowFromEnv,
  parseEndpointPattern,
  secretFor,
  subprocessEnv,
  workerConfig,
  WorkerConfigError,
} from '../../src/config/worker.js';

const env = (over: Record<string, string>) => ({
  PATH: '/usr/bin',
  HOME: '/home/w',
  LANG: 'C.UTF-8',
  PROD_DB_PASSWORD: 'hunter2',
  OPENAI_API_KEY: 'sk-real',
  ...over,
});

describe('worker secrets configuration', () => {
  it('reads the three lists; empty by default', () => {
    expect(workerConfig({})).toEqual({ secretEnvAllow: [], endpointAllow: [], subprocessEnvAllow: [] });
    expect(
      workerConfig({
        WARDEN_SECRET_ENV_ALLOW: ' OPENAI_API_KEY, WARDEN_WEBHOOK_SECRET ',
        WARDEN_ENDPOINT_ALLOW: 'https://api.openai.com/*,http://127.0.0.1:*',
        WARDEN_SUBPROCESS_ENV_ALLOW: 'GIT_SSH',
      }),
    ).toEqual({
      secretEnvAllow: ['OPENAI_API_KEY', 'WARDEN_WEBHOOK_SECRET'],
      endpointAllow: ['https://api.openai.com/*', 'http://127.0.0.1:*'],
      subprocessEnvAllow: ['GIT_SSH'],
    });
  });
  it('refuses malformed entries, naming them', () => {
    expect(() => workerConfig({ WARDEN_SECRET_ENV_ALLOW: 'OK,not-a-name' })).toThrow(/WARDEN_SECRET_ENV_ALLOW: "not-a-name"/);
    expect(() => workerConfig({ WARDEN_ENDPOINT_ALLOW: 'api.openai.com' })).toThrow(WorkerConfigError);
    expect(() => parseEndpointPattern('https://*/x')).toThrow(/endpoint pattern/);
    expect(() => parseEndpointPattern('https://a.com/*/x')).toThrow(/only at the end/);
  });
});

describe('endpointAllowed', () => {
  const cases: [string, string[], boolean][] = [
    ['https://api.openai.com/v1/chat/completions', ['https://api.openai.com/*'], true],
    ['https://api.openai.com:443/v1/chat/completions', ['https://api.openai.com/*'], true],
    ['https://api.openai.com:8443/v1', ['https://api.openai.com/*'], false],
    ['http://api.openai.com/v1', ['https://api.openai.com/*'], false],
    ['https://api.openai.com.evil.example/v1', ['https://api.openai.com/*'], false],
    ['https://evil.example/?u=https://api.openai.com/', ['https://api.openai.com/*'], false],
    ['https://user:pw@api.openai.com/v1', ['https://api.openai.com/*'], false],
    ['http://127.0.0.1:5555/v1/chat/completions', ['http://127.0.0.1:*'], true],
    ['http://127.0.0.2:5555/v1', ['http://127.0.0.1:*'], false],
    ['https://hooks.example.com/warden/x', ['https://*.example.com/warden/*'], true],
    ['https://example.com/warden/x', ['https://*.example.com/warden/*'], false],
    ['https://hooks.example.com/other', ['https://*.example.com/warden/*'], false],
    ['https://hooks.example.com/exact', ['https://hooks.example.com/exact'], true],
    ['https://hooks.example.com/exact/more', ['https://hooks.example.com/exact'], false],
    ['not a url', ['http://127.0.0.1:*'], false],
    ['https://api.openai.com/v1', [], false],
  ];
  it.each(cases)('%s with %j → %s', (url, patterns, ok) => expect(endpointAllowed(url, patterns)).toBe(ok));
});

describe('secretFor', () => {
  const allowed = env({ WARDEN_SECRET_ENV_ALLOW: 'OPENAI_API_KEY,UNSET_KEY', WARDEN_ENDPOINT_ALLOW: 'https://api.openai.com/*' });
  it('gives the value when the operator allows the name and the endpoint', () => {
    expect(secretFor('openai evaluator (apiKeyEnv)', 'OPENAI_API_KEY', 'https://api.openai.com/v1/chat/completions', allowed)).toEqual({
      ok: true,
      value: 'sk-real',
    });
  });
  it('refuses an unlisted name, naming it and never a value', () => {
    const r = secretFor('openai evaluator (apiKeyEnv)', 'PROD_DB_PASSWORD', 'https://api.openai.com/v1', allowed);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/^openai evaluator \(apiKeyEnv\): environment variable PROD_DB_PASSWORD is not in the worker's WARDEN_SECRET_ENV_ALLOW/);
    expect(JSON.stringify(r)).not.toMatch(/hunter2|sk-real/);
  });
  it('refuses an unlisted endpoint, naming the URL without credentials or query', () => {
    const r = secretFor('webhook (secretEnv)', 'OPENAI_API_KEY', 'https://u:p@evil.example/collect?k=1', allowed);
    expect(!r.ok && r.reason).toBe(
      "webhook (secretEnv): https://evil.example/collect is not in the worker's WARDEN_ENDPOINT_ALLOW (https://api.openai.com/*); the worker sends OPENAI_API_KEY only to endpoints its operator allows",
    );
  });
  it('says when an allowed name is not set', () => {
    expect(secretFor('x', 'UNSET_KEY', 'https://api.openai.com/v1', allowed)).toEqual({
      ok: false,
      reason: 'x: environment variable UNSET_KEY is not set on the worker',
    });
  });
  it('refuses everything by default', () => {
    expect(secretFor('x', 'OPENAI_API_KEY', 'https://api.openai.com/v1', env({})).ok).toBe(false);
  });
});

describe('subprocessEnv', () => {
  it('is the base set, the operator allow-list, pass-through names and the additions — nothing else', () => {
    const e = env({ WARDEN_SUBPROCESS_ENV_ALLOW: 'GIT_SSH', GIT_SSH: 'ssh -i k', HTTPS_PROXY: 'http://proxy:3128', WARDEN_SECRET_ENV_ALLOW: 'OPENAI_API_KEY' });
    expect(subprocessEnv({ WARDEN_AGENT_ID: 'a', DROPPED: undefined }, {}, e)).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/w',
      LANG: 'C.UTF-8',
      GIT_SSH: 'ssh -i k',
      WARDEN_AGENT_ID: 'a',
    });
    expect(subprocessEnv({}, { passThrough: ['HTTPS_PROXY'] }, e)).toMatchObject({ HTTPS_PROXY: 'http://proxy:3128' });
  });
});

describe('WARDEN_NOTIFY_GROUP_WINDOW (one alert for one cause)', () => {
  it('defaults to 60 s; takes a duration or milliseconds; 0 turns grouping off', () => {
    expect(groupWindowFromEnv({})).toBe(60_000);
    expect(groupWindowFromEnv({ WARDEN_NOTIFY_GROUP_WINDOW: '' })).toBe(60_000);
    expect(groupWindowFromEnv({ WARDEN_NOTIFY_GROUP_WINDOW: '2m' })).toBe(120_000);
    expect(groupWindowFromEnv({ WARDEN_NOTIFY_GROUP_WINDOW: '500ms' })).toBe(500);
    expect(groupWindowFromEnv({ WARDEN_NOTIFY_GROUP_WINDOW: '1500' })).toBe(1_500);
    expect(groupWindowFromEnv({ WARDEN_NOTIFY_GROUP_WINDOW: '0' })).toBe(0);
  });

  it('refuses a malformed or out-of-range window, naming the variable', () => {
    for (const v of ['soon', '-5s', '10ms', '2h', '1.5s']) {
      expect(() => groupWindowFromEnv({ WARDEN_NOTIFY_GROUP_WINDOW: v })).toThrow(WorkerConfigError);
      expect(() => groupWindowFromEnv({ WARDEN_NOTIFY_GROUP_WINDOW: v })).toThrow(/WARDEN_NOTIFY_GROUP_WINDOW/);
    }
  });
});
