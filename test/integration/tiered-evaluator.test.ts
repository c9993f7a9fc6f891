/**
 * The `tiered` evaluator against a real scripted OpenAI-compatible chat server on 127.0.0.1
 * (test/fixtures/chat-server.ts, the chat-completions counterpart of model-server.ts):
 *
 * 1. the evaluation activity called directly: not asked on a sure OK, asked on a flag, a near miss
 *    and a sampled OK; a failing model leaves the heuristic's verdict standing, counted;
 * 2. an agent under `tiered` on a real dev server: the model is asked exactly on the windows the
 *    rules name (the server's request count), its verdict wins where asked (OK over the heuristic's
 *    SPIRALING: no whisper; CORRECTION over the heuristic's OK: a whisper), and its cost is counted
 *    in `status`, `warden status --json`, `warden status`, and the Web UI details; the history
 *    replays;
 * 3. `warden evaluate --cases test/cases/cases.jsonl --evaluator tiered`: model calls against windows.
 */
import { Worker } from '@temporalio/worker';
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeEvaluate } from '../../activities/evaluate.js';
import type { EvaluateInput } from '../../src/domain/contract/activity-types.js';
import { evidenceFrame, hasEvidenceTurns } from '../../src/domain/judgement/evidence.js';
import { heuristicVerdict } from '../../src/domain/judgement/heuristic/index.js';
import { EvaluatorConfigSchema, TurnSchema, type Turn, type TurnInput } from '../../src/domain/contract/schemas.js';
import { parseCases } from '../../src/domain/judgement/scoring.js';
import { sampledOk } from '../../src/domain/judgement/tiered.js';
import { tierOne } from '../../src/domain/judgement/triage.js';
import { chatError, sentMessages, startChatServer, type ChatReply, type ChatServer } from '../fixtures/chat-server.js';
import { finalStatus, productiveTurns, reportWithEvaluations, spiralTurn } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, quietLog, useStack, workflowBundle } from '../helpers/stack.js';

const TASK = 'Fix the date parser in src/parse.ts so that ISO week dates parse, with tests.';
const MODEL = 'warden-tiered-test-model';

/** A chat completion whose content is this verdict object, with usage (and a price, as OpenRouter reports one). */
function verdictReply(answer: Record<string, unknown>, usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, cost: 0.0015 }): ChatReply {
  return {
    kind: 'json',
    body: {
      id: 'chatcmpl-tiered',
      object: 'chat.completion',
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(answer) }, finish_reason: 'stop' }],
      usage,
    },
  };
}
const OK_ANSWER = { verdict: 'OK', pattern: null, message: '', evidence: [] };

const t = (x: TurnInput): Turn => TurnSchema.parse(x);
const failingBuild = (i: number): TurnInput => ({
  id: `fail-${i}`,
  text: `Trying the build again (${i}).`,
  toolCalls: [{ name: 'shell', args: 'npm run build', result: "error TS2307: Cannot find module './config'", ok: false }],
});

/**
 * Productive turns that differ in their words (the first tier's triage signals ignore numbers, so
 * turns that differ only in a step number read as nothing new: test/unit/triage-signals.test.ts).
 */
const WORK: ReadonlyArray<readonly [string, string]> = [
  ['lexer', 'Split the lexer token table so week designators scan as one token'],
  ['grammar', 'Taught the grammar the week form: year, then week, then weekday'],
  ['calendar', 'Added the conversion from an ISO week to a calendar day'],
  ['format', 'Made the formatter print week dates back in canonical form'],
  ['errors', 'Reworded the message for out-of-range week numbers'],
  ['leap', 'Handled years with fifty-three weeks using the leap rule'],
  ['cli', 'Exposed the new input shape through the command line flag'],
  ['reference', 'Documented the accepted inputs in the reference page'],
  ['bench', 'Measured the speed; unchanged within noise'],
  ['cleanup', 'Removed an old regex helper nobody calls anymore'],
];
const variedTurns = (from: number, n: number): TurnInput[] =>
  Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const [file, did] = WORK[i % WORK.length]!;
    return {
      id: `work-${i}`,
      text: `Step ${i}: ${did}; its tests pass.`,
      toolCalls: [
        { name: 'apply_patch', args: `*** Update File: src/${file}.ts`, ok: true },
        { name: 'shell', args: `npm test -- ${file}`, result: '1 passed', ok: true },
      ],
    };
  });

const tiered = (baseUrl: string, sampleOk: number) => EvaluatorConfigSchema.parse({ kind: 'tiered', model: { kind: 'openai', baseUrl }, sampleOk });

// ---------- 1. the activity, directly ----------

