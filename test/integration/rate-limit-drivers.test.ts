/**
 * What the real codex binary reports when its model answers 429 is recognised as a rate limit
 * (src/domain/agent/rate-limit.ts), and a 500 (which codex words as "high demand") as an overloaded
 * model; an ordinary model error (a 400) is not. The drivers are called directly
 * (no Temporal) against the scripted model servers on 127.0.0.1, with codex's own retries off so
 * the error comes back at once.
 *
 * Claude Code retries a 429 or 529 itself, with its own backoff, even with CLAUDE_CODE_MAX_RETRIES=0
 * (it sent 6 requests in 20 s here), so its error only reaches the driver after those retries; that
 * is not run here. Only the negative case is: a 400 from the model is an ordinary failure.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { claudeDriver } from '../../activities/drivers/claude.js';
import { codexDriver } from '../../activities/drivers/codex.js';
import type { Driver, DriverContext, TurnRequest } from '../../activities/drivers/types.js';
import { classifyTurnFailure } from '../../src/domain/agent/rate-limit.js';
import { startAnthropicServer, type AnthropicReply } from '../fixtures/anthropic-server.js';
import { httpError, startModelServer } from '../fixtures/model-server.js';
import { claudeBinary, useOfflineClaude } from '../helpers/claude.js';
import { cleanup } from '../helpers/stack.js';

let scratch: string;
let restoreEnv = () => {};
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-rate-limit-drivers-'));
  restoreEnv = useOfflineClaude(null, { apiKey: 'sk-ant-warden-test-rate-limit' });
});
afterAll(() => {
  cleanup(scratch);
  restoreEnv();
});

const ctx = (): DriverContext => ({ signal: new AbortController().signal, killGraceMs: 3_000, heartbeat: () => {}, log: pino({ level: 'silent' }) });
function request(agentId: string): TurnRequest {
  const workDir = join(scratch, agentId, 'work');
  mkdirSync(workDir, { recursive: true });
  return {
    agentId,
    task: 'say hi',
    turnNumber: 1,
    input: 'say hi',
    whispers: [],
    session: null,
    doneMarker: 'TASK COMPLETE',
    workDir,
    homeDir: join(scratch, agentId, 'home'),
  };
}
async function failure(driver: Driver, agentId: string): Promise<string> {
  try {
    await driver.runTurn(request(agentId), ctx());
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error('the turn did not fail');
}

describe('codex', () => {
  const cases = [
    {
      name: '429',
      reply: httpError(429, { error: { message: 'Rate limit reached for warden-test-model.', type: 'requests', code: 'rate_limit_exceeded' } }),
      expected: 'model rate-limited (429)',
    },
    // codex words every HTTP 500 it gives up on as "We're currently experiencing high demand, which may cause
    // temporary errors." (the body's own message is lost): warden takes it at its word, blocked and retried.
    { name: '500', reply: httpError(500, { error: { message: 'UNIQUE-SERVER-ERROR', type: 'server_error' } }), expected: 'model overloaded (high demand)' },
  ];
  test.each(cases)('a model answering $name', async ({ name, reply, expected }) => {
    const model = await startModelServer({ whenExhausted: reply });
    try {
      const creds = join(scratch, `codex-creds-${name}`);
      mkdirSync(creds, { recursive: true });
      const text = await failure(
        codexDriver({ kind: 'codex', model: 'warden-test-model', config: model.codexOverrides(), sandbox: 'workspace-write', credentialsHome: creds }),
        `cx-${name}`,
      );
      expect(model.requests.length, text).toBeGreaterThan(0);
      expect(classifyTurnFailure({ driver: 'codex', text })?.reason ?? null, text).toBe(expected);
    } finally {
      await model.close();
    }
  });
});

describe('claude', () => {
  const err = (status: number, type: string, message: string): AnthropicReply => ({ kind: 'error', status, body: { type: 'error', error: { type, message } } });
  const cases: Array<{ name: string; reply: AnthropicReply; expected: string | null }> = [
    { name: '400', reply: err(400, 'invalid_request_error', 'UNIQUE-BAD-REQUEST'), expected: null },
  ];
  test.each(cases)('a model answering $name', async ({ name, reply, expected }) => {
    const model = await startAnthropicServer({ script: () => reply });
    process.env.ANTHROPIC_BASE_URL = model.url;
    try {
      const text = await failure(claudeDriver({ kind: 'claude', claudePath: claudeBinary(), model: 'claude-sonnet-4-5', args: [] }), `cl-${name}`);
      expect(model.agentRequests().length, text).toBeGreaterThan(0);
      expect(classifyTurnFailure({ driver: 'claude', text })?.reason ?? null, text).toBe(expected);
    } finally {
      await model.close();
    }
  });
});
