/**
 * `warden evaluate --cases` reports the triage of `tiered`'s first tier (the built CLI, a local
 * OpenAI-compatible server as the model): per label, the windows the first tier sends to the model
 * under --sample-ok 0, decided without asking any model. The hand-made set and its expected counts:
 * test/fixtures/triage-cases.ts.
 */
import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startChatServer, type ChatServer } from '../fixtures/chat-server.js';
import { TRIAGE_CASES, TRIAGE_EXPECTED, triageCasesJsonl } from '../fixtures/triage-cases.js';
import { ROOT } from '../helpers/stack.js';

const OK_REPLY = {
  kind: 'json' as const,
  body: {
    id: 'chatcmpl-triage',
    object: 'chat.completion',
    model: 'warden-triage-test-model',
    choices: [
      { index: 0, message: { role: 'assistant', content: JSON.stringify({ verdict: 'OK', pattern: null, message: '', evidence: [] }) }, finish_reason: 'stop' },
    ],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  },
};

describe('warden evaluate --cases: the triage of the first tier', () => {
  let chat: ChatServer;
  let file: string;
  beforeAll(async () => {
    chat = await startChatServer({ script: () => OK_REPLY });
    file = join(mkdtempSync(join(tmpdir(), 'warden-triage-')), 'cases.jsonl');
    writeFileSync(file, triageCasesJsonl());
  });
  afterAll(async () => {
    await chat?.close();
  });

  const cli = (...args: string[]) =>
    execa('node', [join(ROOT, 'dist/src/cli/main.js'), 'evaluate', '--cases', file, ...args], { reject: false, env: { WARDEN_LOG_LEVEL: 'error' } });

  test('--evaluator tiered --json: a triage object with the hand-computed counts; sampling and the model do not change it', async () => {
    const before = chat.requests.length;
    const r = await cli('--evaluator', 'tiered', '--tier-model', 'openai', '--openai-base-url', chat.baseUrl, '--sample-ok', '1', '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { triage: unknown; modelCalls: number; tiers: Array<{ id: string; asked: string | null }> };
    expect(out.triage).toEqual(TRIAGE_EXPECTED);
    // The evaluation itself asked the model on the flagged, unsure and (sample-ok 1) sampled
    // windows; the triage added no call: every request the server saw is one the evaluation made.
    const judged = TRIAGE_CASES.filter((c) => !c.skipped).length;
    expect(out.modelCalls).toBe(judged);
    expect(chat.requests.length - before).toBe(out.modelCalls);
    // Where the evaluation asked for a reason other than sampling, the triage sends it too.
    expect(out.tiers.map((w) => (w.asked === 'sampled' ? null : w.asked))).toEqual(TRIAGE_CASES.map((c) => c.sent));
  });

  test('--evaluator heuristic (the first tier alone): the same triage with no model at all; a table in the text output', async () => {
    const before = chat.requests.length;
    const j = await cli('--json');
    expect(j.exitCode, j.stderr).toBe(0);
    expect((JSON.parse(j.stdout) as { triage: unknown }).triage).toEqual(TRIAGE_EXPECTED);
    const text = await cli();
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain('triage: the windows the first tier sends to the model (--sample-ok 0; no model asked)');
    expect(text.stdout).toMatch(/SPIRALING\s+3\s+2\s+1\s+1\s+66\.7 %/);
    expect(text.stdout).toContain("recall with a perfect model 50.0 % (2/4); OK windows sent (the model's cost) 25.0 % (1/4)");
    expect(chat.requests.length).toBe(before);
  });

  test('a model evaluator alone has no first tier: no triage', async () => {
    const r = await cli('--evaluator', 'openai', '--openai-base-url', chat.baseUrl, '--json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).not.toHaveProperty('triage');
  });
});
