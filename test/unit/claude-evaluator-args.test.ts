/** The claude evaluator's pure parts: argv, the worker variables passed on, output parsing and cost. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildClaudeEvaluatorArgs, claudeEvaluatorPassThrough, claudeUsage, parseClaudeEvaluatorOutput } from '../../activities/evaluators/claude.js';
import { buildSpec } from '../../src/cli/commands/start.js';
import { parseConfig, specFromConfig } from '../../src/config/file.js';
import { AgentSpecSchema, EvaluatorConfigSchema } from '../../src/domain/contract/schemas.js';

const VERDICT = '{"verdict":"CORRECTION","pattern":"SPIRALING","message":"stop","evidence":[2]}';

describe('buildClaudeEvaluatorArgs', () => {
  test('print mode, the model, JSON output, no tools, no MCP servers, no saved session; no prompt in argv', () => {
    const args = buildClaudeEvaluatorArgs('haiku');
    expect(args).toEqual(['-p', '--model', 'haiku', '--output-format', 'json', '--tools', '', '--strict-mcp-config', '--no-session-persistence']);
  });
});

describe('claudeEvaluatorPassThrough', () => {
  test('the worker ANTHROPIC_* variables and the quiet switches; no other secrets', () => {
    const names = claudeEvaluatorPassThrough({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://x', OPENAI_API_KEY: 'o', AWS_SECRET_ACCESS_KEY: 's' });
    expect(names).toContain('ANTHROPIC_API_KEY');
    expect(names).toContain('ANTHROPIC_BASE_URL');
    expect(names).toContain('DISABLE_AUTOUPDATER');
    expect(names).not.toContain('OPENAI_API_KEY');
    expect(names).not.toContain('AWS_SECRET_ACCESS_KEY');
  });
});

describe('parseClaudeEvaluatorOutput', () => {
  const ok = {
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: `  ${VERDICT}\n`,
    total_cost_usd: 0.00123,
    usage: { input_tokens: 100, cache_creation_input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 42 },
  };
  test('the result text, with the cost and tokens', () => {
    expect(parseClaudeEvaluatorOutput(JSON.stringify(ok))).toEqual({ text: VERDICT, usage: { costUsd: 0.00123, tokensIn: 125, tokensOut: 42 } });
  });
  test('an array of events: the last result event counts', () => {
    const out = JSON.stringify([{ type: 'system', subtype: 'init' }, { type: 'assistant' }, ok]);
    expect(parseClaudeEvaluatorOutput(out).text).toBe(VERDICT);
  });
  test('an error result throws, naming it', () => {
    const err = { ...ok, subtype: 'success', is_error: true, result: 'API Error: 401 invalid x-api-key' };
    expect(() => parseClaudeEvaluatorOutput(JSON.stringify(err))).toThrow(/claude -p reported an error.*401/);
    expect(() => parseClaudeEvaluatorOutput(JSON.stringify({ ...ok, subtype: 'error_max_turns', result: undefined }))).toThrow(/error_max_turns/);
  });
  test('no output, not JSON, no result, an empty result: errors', () => {
    expect(() => parseClaudeEvaluatorOutput('')).toThrow(/printed nothing/);
    expect(() => parseClaudeEvaluatorOutput('hello')).toThrow(/no result object/);
    expect(() => parseClaudeEvaluatorOutput('{"type":"assistant"}')).toThrow(/no result object/);
    expect(() => parseClaudeEvaluatorOutput(JSON.stringify({ ...ok, result: '  ' }))).toThrow(/empty result/);
  });
});

describe('claudeUsage', () => {
  test('absent or invalid numbers are left out', () => {
    expect(claudeUsage({})).toBeUndefined();
    expect(claudeUsage({ total_cost_usd: 'x', usage: { output_tokens: -1 } })).toBeUndefined();
    expect(claudeUsage({ usage: { output_tokens: 7 } })).toEqual({ tokensOut: 7 });
  });
});

describe('the claude evaluator in the AgentSpec schema', () => {
  test('kind claude with an optional model and claudePath; a wrong field is named', () => {
    expect(EvaluatorConfigSchema.parse({ kind: 'claude' })).toEqual({ kind: 'claude' });
    expect(EvaluatorConfigSchema.parse({ kind: 'claude', model: 'sonnet', claudePath: '/bin/claude' })).toMatchObject({ model: 'sonnet' });
    const bad = EvaluatorConfigSchema.safeParse({ kind: 'claude', model: '' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['model']);
    const extra = EvaluatorConfigSchema.safeParse({ kind: 'claude', config: [] });
    expect(JSON.stringify(extra.error?.issues)).toContain('config');
    expect(EvaluatorConfigSchema.parse({ kind: 'tiered', model: { kind: 'claude' } })).toMatchObject({ model: { kind: 'claude' } });
  });
});

describe('the claude evaluator from the config file and the flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-claude-eval-cfg-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, yaml: string) => {
    const file = join(dir, name);
    writeFileSync(file, yaml);
    return file;
  };

  test('evaluator: {kind: claude, model, claude_path} becomes the spec; an unknown key is named', () => {
    const cfg = parseConfig('evaluator:\n  kind: claude\n  model: sonnet\n  claude_path: /opt/claude\n', 'x.yaml');
    expect(specFromConfig(cfg).evaluator).toEqual({ kind: 'claude', model: 'sonnet', claudePath: '/opt/claude' });
    expect(() => parseConfig('evaluator:\n  kind: claude\n  credentials_home: /x\n', 'x.yaml')).toThrow(/credentials_home/);
    const tiered = parseConfig('evaluator:\n  kind: tiered\n  model:\n    kind: claude\n', 'x.yaml');
    expect(specFromConfig(tiered).evaluator).toEqual({ kind: 'tiered', model: { kind: 'claude' } });
  });

  test('--evaluator claude and --tier-model claude; the config file keeps its model', () => {
    expect(AgentSpecSchema.parse(buildSpec('a', { task: 't', evaluator: 'claude' })).evaluator).toEqual({ kind: 'claude' });
    const file = write('claude.yaml', 'evaluator:\n  kind: claude\n  model: sonnet\n');
    expect(buildSpec('a', { task: 't', config: file, evaluator: 'claude' }).evaluator).toEqual({ kind: 'claude', model: 'sonnet' });
    expect(AgentSpecSchema.parse(buildSpec('a', { task: 't', evaluator: 'tiered', tierModel: 'claude' })).evaluator).toMatchObject({
      kind: 'tiered',
      model: { kind: 'claude' },
    });
  });
});
