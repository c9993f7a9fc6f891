/**
 * A hooked Claude Code session's own spend, read from its transcript at each reported turn
 * (src/hooks/session-spend.ts): only what was appended since the last counted turn, each API
 * message once (also across the boundary), a replaced or shrunk transcript read again safely, a
 * retried turn sent with the same figures; and the Stop hook sending them as the turn's tokens.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { handleHook } from '../../src/hooks/handle.js';
import { sessionSpendAtTurn, spendStateFile } from '../../src/hooks/session-spend.js';
import { recordingHookClient } from '../helpers/own-spend.js';
import { ownGuard } from '../../src/hooks/own-files.js';
import { noPriceWarning } from '../../src/cli/commands/status.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';

const root = mkdtempSync(join(tmpdir(), 'warden-session-spend-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** One transcript entry of an assistant message (Claude Code writes one per content block, each with the message's usage). */
const entry = (id: string, input: number, output: number, more: Record<string, unknown> = {}) =>
  `${JSON.stringify({ type: 'assistant', isSidechain: false, uuid: `u-${id}-${Math.random()}`, message: { id, model: 'claude-test-1', role: 'assistant', usage: { input_tokens: input, output_tokens: output, cache_read_input_tokens: 100 } }, ...more })}\n`;
const user = (t: string) => `${JSON.stringify({ type: 'user', message: { role: 'user', content: t } })}\n`;

let n = 0;
let dir: string;
let transcript: string;
beforeEach(() => {
  dir = join(root, `state-${++n}`);
  transcript = join(root, `session-${n}.jsonl`);
  writeFileSync(transcript, '');
});

const spend = (turn: string, maxBytes?: number) => sessionSpendAtTurn(dir, 'agent-a', transcript, turn, maxBytes);

describe('sessionSpendAtTurn: incremental', () => {
  it('counts only what was appended since the last turn, and keeps its state 0600', async () => {
    appendFileSync(transcript, user('hi') + entry('m1', 10, 5) + entry('m2', 20, 7));
    expect(await spend('t1')).toMatchObject({ tokensIn: 10 + 100 + 20 + 100, tokensOut: 12, costUsd: 0, messages: 2, models: ['claude-test-1'] });
    appendFileSync(transcript, user('more') + entry('m3', 30, 9));
    expect(await spend('t2')).toMatchObject({ tokensIn: 130, tokensOut: 9, messages: 1 });
    expect(await spend('t3')).toMatchObject({ tokensIn: 0, tokensOut: 0, messages: 0 }); // nothing new
    const state = spendStateFile(dir, 'agent-a');
    expect(statSync(state).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ offset: statSync(transcript).size, ino: statSync(transcript).ino });
  });

  it('never reads the counted part again: lines rewritten well before the offset count nothing', async () => {
    appendFileSync(transcript, entry('m1', 10, 5) + user('x'.repeat(400)));
    await spend('t1');
    // The same bytes' length, other usage: were the start read again, this would count.
    const first = readFileSync(transcript, 'utf8');
    writeFileSync(transcript, first.replace('"input_tokens":10,', '"input_tokens":90,').replace('"m1"', '"mX"'));
    appendFileSync(transcript, entry('m2', 1, 1));
    expect(await spend('t2')).toMatchObject({ tokensIn: 101, tokensOut: 1, messages: 1 });
  });

  it('counts a message written as several entries once, also when its entries straddle two turns', async () => {
    appendFileSync(transcript, entry('m1', 10, 5) + entry('m1', 10, 5));
    expect(await spend('t1')).toMatchObject({ tokensIn: 110, tokensOut: 5, messages: 1 });
    appendFileSync(transcript, entry('m1', 10, 5) + entry('m2', 1, 2) + entry('m2', 1, 2));
    expect(await spend('t2')).toMatchObject({ tokensIn: 101, tokensOut: 2, messages: 1 });
  });

  it('leaves a line still being written for the next turn', async () => {
    const line = entry('m1', 10, 5);
    appendFileSync(transcript, entry('m0', 1, 1) + line.slice(0, 40));
    expect(await spend('t1')).toMatchObject({ tokensIn: 101, messages: 1 });
    appendFileSync(transcript, line.slice(40));
    expect(await spend('t2')).toMatchObject({ tokensIn: 110, tokensOut: 5, messages: 1 });
  });

  it('reads at most maxBytes a turn, up to its last whole line, and goes on from there at the next', async () => {
    const a = entry('m1', 10, 5);
    appendFileSync(transcript, a + entry('m2', 20, 5) + entry('m3', 30, 5));
    const first = await spend('t1', a.length + 10);
    expect(first).toMatchObject({ tokensIn: 110, messages: 1, more: true });
    const second = await spend('t2', 1e6);
    expect(second).toMatchObject({ tokensIn: 120 + 130, messages: 2 });
    expect(second.more).toBeUndefined();
  });

  it('skips the side chain of a sub-agent (counted at its own stop)', async () => {
    appendFileSync(transcript, entry('m1', 10, 5, { isSidechain: true }) + entry('m2', 20, 5));
    expect(await spend('t1')).toMatchObject({ tokensIn: 120, messages: 1 });
  });
});

