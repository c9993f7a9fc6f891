/**
 * The claude evaluator with the real Claude Code binary (the project's devDependency) against a
 * scripted Anthropic Messages server on 127.0.0.1: a verdict through agentWorkflow on a dev
 * server, a malformed answer (an evaluator error, not a verdict), and a model that never answers
 * (deadline, the process group killed, cleanup).
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeEvaluate } from '../../activities/evaluate.js';
import type { EvaluateInput } from '../../src/domain/contract/activity-types.js';
import type { EvaluatorConfig, Turn } from '../../src/domain/contract/schemas.js';
import { messageTexts, stall, startAnthropicServer, text, type AnthropicServer } from '../fixtures/anthropic-server.js';
import { claudeBinary, useOfflineClaude } from '../helpers/claude.js';
import { processesWithEnv, running } from '../helpers/procs.js';
import { eventually, useStack } from '../helpers/stack.js';

const VERDICT_LINE = JSON.stringify({ verdict: 'CORRECTION', pattern: 'SPIRALING', message: 'stop retrying npm run build', evidence: [2] });
const TASK = 'Make the CI build pass for the billing service (task marker T-4711)';

const failingBuild = { name: 'shell', args: 'npm run build', result: 'Error: exit code 2', ok: false };
const turns = (n: number): Turn[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t${i + 1}`, text: `trying the build again, attempt ${i + 1}`, toolCalls: [failingBuild] }));

interface LogRecord {
  msg: string;
  configDir?: string;
  pid?: number;
  [k: string]: unknown;
}
function captureLog(): { log: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void records.push(JSON.parse(s) as LogRecord) });
  return { log, records };
}

const claudeConfig = (model = 'haiku'): EvaluatorConfig => ({ kind: 'claude', claudePath: claudeBinary(), model });

/** Every request claude -p sent to /v1/messages (none offers tools, so all are side requests). */
const messages = (s: AnthropicServer) => s.requests.filter((r) => r.path === '/v1/messages');
/** The request carrying the evaluation prompt. */
const evaluationRequest = (s: AnthropicServer) => messages(s).find((r) => messageTexts(r.body, 'user').join('\n').includes('T-4711'));

