/** The YAML config file: seed 000's supervisor keys, evaluator, channels; strict; flags override. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildSpec } from '../../src/cli/commands/start.js';
import { UsageError } from '../../src/cli/exit.js';
import { CONFIG_MAX_ALIASES, CONFIG_MAX_BYTES, ConfigError, loadConfigFile, parseConfig, specFromConfig } from '../../src/config/file.js';
import { AgentSpecSchema } from '../../src/domain/contract/schemas.js';

const FULL = `
supervisor:
  model: gpt-5.4-mini
  window_size: 30
  eval_interval: 4
  escalation_threshold: 4
  idle_after: 5m
  eval_timeout: 20s
  last_resort: compact
  session_end_grace: 2m
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
    expect(spec.supervisor).toEqual({
      model: 'gpt-5.4-mini',
      windowSize: 30,
      evalInterval: 4,
      escalationThreshold: 4,
      idleAfterMs: 300_000,
      evalTimeoutMs: 20_000,
      lastResort: 'compact',
      sessionEndGraceMs: 120_000,
    });
    expect(spec.evaluator).toEqual({ kind: 'command', command: ['python3', 'judge.py'] });
    expect(spec.notify.webhooks).toEqual([{ url: 'https://hooks.example.com/warden', secretEnv: 'WARDEN_WEBHOOK_SECRET' }]);
  });

  test('last_resort: compact or none; the --last-resort flag wins over the file; anything else is refused by name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-cfg-lr-'));
    try {
      const file = join(dir, 'w.yaml');
      writeFileSync(file, 'supervisor:\n  last_resort: compact\n');
      expect(buildSpec('a', { task: 't', config: file }).supervisor).toMatchObject({ lastResort: 'compact' });
      expect(buildSpec('a', { task: 't', config: file, lastResort: 'none' }).supervisor).toMatchObject({ lastResort: 'none' });
      expect(buildSpec('a', { task: 't', lastResort: 'compact' }).supervisor).toMatchObject({ lastResort: 'compact' });
      expect(AgentSpecSchema.parse({ agentId: 'a', task: 't' }).supervisor.lastResort).toBe('none');
      expect(() => parseConfig('supervisor:\n  last_resort: summarise\n')).toThrow(/last_resort/);
      writeFileSync(file, 'supervisor:\n  session_end_grace: 2m\n');
      expect(buildSpec('a', { task: 't', config: file }).supervisor).toMatchObject({ sessionEndGraceMs: 120_000 });
      expect(() => parseConfig('supervisor:\n  session_end_grace: soon\n')).toThrow(/session_end_grace/);
      expect(AgentSpecSchema.safeParse({ agentId: 'a', task: 't', supervisor: { lastResort: 'summarise' } }).error?.issues[0]?.path).toEqual([
        'supervisor',
        'lastResort',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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

  test('an openai evaluator: snake_case keys onto the spec; only base_url is required', () => {
    const full = parseConfig(
      'evaluator:\n  kind: openai\n  base_url: http://127.0.0.1:11434/v1\n  model: llama3.2\n  api_key_env: OLLAMA_KEY\n  temperature: 0.3\n',
    );
    expect(AgentSpecSchema.parse({ agentId: 'a', task: 't', ...specFromConfig(full) }).evaluator).toEqual({
      kind: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'llama3.2',
      apiKeyEnv: 'OLLAMA_KEY',
      temperature: 0.3,
    });
    const minimal = parseConfig('evaluator:\n  kind: openai\n  base_url: https://api.openai.com/v1\n');
    expect(AgentSpecSchema.parse({ agentId: 'a', task: 't', ...specFromConfig(minimal) }).evaluator).toEqual({
      kind: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      temperature: 0,
    });
  });

  test.each([
    ['evaluator:\n  kind: openai\n', /evaluator\.base_url/],
    // the key itself has no place in the file (it would end up in workflow history): only its variable's name
    ['evaluator:\n  kind: openai\n  base_url: http://127.0.0.1:8000/v1\n  api_key: sk-abc\n', /api_key/],
    ['evaluator:\n  kind: openai\n  base_url: http://127.0.0.1:8000/v1\n  temperature: warm\n', /evaluator\.temperature/],
  ])('rejects the openai evaluator %j naming the problem', (text, re) => {
    expect(() => parseConfig(text, 'warden.yaml')).toThrow(ConfigError);
    expect(() => parseConfig(text, 'warden.yaml')).toThrow(re);
  });

  test('an openai evaluator whose base_url or api_key_env is malformed fails spec validation, naming the field', () => {
    const bad = (yaml: string) => AgentSpecSchema.safeParse({ agentId: 'a', task: 't', ...specFromConfig(parseConfig(yaml)) });
    const url = bad('evaluator:\n  kind: openai\n  base_url: 127.0.0.1:11434\n');
    expect(url.success).toBe(false);
    expect(url.error?.issues.map((i) => i.path.join('.'))).toEqual(['evaluator.baseUrl']);
    const env = bad('evaluator:\n  kind: openai\n  base_url: http://127.0.0.1:11434/v1\n  api_key_env: sk-not-a-name\n');
    expect(env.success).toBe(false);
    expect(env.error?.issues.map((i) => i.path.join('.'))).toEqual(['evaluator.apiKeyEnv']);
  });

  test('an empty file is an empty config', () => {
    expect(parseConfig('')).toEqual({});
  });

  test('a missing file is a clear error', () => {
    expect(() => loadConfigFile('/nonexistent/warden.yaml')).toThrow(/cannot read config file \/nonexistent\/warden.yaml: ENOENT/);
  });

  test('a config over the size limit is refused before it is parsed, naming the file and the limit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-cfg-big-'));
    const file = join(dir, 'big.yaml');
    // Valid YAML all the way (a long list of webhooks), so only the size check can refuse it.
    const line = '    - url: https://hooks.example.com/warden\n';
    writeFileSync(file, 'notify:\n  webhooks:\n' + line.repeat(Math.ceil((CONFIG_MAX_BYTES + 1) / line.length)));
    const size = statSync(file).size;
    expect(() => loadConfigFile(file)).toThrow(ConfigError);
    expect(() => loadConfigFile(file)).toThrow(`${file}: the config file is ${size} bytes; the most warden reads is ${CONFIG_MAX_BYTES} bytes (256 KiB)`);
    // A 50 MB (sparse) file: refused from its size alone.
    const huge = join(dir, 'huge.yaml');
    writeFileSync(huge, '');
    truncateSync(huge, 50 * 1024 * 1024);
    expect(() => loadConfigFile(huge)).toThrow(/huge\.yaml: the config file is 52428800 bytes; the most warden reads is 262144 bytes/);
    expect(() => parseConfig('x'.repeat(CONFIG_MAX_BYTES + 1), 'inline')).toThrow(/^inline: the config file is 262145 bytes/);
    rmSync(dir, { recursive: true, force: true });
  });

  test('a FIFO or a device as the config is refused without waiting on it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-cfg-fifo-'));
    const fifo = join(dir, 'cfg.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(() => loadConfigFile(fifo)).toThrow(`${fifo}: not a regular file; the config must be a YAML file`);
    expect(() => loadConfigFile('/dev/zero')).toThrow('/dev/zero: not a regular file');
    rmSync(dir, { recursive: true, force: true });
  });

  test('YAML alias expansion is bounded', () => {
    const webhooks = Array.from({ length: CONFIG_MAX_ALIASES + 5 }, () => '    - *hook').join('\n');
    const doc = `x-hook: &hook {url: https://hooks.example.com/warden}\nnotify:\n  webhooks:\n${webhooks}\n`;
    expect(() => parseConfig(doc, 'aliases.yaml')).toThrow(/^aliases\.yaml: not valid YAML: .*[Aa]lias/);
    const few = `notify:\n  webhooks:\n    - &hook {url: https://hooks.example.com/a}\n    - *hook\n`;
    expect(parseConfig(few).notify?.webhooks).toHaveLength(2);
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

  test('--evaluator openai: base URL and key variable from flags, the model from --model', () => {
    const spec = AgentSpecSchema.parse(
      buildSpec('fixer', { task: 'fix it', evaluator: 'openai', openaiBaseUrl: 'http://127.0.0.1:8000/v1', openaiApiKeyEnv: 'VLLM_KEY', model: 'qwen3' }),
    );
    expect(spec.evaluator).toEqual({ kind: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyEnv: 'VLLM_KEY', temperature: 0 });
    expect(spec.supervisor.model).toBe('qwen3');
    const keyless = AgentSpecSchema.parse(buildSpec('fixer', { task: 'fix it', evaluator: 'openai', openaiBaseUrl: 'http://127.0.0.1:11434/v1' }));
    expect(keyless.evaluator).toEqual({ kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', temperature: 0 });
  });

  test('--evaluator openai without a base URL, or openai flags with another evaluator, is a usage error', () => {
    expect(() => buildSpec('fixer', { task: 'fix it', evaluator: 'openai' })).toThrow(UsageError);
    expect(() => buildSpec('fixer', { task: 'fix it', evaluator: 'openai' })).toThrow(/--evaluator openai needs --openai-base-url/);
    expect(() => buildSpec('fixer', { task: 'fix it', evaluator: 'codex', openaiBaseUrl: 'http://127.0.0.1:8000/v1' })).toThrow(
      /--openai-base-url and --openai-api-key-env only go with --evaluator openai/,
    );
    expect(() => buildSpec('fixer', { task: 'fix it', config: file, openaiApiKeyEnv: 'K' })).toThrow(/only go with --evaluator openai/);
  });

  test('openai flags override an openai evaluator from the file, field by field', () => {
    const ofile = join(dir, 'openai.yaml');
    writeFileSync(ofile, 'evaluator:\n  kind: openai\n  base_url: http://127.0.0.1:11434/v1\n  model: llama3.2\n  api_key_env: FILE_KEY\n  temperature: 0.5\n');
    expect(AgentSpecSchema.parse(buildSpec('fixer', { task: 'fix it', config: ofile })).evaluator).toEqual({
      kind: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      model: 'llama3.2',
      apiKeyEnv: 'FILE_KEY',
      temperature: 0.5,
    });
    expect(AgentSpecSchema.parse(buildSpec('fixer', { task: 'fix it', config: ofile, openaiBaseUrl: 'http://10.0.0.2:8000/v1' })).evaluator).toEqual({
      kind: 'openai',
      baseUrl: 'http://10.0.0.2:8000/v1',
      model: 'llama3.2',
      apiKeyEnv: 'FILE_KEY',
      temperature: 0.5,
    });
    expect(
      AgentSpecSchema.parse(buildSpec('fixer', { task: 'fix it', config: ofile, evaluator: 'openai', openaiApiKeyEnv: 'FLAG_KEY' })).evaluator,
    ).toMatchObject({
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKeyEnv: 'FLAG_KEY',
    });
    // another evaluator on the command line replaces the file's
    expect(AgentSpecSchema.parse(buildSpec('fixer', { task: 'fix it', config: ofile, evaluator: 'heuristic' })).evaluator).toEqual({ kind: 'heuristic' });
  });

  test('--task is required', () => {
    expect(() => buildSpec('fixer', {})).toThrow(/--task is required/);
  });
});

describe('warden start: driven mode flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-drv-'));
  test('--driver command / scripted / codex build the driver; --work-dir and --max-turns go to driven', () => {
    const cmd = AgentSpecSchema.parse(
      buildSpec('a', { task: 't', driver: 'command', driverCommand: 'python3 agent.py --fast', workDir: '/tmp/w', maxTurns: 7 }),
    );
    expect(cmd.driver).toEqual({ kind: 'command', command: ['python3', 'agent.py', '--fast'] });
    expect(cmd.driven).toMatchObject({ workDir: '/tmp/w', maxTurns: 7, doneMarker: 'TASK COMPLETE' });
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify([{ text: 'one' }, { text: 'two' }]));
    expect(AgentSpecSchema.parse(buildSpec('a', { task: 't', driver: 'scripted', script })).driver).toMatchObject({
      kind: 'scripted',
      turns: [{ text: 'one' }, { text: 'two' }],
    });
    expect(AgentSpecSchema.parse(buildSpec('a', { task: 't', driver: 'codex', driverModel: 'gpt-5.4', driverConfig: ['a=1'] })).driver).toMatchObject({
      kind: 'codex',
      model: 'gpt-5.4',
      config: ['a=1'],
      sandbox: 'workspace-write',
    });
    expect(AgentSpecSchema.parse(buildSpec('a', { task: 't' })).driver).toBeUndefined();
  });

  test.each([
    [{ driver: 'command' as const }, /--driver command needs --driver-command/],
    [{ driver: 'scripted' as const }, /--driver scripted needs --script/],
    [{ driverCommand: 'x' }, /--driver-command only goes with --driver command/],
    [{ driver: 'codex' as const, script: 'x' }, /--script only goes with --driver scripted/],
    [{ maxTurns: 3 }, /--max-turns only goes with --driver/],
    [{ driver: 'scripted' as const, script: '/nonexistent.json' }, /cannot read --script/],
  ])('%j is a usage error', (flags, re) => {
    expect(() => buildSpec('a', { task: 't', ...flags })).toThrow(re);
  });
});