describe("sessionSpendAtTurn: priced from the user's prices", () => {
  it("costs each message at its model's price, and names the models it cannot price", async () => {
    appendFileSync(
      transcript,
      entry('m1', 1_000_000, 1_000_000) + entry('m2', 10, 1, { message: { id: 'm2', model: 'other-1', usage: { input_tokens: 10, output_tokens: 1 } } }),
    );
    const got = await sessionSpendAtTurn(dir, 'agent-a', transcript, 't1', undefined, { 'claude-test-*': { input: 2, output: 10, cacheRead: 1 } });
    // m1: 1M plain input at $2, 100 cache reads at $1, 1M out at $10 (per million).
    expect(got.costUsd).toBeCloseTo(2 + 100 / 1e6 + 10, 9);
    expect(got.unpriced).toEqual(['other-1']);
  });
});

describe('sessionSpendAtTurn: a replaced or shrunk transcript, a retried turn', () => {
  it('reads a shrunk transcript again from its start, counting no remembered message twice', async () => {
    appendFileSync(transcript, entry('m1', 10, 5) + entry('m2', 20, 5));
    await spend('t1');
    truncateSync(transcript, 0);
    appendFileSync(transcript, entry('m2', 20, 5) + entry('m9', 40, 1));
    expect(await spend('t2')).toMatchObject({ tokensIn: 140, tokensOut: 1, messages: 1, restarted: true });
  });

  it('reads a transcript rewritten in place (the same inode and size, other bytes before the offset) again from its start', async () => {
    appendFileSync(transcript, entry('m1', 10, 5));
    await spend('t1');
    writeFileSync(transcript, readFileSync(transcript, 'utf8').replace('"m1"', '"k1"'));
    expect(await spend('t2')).toMatchObject({ tokensIn: 110, tokensOut: 5, messages: 1, restarted: true });
  });

  it('reads a replaced transcript (another inode, even a longer one) from its start', async () => {
    appendFileSync(transcript, entry('m1', 10, 5));
    await spend('t1');
    const other = `${transcript}.new.jsonl`;
    writeFileSync(other, entry('m1', 10, 5) + entry('n1', 50, 5) + entry('n2', 60, 5));
    renameSync(other, transcript);
    expect(await spend('t2')).toMatchObject({ tokensIn: 150 + 160, messages: 2, restarted: true });
  });

  it('a transcript replaced by a copy of a long history and one new message counts only the new one', async () => {
    const history = Array.from({ length: 100 }, (_, i) => entry(`h${i}`, 1, 1)).join('');
    appendFileSync(transcript, history);
    expect(await spend('t1')).toMatchObject({ messages: 100 });
    const other = `${transcript}.copy.jsonl`;
    writeFileSync(other, user('resumed') + history + entry('n1', 50, 5));
    renameSync(other, transcript);
    expect(await spend('t2')).toMatchObject({ tokensIn: 150, tokensOut: 5, messages: 1, restarted: true });
  });

  it('a retried turn (the same id) sends the same figures again, whatever was appended since', async () => {
    appendFileSync(transcript, entry('m1', 10, 5));
    const first = await spend('t1');
    appendFileSync(transcript, entry('m2', 20, 5));
    expect(await spend('t1')).toMatchObject({ tokensIn: first.tokensIn, tokensOut: first.tokensOut, resent: true });
    // The next turn counts what the retry did not.
    expect(await spend('t2')).toMatchObject({ tokensIn: 120, messages: 1 });
  });

  it('starts over from a state file that is not what warden writes', async () => {
    appendFileSync(transcript, entry('m1', 10, 5));
    await spend('t1');
    writeFileSync(spendStateFile(dir, 'agent-a'), '{"v":1,"offset":"x"}');
    expect(await spend('t2')).toMatchObject({ tokensIn: 110, messages: 1 });
  });
});

