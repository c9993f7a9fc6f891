/**
 * A hooked Codex session's own spend from its rollout (codex-spend.ts): the growth of the
 * cumulative `token_count` totals since the last counted turn, read incrementally
 * (transcript-increment.ts), and the Stop hook sending it as the turn's tokens.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { codexCost, codexGrowth, codexSpendAtTurn, codexTotals } from '../../src/hooks/codex-spend.js';
import { handleHook } from '../../src/hooks/handle.js';
import { spendStateFile } from '../../src/hooks/transcript-increment.js';
import { codexSessionsRoot, readCodexSubagentSpend } from '../../src/hooks/subagent-spend.js';
import { ownGuard } from '../../src/hooks/own-files.js';
import { recordingHookClient } from '../helpers/own-spend.js';

const root = mkdtempSync(join(tmpdir(), 'warden-codex-spend-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A `token_count` entry as codex 0.169 writes it: the thread's cumulative totals, and the last response's. */
const tokenCount = (input: number, output: number, cached = 0, last = { input: 0, output: 0 }) =>
  `${JSON.stringify({
    timestamp: '2026-11-28T21:26:40.485Z',
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: {
        total_token_usage: {
          input_tokens: input,
          cached_input_tokens: cached,
          cache_write_input_tokens: 0,
          output_tokens: output,
          reasoning_output_tokens: 0,
          total_tokens: input + output,
        },
        last_token_usage: {
          input_tokens: last.input,
          cached_input_tokens: 0,
          output_tokens: last.output,
          reasoning_output_tokens: 0,
          total_tokens: last.input + last.output,
        },
        model_context_window: 258400,
      },
      rate_limits: { limit_id: 'codex', primary: null },
    },
  })}\n`;
/** A rate-limits-only `token_count` (no totals), and other rollout entries. */
const rateLimitsOnly = `${JSON.stringify({ type: 'event_msg', payload: { type: 'token_count', info: null, rate_limits: {} } })}\n`;
const item = (t: string) =>
  `${JSON.stringify({ type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: t }] } })}\n`;

describe('codexTotals / codexGrowth: cumulative totals into what a turn spent', () => {
  it("reads each token_count's total_token_usage in order, skipping others, null info and broken lines", () => {
    const lines = (
      item('hi') +
      tokenCount(1000, 200, 400) +
      rateLimitsOnly +
      '{"type":"event_msg","payload":{"type":"token_count"' +
      '\n' +
      tokenCount(2500, 500)
    ).split('\n');
    expect(codexTotals(lines)).toEqual([
      { input: 1000, output: 200, cached: 400 },
      { input: 2500, output: 500, cached: 0 },
    ]);
    expect(
      codexTotals([
        JSON.stringify({ type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { input_tokens: -1, output_tokens: 2 } } } }),
      ]),
    ).toEqual([]);
  });

  it('spends the growth past the baseline; a total that goes down is a new count, never negative', () => {
    expect(
      codexGrowth({ input: 0, output: 0, cached: 0 }, [
        { input: 1000, output: 200, cached: 0 },
        { input: 2500, output: 500, cached: 900 },
      ]),
    ).toEqual({
      tokensIn: 2500,
      tokensOut: 500,
      cachedIn: 900,
      last: { input: 2500, output: 500, cached: 900 },
    });
    expect(codexGrowth({ input: 2500, output: 500, cached: 0 }, [{ input: 4500, output: 600, cached: 0 }])).toMatchObject({ tokensIn: 2000, tokensOut: 100 });
    // A new rollout's count: 300 after 4500 counts its 300, then grows from there.
    expect(
      codexGrowth({ input: 4500, output: 600, cached: 0 }, [
        { input: 300, output: 10, cached: 0 },
        { input: 700, output: 30, cached: 0 },
      ]),
    ).toEqual({
      tokensIn: 700,
      tokensOut: 30,
      cachedIn: 0,
      last: { input: 700, output: 30, cached: 0 },
    });
    // Only one of the two going down is a new count too.
    expect(codexGrowth({ input: 100, output: 50, cached: 0 }, [{ input: 200, output: 5, cached: 0 }])).toMatchObject({ tokensIn: 200, tokensOut: 5 });
    expect(codexGrowth({ input: 100, output: 50, cached: 0 }, [])).toEqual({
      tokensIn: 0,
      tokensOut: 0,
      cachedIn: 0,
      last: { input: 100, output: 50, cached: 0 },
    });
  });

  it("costs the growth at the user's price for the model, cached input at the cache-read price; names a model without one", () => {
    const prices = { 'gpt-test-*': { input: 2, output: 8, cacheRead: 0.5 } };
    // 1M in of which 400k cached, 100k out: 600k × $2 + 400k × $0.5 + 100k × $8 per million.
    expect(codexCost({ tokensIn: 1_000_000, tokensOut: 100_000, cachedIn: 400_000 }, 'gpt-test-1', prices).costUsd).toBeCloseTo(1.2 + 0.2 + 0.8, 9);
    expect(codexCost({ tokensIn: 10, tokensOut: 1, cachedIn: 0 }, 'other', prices)).toEqual({ costUsd: 0, unpriced: ['other'] });
    expect(codexCost({ tokensIn: 10, tokensOut: 1, cachedIn: 0 }, undefined, prices)).toEqual({ costUsd: 0, unpriced: ['unknown'] });
    expect(codexCost({ tokensIn: 0, tokensOut: 0, cachedIn: 0 }, 'other', prices)).toEqual({ costUsd: 0, unpriced: [] });
  });
});