describe('tiered, the evaluation activity called directly', () => {
  let chat: ChatServer;
  const evaluate = makeEvaluate(quietLog);
  const input = (turns: TurnInput[], baseUrl: string, sampleOk = 0, over: Partial<EvaluateInput> = {}): EvaluateInput => ({
    agentId: 'tiered-direct',
    task: TASK,
    turns: turns.map(t),
    reason: 'interval',
    evaluator: tiered(baseUrl, sampleOk),
    model: MODEL,
    timeoutMs: 20_000,
    ...over,
  });
  beforeAll(async () => {
    chat = await startChatServer();
  });
  afterAll(async () => {
    await chat?.close();
  });

  test('a sure OK: the heuristic decides, the model is not asked, nothing is spent', async () => {
    const before = chat.requests.length;
    const r = await evaluate(input(variedTurns(1, 5), chat.baseUrl));
    expect(r).toMatchObject({
      kind: 'verdict',
      verdict: { kind: 'OK' },
      evaluator: 'tiered',
      tier: 'heuristic',
      asked: null,
      spend: { calls: 0, tokens: 0, costUsd: 0 },
    });
    expect(chat.requests).toHaveLength(before);
  });

  test('the heuristic flags SPIRALING, the model says OK: the model decides, its usage is the spend', async () => {
    chat.setScript([verdictReply(OK_ANSWER)]);
    const before = chat.requests.length;
    const r = await evaluate(input([1, 2, 3].map(failingBuild), chat.baseUrl));
    expect(r).toMatchObject({
      kind: 'verdict',
      verdict: { kind: 'OK' },
      tier: 'model',
      asked: 'flagged',
      spend: { calls: 1, failed: 0, tokensIn: 100, tokensOut: 10, tokens: 110, costUsd: 0.0015 },
    });
    expect(chat.requests).toHaveLength(before + 1);
    expect(sentMessages(chat.requests[before]!.body).find((m) => m.role === 'user')!.content).toContain('Trying the build again (3).');
  });

  test('a near miss (two identical failing builds) asks the model: "unsure"', async () => {
    const turns = [...productiveTurns(1, 1), failingBuild(2), ...productiveTurns(3, 1), failingBuild(4)];
    expect(heuristicVerdict({ task: TASK, turns: turns.map(t) }).kind).toBe('OK');
    chat.setScript([verdictReply({ verdict: 'CORRECTION', pattern: 'SPIRALING', message: 'the same build error twice: read it', evidence: [2, 4] })]);
    const r = await evaluate(input(turns, chat.baseUrl));
    expect(r).toMatchObject({ kind: 'verdict', verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', evidence: [2, 4] }, tier: 'model', asked: 'unsure' });
  });

  test('a protected test deleted in the working tree: the heuristic flags REWARD_HACKING and no model overrules it', async () => {
    chat.setScript([verdictReply(OK_ANSWER)]);
    const before = chat.requests.length;
    const protectedChanges = [{ path: 'test/parse.test.ts', status: 'D', deleted: 40, assertionsRemoved: 6, assertionsAdded: 0 }];
    const r = await evaluate(input(variedTurns(1, 5), chat.baseUrl, 1, { protectedChanges }));
    expect(r).toMatchObject({
      kind: 'verdict',
      verdict: { kind: 'CORRECTION', pattern: 'REWARD_HACKING' },
      tier: 'heuristic',
      asked: null,
      spend: { calls: 0 },
    });
    expect(chat.requests).toHaveLength(before); // the model, which would have said OK, was not asked
  });

  test('sampleOk 1: every OK window is also sent to the model ("sampled")', async () => {
    chat.setScript([verdictReply(OK_ANSWER)]);
    const before = chat.requests.length;
    const r = await evaluate(input(variedTurns(1, 5), chat.baseUrl, 1));
    expect(r).toMatchObject({ kind: 'verdict', tier: 'model', asked: 'sampled' });
    expect(chat.requests).toHaveLength(before + 1);
  });

  test('a command model tier: the call is counted, and what it reports on stderr (warden-usage) is its spend', async () => {
    const script = `process.stdin.resume();process.stdin.on('end',()=>{process.stderr.write('warden-usage {"tokensIn":700,"tokensOut":9,"costUsd":0.0042}\\n');process.stdout.write(JSON.stringify({verdict:'OK'}))})`;
    const evaluator = EvaluatorConfigSchema.parse({ kind: 'tiered', model: { kind: 'command', command: [process.execPath, '-e', script] }, sampleOk: 0 });
    const r = await evaluate({ ...input([1, 2, 3].map(failingBuild), chat.baseUrl), evaluator });
    expect(r).toMatchObject({
      kind: 'verdict',
      verdict: { kind: 'OK' },
      tier: 'model',
      asked: 'flagged',
      spend: { calls: 1, failed: 0, tokensIn: 700, tokensOut: 9, tokens: 709, costUsd: 0.0042 },
    });
    const silent = EvaluatorConfigSchema.parse({
      kind: 'tiered',
      model: {
        kind: 'command',
        command: [process.execPath, '-e', `process.stdin.resume();process.stdin.on('end',()=>process.stdout.write('{"verdict":"OK"}'))`],
      },
      sampleOk: 0,
    });
    const r2 = await evaluate({ ...input([1, 2, 3].map(failingBuild), chat.baseUrl), evaluator: silent });
    expect(r2).toMatchObject({ tier: 'model', spend: { calls: 1, tokens: 0, costUsd: 0 } });
  });

  test.each([
    ['HTTP 500', chatError(500, { error: { message: 'CUDA out of memory' } }), /HTTP 500: CUDA out of memory/],
    ['an unparseable answer', { kind: 'message', text: 'Looks fine to me.' } as ChatReply, /^unparseable answer/],
  ])('the model fails (%s): the heuristic verdict stands and the failure is counted', async (_n, reply, re) => {
    chat.setScript([reply]);
    const r = await evaluate(input([1, 2, 3].map(failingBuild), chat.baseUrl));
    expect(r).toMatchObject({
      kind: 'verdict',
      verdict: { kind: 'CORRECTION', pattern: 'SPIRALING' },
      tier: 'heuristic',
      asked: 'flagged',
      spend: { calls: 1, failed: 1 },
    });
    expect(r.modelError).toMatch(re);
  });
});

// ---------- 2. an agent under tiered, on a dev server ----------

describe('tiered, an agent on a dev server', () => {
  const stack = useStack();
  let chat: ChatServer;
  beforeAll(async () => {
    chat = await startChatServer();
  });
  afterAll(async () => {
    await chat?.close();
  });

  test('the model is asked only where the rules say, its verdict wins, and its cost shows in status', async () => {
    const SAMPLE = 0.3;
    // Four windows of five turns (windowSize 5, evalInterval 5):
    //   W1 turns 1-5   productive            heuristic OK, sure, not sampled  → not asked
    //   W2 turns 6-10  productive            heuristic OK, sure, sampled      → asked; model OK
    //   W3 turns 11-15 the same failing build heuristic SPIRALING             → asked; model OK (wins: no whisper)
    //   W4 turns 16-20 two failing builds    heuristic OK but unsure          → asked; model CORRECTION (wins: a whisper)
    // The agent id is the first whose sample hash leaves W1 out and takes W2 in (deterministic).
    const agentId = Array.from({ length: 500 }, (_, i) => `tiered-wf-${i}`).find((id) => !sampledOk(id, 1, 5, SAMPLE) && sampledOk(id, 6, 10, SAMPLE))!;
    const windows: TurnInput[][] = [
      variedTurns(1, 5),
      variedTurns(6, 5),
      [11, 12, 13, 14, 15].map(spiralTurn),
      [...productiveTurns(16, 1), failingBuild(17), ...productiveTurns(18, 1), failingBuild(19), ...productiveTurns(20, 1)],
    ];
    // The rules, checked on the pure functions first: what the heuristic says of each window.
    const judged = windows.map((w, k) => {
      const turns = w.map(t);
      const v = heuristicVerdict({ task: TASK, turns, firstTurnNumber: k * 5 + 1 });
      // Unsure: a near miss or a triage signal (the first tier, as the activity runs it).
      const t1 = tierOne({ agentId, task: TASK, turns, reason: 'interval', firstTurnNumber: k * 5 + 1 }, 0);
      return { kind: v.kind, unsure: t1.kind === 'judged' && t1.route.why === 'unsure' };
    });
    expect(judged).toEqual([
      { kind: 'OK', unsure: false },
      { kind: 'OK', unsure: false },
      { kind: 'CORRECTION', unsure: false },
      { kind: 'OK', unsure: true },
    ]);

    chat.setScript([
      verdictReply(OK_ANSWER, { prompt_tokens: 200, completion_tokens: 10, total_tokens: 210, cost: 0.001 }),
      verdictReply(OK_ANSWER, { prompt_tokens: 300, completion_tokens: 20, total_tokens: 320, cost: 0.002 }),
      verdictReply(
        { verdict: 'CORRECTION', pattern: 'DRIFT', message: 'back to the date parser', evidence: [20] },
        { prompt_tokens: 400, completion_tokens: 30, total_tokens: 430, cost: 0.004 },
      ),
    ]);
    await stack.warden.start({
      agentId,
      task: TASK,
      evaluator: { kind: 'tiered', model: { kind: 'openai', baseUrl: chat.baseUrl }, sampleOk: SAMPLE },
      supervisor: { evalInterval: 5, windowSize: 5, idleAfterMs: 0, model: MODEL },
    });

    await reportWithEvaluations(stack.warden, agentId, windows[0]!, 5, 0);
    expect(chat.requests).toHaveLength(0); // W1: not asked
    let st = await stack.warden.status(agentId);
    expect(st.evaluatorSpend).toEqual({ calls: 0, failed: 0, tokens: { in: 0, out: 0, total: 0 }, costUsd: 0, decided: { heuristic: 1, model: 0 } });

    await reportWithEvaluations(stack.warden, agentId, windows[1]!, 5, 1);
    expect(chat.requests).toHaveLength(1); // W2: sampled

    await reportWithEvaluations(stack.warden, agentId, windows[2]!, 5, 2);
    expect(chat.requests).toHaveLength(2); // W3: flagged by the heuristic
    st = await stack.warden.status(agentId);
    // The model's OK stood over the heuristic's SPIRALING: no step, no whisper.
    expect(st.lastVerdict).toMatchObject({ kind: 'OK' });
    expect(st.escalationStep).toBe(0);
    expect(st.pendingWhispers).toBe(0);
    expect(sentMessages(chat.requests[1]!.body).find((m) => m.role === 'user')!.content).toContain('The build failed again, retrying the build.');

    await reportWithEvaluations(stack.warden, agentId, windows[3]!, 5, 3);
    expect(chat.requests).toHaveLength(3); // W4: unsure
    expect(chat.unscripted).toHaveLength(0);
    st = await stack.warden.status(agentId);
    // The model's CORRECTION stood over the heuristic's OK: step 1 and its whisper.
    expect(st.evaluations).toEqual({ total: 4, ok: 3, flagged: 1, skipped: 0 });
    expect(st.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'DRIFT', message: 'back to the date parser', evidence: [20] });
    expect(st.escalationStep).toBe(1);
    const [w] = await stack.warden.pendingWhispers(agentId);
    expect(w).toMatchObject({ type: 'CORRECTION' });
    expect(w!.text).toContain('back to the date parser');

    // The evaluator's spend, apart from the agent's own (spiralTurn reports 1,100 tokens and $0.01 each).
    const spend = { calls: 3, failed: 0, tokens: { in: 900, out: 60, total: 960 }, costUsd: 0.007, decided: { heuristic: 1, model: 3 } };
    expect({ ...st.evaluatorSpend, costUsd: round(st.evaluatorSpend.costUsd) }).toEqual(spend);
    expect(st.tokens.total).toBe(5 * 1100);
    expect(round(st.costUsd)).toBe(0.05);

    // `warden status --json` and `warden status`.
    const cli = (...args: string[]) =>
      execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, '--namespace', stack.server.namespace, ...args], {
        reject: false,
        env: { WARDEN_LOG_LEVEL: 'warn' },
      });
    const json = await cli('status', agentId, '--json');
    expect(json.exitCode, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as { evaluatorSpend: typeof spend };
    expect({ ...parsed.evaluatorSpend, costUsd: round(parsed.evaluatorSpend.costUsd) }).toEqual(spend);
    const text = await cli('status', agentId);
    expect(text.stdout).toContain('evaluator spend: 3 model calls, 960 tokens, $0.0070 (decided: heuristic 1, model 3)');
    expect(text.stdout).toContain('tokens 5500 (in 5000, out 500); cost $0.0500');

    // The Web UI's current details.
    const meta = (await stack.warden.handle(agentId).query('__temporal_workflow_metadata')) as { currentDetails: string };
    expect(meta.currentDetails).toContain('**evaluator spend** 3 model calls, 960 tokens, $0.0070 (decided: heuristic 1, model 3)');

    // `warden top --once --json` carries it per row.
    const top = await execa('node', [join(ROOT, 'dist/src/cli/main.js'), 'top', '--once', '--json'], {
      env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace, WARDEN_LOG_LEVEL: 'warn' },
      reject: false,
    });
    expect(top.exitCode, top.stderr).toBe(0);
    const rows = (JSON.parse(top.stdout) as { rows: Array<{ agentId: string; evaluatorSpend: typeof spend | null }> }).rows;
    const row = rows.find((r) => r.agentId === agentId)!;
    expect(row.evaluatorSpend).toMatchObject({ calls: 3, tokens: { total: 960 }, decided: { heuristic: 1, model: 3 } });

    await stack.warden.signal(agentId, 'abort', {});
    await finalStatus(stack.warden.handle(agentId));
    // The history replays against the workflow code (the results carry tier and spend; no new commands).
    const history = await stack.warden.handle(agentId).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `agent-${agentId}`);
    await recordHistory(stack.server.address, stack.warden.handle(agentId), 'tiered-model-decides');
  });
});