describe('sessionSpendAtTurn: refuses what is not a transcript', () => {
  it('an agent id that is not a plain id never becomes a path', async () => {
    appendFileSync(transcript, entry('m1', 10, 5));
    await expect(sessionSpendAtTurn(dir, '../escape', transcript, 't')).rejects.toThrow(/is not a valid agent id/);
    expect(() => spendStateFile(dir, 'a/b')).toThrow(/is not a valid agent id/);
  });

  it('a relative path, another extension, a symbolic link, a FIFO', async () => {
    await expect(sessionSpendAtTurn(dir, 'a', 'rel/x.jsonl', 't')).rejects.toThrow(/not an absolute path/);
    const txt = join(root, 'x.txt');
    writeFileSync(txt, entry('m1', 1, 1));
    await expect(sessionSpendAtTurn(dir, 'a', txt, 't')).rejects.toThrow(/\.jsonl/);
    const link = join(root, 'link.jsonl');
    symlinkSync(transcript, link);
    await expect(sessionSpendAtTurn(dir, 'a', link, 't')).rejects.toThrow(/symbolic link/);
    const fifo = join(root, 'fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    await expect(sessionSpendAtTurn(dir, 'a', fifo, 't')).rejects.toThrow(/not a regular file/);
  });
});

describe("the Stop hook sends the session's own spend as the turn's tokens", () => {
  const client = recordingHookClient;
  const own = () => ({ guard: () => ownGuard(), cwd: root, spendDir: dir });

  it('two turns: each carries what its model calls spent since the one before; a re-sent stop the same figures', async () => {
    const c = client();
    const warned: string[] = [];
    const stop = { hook_event_name: 'Stop', session_id: 's1', transcript_path: transcript, last_assistant_message: 'done' };
    appendFileSync(transcript, user('go') + entry('m1', 1000, 50) + entry('m1', 1000, 50));
    await handleHook('claude', stop, 'hooked', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    await handleHook('claude', stop, 'hooked', c.client, (l) => warned.push(l), Date.now() + 1000, own()); // a retry
    appendFileSync(transcript, user('again') + entry('m2', 2000, 70));
    await handleHook('claude', { ...stop, last_assistant_message: 'done again' }, 'hooked', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    expect(c.turns.map((t) => [t.tokensIn, t.tokensOut, t.costUsd])).toEqual([
      [1100, 50, 0],
      [1100, 50, 0],
      [2100, 70, 0],
    ]);
    expect(c.turns[0]!.id).toBe(c.turns[1]!.id);
    expect(warned).toEqual([]);
  });

  it('with a cost budget and no cost in the transcript: says once that the cost budget cannot be enforced', async () => {
    const c = client({ budgets: { costUsd: { used: 0, limit: 5 } } });
    const warned: string[] = [];
    appendFileSync(transcript, entry('m1', 10, 5));
    const stop = { hook_event_name: 'Stop', session_id: 's2', transcript_path: transcript, last_assistant_message: 'one' };
    await handleHook('claude', stop, 'priced', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    appendFileSync(transcript, entry('m2', 10, 5));
    await handleHook('claude', { ...stop, last_assistant_message: 'two' }, 'priced', c.client, (l) => warned.push(l), Date.now() + 1000, own());
    expect(warned).toEqual([expect.stringContaining('cost budget cannot be enforced: no price for model claude-test-1')]);
  });

  it('a transcript it does not read: the turn goes without tokens, the reason on stderr', async () => {
    const c = client();
    const warned: string[] = [];
    await handleHook(
      'claude',
      { hook_event_name: 'Stop', session_id: 's3', transcript_path: 'relative.jsonl', last_assistant_message: 'x' },
      'r',
      c.client,
      (l) => warned.push(l),
      Date.now() + 1000,
      own(),
    );
    expect(c.turns[0]).not.toHaveProperty('tokensIn');
    expect(warned).toEqual([expect.stringContaining("this turn's tokens are not counted: transcript_path is not an absolute path")]);
  });
});

describe('warden status says when a cost budget cannot be enforced', () => {
  const st = (over: Partial<AgentStatus>) =>
    ({
      driver: null,
      model: null,
      budgets: { tokens: { used: 500, limit: null }, costUsd: { used: 0, limit: 2 }, turns: { used: 1, limit: null }, wallClockMs: { used: 1, limit: null } },
      ...over,
    }) as AgentStatus;
  it('a hooked agent with a cost budget, tokens and no cost: one warning line', () => {
    expect(noPriceWarning(st({}))).toBe(
      "cost budget cannot be enforced: no price for this session's model (its CLI reports no cost: give the model's price under prices: in your own warden.yaml); the token budget is counted",
    );
    expect(noPriceWarning(st({ model: 'claude-x' }))).toMatch(/^cost budget cannot be enforced: no price for model claude-x /);
  });
  it('nothing when it has no cost budget, a cost, no tokens yet, or a driver', () => {
    const b = st({}).budgets;
    expect(noPriceWarning(st({ budgets: { ...b, costUsd: { used: 0, limit: null } } }))).toBeNull();
    expect(noPriceWarning(st({ budgets: { ...b, costUsd: { used: 0.5, limit: 2 } } }))).toBeNull();
    expect(noPriceWarning(st({ budgets: { ...b, tokens: { used: 0, limit: null } } }))).toBeNull();
    expect(noPriceWarning(st({ driver: 'claude' }))).toBeNull();
  });
});