let n = 0;
let dir: string;
let rollout: string;
beforeEach(() => {
  dir = join(root, `state-${++n}`);
  rollout = join(root, `rollout-${n}.jsonl`);
  writeFileSync(rollout, '');
});
const spend = (turn: string, maxBytes?: number) => codexSpendAtTurn(dir, 'agent-x', rollout, turn, maxBytes);

describe('codexSpendAtTurn: a rollout read turn by turn', () => {
  it('each turn spends the growth of the totals since the last counted one; nothing new spends nothing; state 0600', async () => {
    appendFileSync(rollout, item('a') + tokenCount(1000, 200) + tokenCount(2500, 500, 900));
    expect(await spend('t1')).toMatchObject({ tokensIn: 2500, tokensOut: 500, costUsd: 0, messages: 2 });
    appendFileSync(rollout, item('b') + tokenCount(4500, 600));
    expect(await spend('t2')).toMatchObject({ tokensIn: 2000, tokensOut: 100, messages: 1 });
    expect(await spend('t3')).toMatchObject({ tokensIn: 0, tokensOut: 0, messages: 0 });
    const state = spendStateFile(dir, 'agent-x');
    expect(statSync(state).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({
      offset: statSync(rollout).size,
      carry: { totals: { input: 4500, output: 600, cached: 0 } },
    });
  });

  it('leaves a line still being written for the next turn', async () => {
    const line = tokenCount(3000, 300);
    appendFileSync(rollout, tokenCount(1000, 100) + line.slice(0, 50));
    expect(await spend('t1')).toMatchObject({ tokensIn: 1000, tokensOut: 100 });
    appendFileSync(rollout, line.slice(50));
    expect(await spend('t2')).toMatchObject({ tokensIn: 2000, tokensOut: 200 });
  });

  it('reads at most maxBytes a turn and goes on from there at the next, counting each growth once', async () => {
    const a = tokenCount(1000, 100);
    appendFileSync(rollout, a + tokenCount(2000, 200) + tokenCount(3000, 300));
    expect(await spend('t1', a.length + 10)).toMatchObject({ tokensIn: 1000, tokensOut: 100, more: true });
    expect(await spend('t2')).toMatchObject({ tokensIn: 2000, tokensOut: 200 });
  });

  it('a replaced rollout (another file) counts from its start, also when its totals are higher', async () => {
    appendFileSync(rollout, tokenCount(5000, 500));
    await spend('t1');
    const other = `${rollout}.new.jsonl`;
    writeFileSync(other, tokenCount(300, 30) + tokenCount(6000, 60));
    renameSync(other, rollout);
    expect(await spend('t2')).toMatchObject({ tokensIn: 6000, tokensOut: 60, restarted: true });
  });

  it('the same rollout rewritten (truncated, then appended to) counts past what was counted; lower totals count from them', async () => {
    appendFileSync(rollout, tokenCount(5000, 500));
    await spend('t1');
    truncateSync(rollout, 0);
    appendFileSync(rollout, tokenCount(7000, 700));
    expect(await spend('t2')).toMatchObject({ tokensIn: 2000, tokensOut: 200, restarted: true });
    truncateSync(rollout, 0);
    appendFileSync(rollout, tokenCount(100, 10));
    expect(await spend('t3')).toMatchObject({ tokensIn: 100, tokensOut: 10, restarted: true });
  });

  it('a retried turn (the same id) sends the same figures again, whatever was appended since', async () => {
    appendFileSync(rollout, tokenCount(1000, 100));
    await spend('t1');
    appendFileSync(rollout, tokenCount(1500, 150));
    expect(await spend('t1')).toMatchObject({ tokensIn: 1000, tokensOut: 100, resent: true });
    expect(await spend('t2')).toMatchObject({ tokensIn: 500, tokensOut: 50 });
  });

  it("starts over from a state file that is not what warden writes (another CLI's too)", async () => {
    appendFileSync(rollout, tokenCount(1000, 100));
    await spend('t1');
    const file = spendStateFile(dir, 'agent-x');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...state, carry: { ids: ['m1'] } }));
    appendFileSync(rollout, tokenCount(1200, 120));
    expect(await spend('t2')).toMatchObject({ tokensIn: 1200, tokensOut: 120 });
  });

  it('refuses what is not a rollout it reads', async () => {
    await expect(codexSpendAtTurn(dir, 'a', 'rel/rollout.jsonl', 't')).rejects.toThrow(/not an absolute path/);
    await expect(codexSpendAtTurn(dir, 'a', `${root}/x/../r.jsonl`, 't')).rejects.toThrow(/\.\. segment/);
  });
});