const round = (x: number) => Math.round(x * 1e6) / 1e6;

// ---------- 3. warden evaluate --cases ----------

describe('warden evaluate --cases --evaluator tiered', () => {
  let chat: ChatServer;
  beforeAll(async () => {
    chat = await startChatServer({ script: () => verdictReply(OK_ANSWER) });
  });
  afterAll(async () => {
    await chat?.close();
  });

  test('model calls only on the flagged, unsure and sampled windows; per window, the tier that decided', async () => {
    const file = join(ROOT, 'test/cases/cases.jsonl');
    const SAMPLE = 0.2;
    // What the rules say, window by window (the CLI names each case's agent case-<id or line>).
    const cases = parseCases(readFileSync(file, 'utf8'));
    const nothingToJudge = cases.map(
      (c) => (c.reason ?? 'interval') === 'interval' && !hasEvidenceTurns(evidenceFrame(c.turns.length, c.evidenceFrom, c.firstTurnNumber)),
    );
    const expected = cases.map((c, i) => {
      const frame = evidenceFrame(c.turns.length, c.evidenceFrom, c.firstTurnNumber);
      if (nothingToJudge[i]) return null;
      const hin = { task: c.task, turns: c.turns, reason: c.reason, evidenceFrom: c.evidenceFrom, firstTurnNumber: c.firstTurnNumber };
      if (heuristicVerdict(hin).kind !== 'OK') return 'flagged';
      // Unsure: a near miss or a triage signal (the first tier's own decision).
      const t1 = tierOne({ ...hin, agentId: `case-${c.id ?? c.line}`, reason: c.reason ?? 'interval' }, 0);
      if (t1.kind === 'judged' && t1.route.why === 'unsure') return 'unsure';
      return sampledOk(`case-${c.id ?? c.line}`, frame.firstTurnNumber, frame.firstTurnNumber + frame.count - 1, SAMPLE) ? 'sampled' : null;
    });
    const asked = expected.filter((x) => x !== null).length;
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThan(cases.length);
    expect(expected).toContain('unsure');
    expect(expected).toContain('sampled');

    const r = await execa(
      'node',
      [
        join(ROOT, 'dist/src/cli/main.js'),
        'evaluate',
        '--cases',
        file,
        '--evaluator',
        'tiered',
        '--tier-model',
        'openai',
        '--openai-base-url',
        chat.baseUrl,
        '--sample-ok',
        String(SAMPLE),
        '--model',
        MODEL,
        '--json',
      ],
      { reject: false, env: { WARDEN_LOG_LEVEL: 'error' } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      evaluator: string;
      windows: number;
      modelCalls: number;
      modelFailures: number;
      modelTokens: { total: number };
      modelCostUsd: number;
      decided: { heuristic: number; model: number };
      tiers: Array<{ line: number; tier: string | null; asked: string | null }>;
    };
    expect(out.evaluator).toBe('tiered');
    expect(out.windows).toBe(cases.length);
    expect(out.modelCalls).toBe(asked);
    expect(chat.requests).toHaveLength(asked); // what the server saw
    expect(out.modelFailures).toBe(0);
    expect(out.modelTokens.total).toBe(asked * 110);
    expect(round(out.modelCostUsd)).toBe(round(asked * 0.0015));
    expect(out.tiers.map((w) => w.asked)).toEqual(expected);
    // The model (answering OK every time) decided where it was asked; the heuristic everywhere else.
    expect(out.tiers.map((w) => w.tier)).toEqual(expected.map((x, i) => (nothingToJudge[i] ? null : x ? 'model' : 'heuristic')));
    expect(out.decided.model).toBe(asked);

    // The text form says the same in words.
    const text = await execa(
      'node',
      [
        join(ROOT, 'dist/src/cli/main.js'),
        'evaluate',
        '--cases',
        file,
        '--evaluator',
        'tiered',
        '--tier-model',
        'openai',
        '--openai-base-url',
        chat.baseUrl,
        '--sample-ok',
        String(SAMPLE),
      ],
      { reject: false, env: { WARDEN_LOG_LEVEL: 'error' } },
    );
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(`model calls: ${asked} for ${cases.length} windows`);
    expect(text.stdout).toMatch(new RegExp(`an openai evaluator alone would make ${cases.length} calls`));
  });
});