describe('claude evaluator, through agentWorkflow on a dev server', () => {
  const stack = useStack();
  let model: AnthropicServer;
  let restore: () => void;
  beforeAll(async () => {
    model = await startAnthropicServer({ sideReply: text(VERDICT_LINE, { input_tokens: 1234, output_tokens: 56 }) });
    restore = useOfflineClaude(model.url);
  });
  afterAll(async () => {
    restore?.();
    await model?.close();
  });

  test('a spiralling window gets the scripted SPIRALING verdict; claude -p asked the named model with no tools', async () => {
    await stack.warden.start({
      agentId: 'claude-wf',
      task: TASK,
      evaluator: claudeConfig('claude-haiku-test'),
      supervisor: { evalInterval: 2, evalTimeoutMs: 30_000 },
    });
    for (const t of turns(2)) await stack.warden.reportTurn('claude-wf', t);
    const st = await eventually(
      async () => {
        const s = await stack.warden.status('claude-wf');
        return s.evaluations.total >= 1 ? s : null;
      },
      { timeoutMs: 90_000, what: 'an evaluation' },
    );
    expect(st.lastSkipReason).toBeNull();
    expect(st.evaluations).toEqual({ total: 1, ok: 0, flagged: 1, skipped: 0 });
    expect(st.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING', message: 'stop retrying npm run build' });
    expect(st.escalationStep).toBe(1);

    const req = evaluationRequest(model);
    expect(req).toBeDefined();
    const body = req!.body as { model?: string; tools?: unknown[] };
    expect(body.model).toBe('claude-haiku-test');
    expect(body.tools ?? []).toEqual([]);
    for (const r of messages(model)) expect((r.body as { tools?: unknown[] }).tools ?? []).toEqual([]);
    expect(messageTexts(req!.body, 'user').join('\n')).toContain('trying the build again, attempt 2');
  });

  test('the spend: the cost and tokens from its JSON output', async () => {
    const input: EvaluateInput = {
      agentId: 'claude-direct',
      task: TASK,
      turns: turns(3),
      reason: 'interval',
      evaluator: claudeConfig(),
      model: 'gpt-5.4',
      timeoutMs: 30_000,
    };
    const { log, records } = captureLog();
    const result = await makeEvaluate(log)(input);
    expect(result).toMatchObject({ kind: 'verdict', evaluator: 'claude', verdict: { kind: 'CORRECTION', pattern: 'SPIRALING' } });
    expect(result.spend?.calls).toBe(1);
    expect(result.spend?.failed).toBe(0);
    expect(result.spend?.costUsd).toBeGreaterThan(0);
    // the usage the server reported, and the price claude -p put on it
    expect(result.spend).toMatchObject({ tokensIn: 1234, tokensOut: 56, tokens: 1290 });
    const start = records.find((r) => r.msg === 'claude -p started')!;
    expect(existsSync(start.configDir!)).toBe(false); // the throwaway config directory is gone
    expect(JSON.stringify(records)).not.toContain('ANTHROPIC_API_KEY'); // no environment in the log
  });
});

describe('claude evaluator, a malformed answer', () => {
  const stack = useStack();
  let model: AnthropicServer;
  let restore: () => void;
  beforeAll(async () => {
    model = await startAnthropicServer({ sideReply: text('I think the agent is probably fine, keep going.') });
    restore = useOfflineClaude(model.url);
  });
  afterAll(async () => {
    restore?.();
    await model?.close();
  });

  test('an evaluator error (a skipped evaluation), not a verdict; the agent stays supervised', async () => {
    await stack.warden.start({ agentId: 'claude-bad', task: TASK, evaluator: claudeConfig(), supervisor: { evalInterval: 2, evalTimeoutMs: 30_000 } });
    for (const t of turns(2)) await stack.warden.reportTurn('claude-bad', t);
    const st = await eventually(
      async () => {
        const s = await stack.warden.status('claude-bad');
        return s.evaluations.total >= 1 ? s : null;
      },
      { timeoutMs: 90_000, what: 'an evaluation' },
    );
    expect(st.evaluations).toMatchObject({ total: 1, flagged: 0, skipped: 1 });
    expect(st.lastSkipReason).toMatch(/^unparseable answer: "I think the agent is probably fine/);
    expect(st.lastVerdict).toBeNull();
    expect(st.escalationStep).toBe(0);
    const reply = await stack.warden.reportTurn('claude-bad', { id: 't3', text: 'still going' });
    expect(reply.whispers).toEqual([]);
    expect((await stack.warden.status('claude-bad')).state).not.toMatch(/ended|failed/);
  });
});

describe('claude evaluator, a model that never answers', () => {
  let model: AnthropicServer;
  let restore: () => void;
  beforeAll(async () => {
    model = await startAnthropicServer({ sideReply: stall() });
    restore = useOfflineClaude(model.url);
  });
  afterAll(async () => {
    restore?.();
    await model?.close();
  });

  test('skipped at the deadline; the claude process group and its config directory are gone', async () => {
    const timeoutMs = 8_000; // the evaluator's budget is 1 s less
    const { log, records } = captureLog();
    const t0 = Date.now();
    const running$ = makeEvaluate(log)({
      agentId: 'claude-stall',
      task: TASK,
      turns: turns(3),
      reason: 'interval',
      evaluator: claudeConfig(),
      model: 'gpt-5.4',
      timeoutMs,
    });
    const start = await eventually(async () => records.find((r) => r.msg === 'claude -p started'), { timeoutMs: 5_000, what: 'claude -p started log' });
    const configDir = start.configDir!;
    await eventually(async () => evaluationRequest(model), { timeoutMs: 7_000, what: 'the evaluation request' });
    const tree = processesWithEnv(`CLAUDE_CONFIG_DIR=${configDir}`);
    expect(tree).toContain(start.pid!);

    const result = await running$;
    const elapsed = Date.now() - t0;
    expect(result.kind).toBe('skipped');
    expect(result.kind === 'skipped' && result.reason).toBe(`evaluator did not answer within ${timeoutMs - 1_000} ms`);
    expect(elapsed).toBeLessThan(timeoutMs + 3_000);
    expect(tree.filter(running)).toEqual([]);
    expect(processesWithEnv(`CLAUDE_CONFIG_DIR=${configDir}`)).toEqual([]);
    expect(existsSync(dirname(configDir))).toBe(false);
  });
});