describe("the Codex Stop hook sends the session's own spend as the turn's tokens", () => {
  const client = recordingHookClient;
  const own = () => ({ guard: () => ownGuard(), cwd: root, spendDir: dir });
  const stop = (over: Record<string, unknown> = {}) => ({
    hook_event_name: 'Stop',
    session_id: 'thread-1',
    turn_id: 'turn-1',
    transcript_path: rollout,
    model: 'gpt-test-1',
    stop_hook_active: false,
    last_assistant_message: 'done',
    ...over,
  });

  it('two turns each carry their growth; a retried stop (the same turn id) the same figures', async () => {
    const c = client();
    const warned: string[] = [];
    appendFileSync(rollout, tokenCount(1000, 200) + tokenCount(2500, 500));
    await handleHook('codex', stop(), 'cx', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    appendFileSync(rollout, tokenCount(2600, 510)); // written after the first report: a retry must not see it
    await handleHook('codex', stop(), 'cx', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    appendFileSync(rollout, tokenCount(4500, 600));
    await handleHook('codex', stop({ turn_id: 'turn-2', last_assistant_message: 'again' }), 'cx', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    expect(c.turns.map((t) => [t.tokensIn, t.tokensOut, t.costUsd])).toEqual([
      [2500, 500, 0],
      [2500, 500, 0],
      [2000, 100, 0],
    ]);
    expect(c.turns[0]!.id).toBe(c.turns[1]!.id);
    expect(warned).toEqual([]);
  });

  it('with a cost budget: says once that it cannot be enforced, naming the model of the hook input', async () => {
    const c = client({ budgets: { costUsd: { used: 0, limit: 5 } } });
    const warned: string[] = [];
    appendFileSync(rollout, tokenCount(10, 5));
    await handleHook('codex', stop(), 'cx-priced', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    appendFileSync(rollout, tokenCount(20, 9));
    await handleHook('codex', stop({ turn_id: 'turn-2' }), 'cx-priced', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    expect(warned).toEqual([
      "agent cx-priced: cost budget cannot be enforced: no price for model gpt-test-1 (Codex writes no cost per model call; give the model's price under prices: in your own warden.yaml); its token budget is counted",
    ]);
  });

  it("with the model's price in the user's prices: each turn carries its cost, and nothing is said", async () => {
    const c = client({ budgets: { costUsd: { used: 0, limit: 5 } } });
    const warned: string[] = [];
    appendFileSync(rollout, tokenCount(1_000_000, 100_000, 400_000));
    await handleHook('codex', stop(), 'cx-paid', c.client, (l) => warned.push(l), Date.now() + 1000, {
      ...own(),
      prices: () => ({ 'gpt-test-1': { input: 2, output: 8, cacheRead: 0.5 } }),
    });
    expect(c.turns[0]!.costUsd).toBeCloseTo(2.2, 9);
    expect(warned).toEqual([]);
  });

  it('a rollout it does not read: the turn goes without tokens, the reason on stderr', async () => {
    const c = client();
    const warned: string[] = [];
    await handleHook('codex', stop({ transcript_path: join(root, 'rollout.txt') }), 'cx-r', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    expect(c.turns[0]).not.toHaveProperty('tokensIn');
    expect(warned).toEqual([expect.stringContaining("this turn's tokens are not counted: transcript_path does not name a .jsonl transcript")]);
  });
});

describe("a Codex sub-agent's spend: its own rollout's last totals (SubagentStop)", () => {
  const sessions = join(root, 'codex-home', 'sessions');
  const rolloutIn = (day: string, name: string, body: string) => {
    const d = join(sessions, '2026', '11', day);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, name), body);
    return join(d, name);
  };
  const parent = rolloutIn('28', 'rollout-2026-11-28T23-59-00-parent.jsonl', tokenCount(100, 10));

  it("Codex's sessions folder is the root of a dated rollout's; any other layout, its own folder", () => {
    expect(codexSessionsRoot(parent)).toBe(sessions);
    expect(codexSessionsRoot('/x/y/rollout-a.jsonl')).toBe('/x/y');
    expect(codexSessionsRoot('/x/notsessions/2026/11/28/rollout-a.jsonl')).toBe('/x/notsessions/2026/11/28');
  });

  it('the last cumulative totals, also in a rollout of another day; given more work, larger totals', async () => {
    const sub = rolloutIn('29', 'rollout-2026-11-29T00-00-01-sub.jsonl', item('x') + tokenCount(7000, 70) + rateLimitsOnly);
    expect(await readCodexSubagentSpend(sub, parent)).toEqual({ tokensIn: 7000, tokensOut: 70, costUsd: 0, messages: 1 });
    appendFileSync(sub, tokenCount(7100, 71) + item('y'));
    expect(await readCodexSubagentSpend(sub, parent)).toEqual({ tokensIn: 7100, tokensOut: 71, costUsd: 0, messages: 2 });
  });

  it('reads only the tail: the totals there are the whole; a tail with none counts nothing, marked partial', async () => {
    const sub = rolloutIn('28', 'rollout-tail.jsonl', tokenCount(1, 1) + item('x'.repeat(5000)) + tokenCount(900, 90) + item('y'));
    expect(await readCodexSubagentSpend(sub, parent, 1000)).toMatchObject({ tokensIn: 900, tokensOut: 90 });
    const long = rolloutIn('28', 'rollout-long.jsonl', tokenCount(1, 1) + item('x'.repeat(5000)));
    expect(await readCodexSubagentSpend(long, parent, 1000)).toEqual({ tokensIn: 0, tokensOut: 0, costUsd: 0, messages: 0, partial: true });
  });

  it("refuses a rollout outside the session's sessions folder, a symbolic link, a relative path", async () => {
    const elsewhere = join(root, 'elsewhere.jsonl');
    writeFileSync(elsewhere, tokenCount(5, 5));
    await expect(readCodexSubagentSpend(elsewhere, parent)).rejects.toThrow(/not inside the session's Codex sessions folder/);
    const link = join(sessions, '2026', '11', '28', 'rollout-link.jsonl');
    symlinkSync(elsewhere, link);
    await expect(readCodexSubagentSpend(link, parent)).rejects.toThrow(/symbolic link/);
    await expect(readCodexSubagentSpend('rollout.jsonl', parent)).rejects.toThrow(/not an absolute path/);
    await expect(readCodexSubagentSpend(elsewhere, undefined)).rejects.toThrow(/transcript_path/);
  });

  it('the hook signals the sub-agent at its start and stop, the stop with its totals', async () => {
    const sub = rolloutIn('28', 'rollout-sub-hook.jsonl', tokenCount(300, 30));
    const signals: Array<[string, unknown]> = [];
    const c = recordingHookClient();
    const cl = await c.client();
    (cl as { signal: unknown }).signal = async (_a: string, name: string, p: unknown) => void signals.push([name, p]);
    const base = { session_id: 'thread-1', turn_id: 'sub-turn', transcript_path: parent, agent_id: 'sub-1', agent_type: 'default' };
    const warned: string[] = [];
    await handleHook('codex', { ...base, hook_event_name: 'SubagentStart', transcript_path: sub }, 'cx-sub', c.client, (l) => warned.push(l));
    await handleHook(
      'codex',
      { ...base, hook_event_name: 'SubagentStop', agent_transcript_path: sub, last_assistant_message: 'sub done' },
      'cx-sub',
      c.client,
      (l) => warned.push(l),
    );
    expect(signals).toEqual([
      ['subagent', { phase: 'start', id: 'sub-1', type: 'default' }],
      ['subagent', { phase: 'stop', id: 'sub-1', type: 'default', spend: { tokensIn: 300, tokensOut: 30, costUsd: 0 } }],
    ]);
    expect(warned).toEqual([]);
  });
});
