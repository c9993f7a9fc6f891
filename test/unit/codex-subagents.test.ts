import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  MAX_CARRIED_SUBAGENTS,
  SUBAGENT_TOTALS_KEY,
  carriedSubagentTotals,
  carryForm,
  collabThreadIds,
  countSubagents,
  subagentGrowth,
} from '../../activities/drivers/codex-subagents.js';
import { CodexTurnEvents } from '../../activities/drivers/codex.js';

const A = '01a224af-e09c-7c00-a4e0-3cc788873e3e';
const B = '01a224af-e09c-7c00-a4e0-3cc788873e3f';
const OWN = '01a224af-dff1-7273-90b8-2be595af8d19';

const scratch = mkdtempSync(join(tmpdir(), 'warden-codex-subs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const tokenCount = (input: number, output: number) =>
  JSON.stringify({
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: { total_token_usage: { input_tokens: input, cached_input_tokens: 0, output_tokens: output, total_tokens: input + output } },
    },
  });

/** A CODEX_HOME whose sessions folder holds a rollout for each thread, with these running totals. */
function home(name: string, rollouts: Record<string, Array<[number, number]>>): string {
  const h = join(scratch, name);
  const day = join(h, 'sessions', '2026', '11', '29');
  mkdirSync(day, { recursive: true });
  for (const [id, totals] of Object.entries(rollouts))
    writeFileSync(join(day, `rollout-2026-11-29T00-23-55-${id}.jsonl`), `${totals.map(([i, o]) => tokenCount(i, o)).join('\n')}\n`);
  return h;
}

describe('the sub-agents a turn names', () => {
  test('collab_tool_call items name their threads; other items and malformed ids do not', () => {
    expect(collabThreadIds({ receiver_thread_ids: [A, 'not-an-id', 3], agents_states: { [B]: {}, '../x': {} } })).toEqual([A, B]);
    const ev = new CodexTurnEvents();
    ev.push(JSON.stringify({ type: 'thread.started', thread_id: OWN }));
    ev.push(
      JSON.stringify({
        type: 'item.completed',
        item: { id: 'i1', type: 'collab_tool_call', tool: 'spawn_agent', receiver_thread_ids: [A], agents_states: {} },
      }),
    );
    ev.push(JSON.stringify({ type: 'item.completed', item: { id: 'i2', type: 'agent_message', text: `spawned ${B}`, receiver_thread_ids: [B] } }));
    expect([...ev.subagentIds]).toEqual([A]);
    // Still shown as a tool call of its kind.
    expect(ev.toolCalls().map((c) => c.name)).toEqual(['collab_tool_call']);
  });
});

describe('what is carried between turns', () => {
  test('round trip; junk dropped; only the newest are kept', () => {
    const m = new Map([[A, { input: 7000, output: 70 }]]);
    expect(carriedSubagentTotals({ [SUBAGENT_TOTALS_KEY]: carryForm(m) })).toEqual(m);
    expect(carriedSubagentTotals(null).size).toBe(0);
    expect(carriedSubagentTotals({ [SUBAGENT_TOTALS_KEY]: 'nope' }).size).toBe(0);
    expect(carriedSubagentTotals({ [SUBAGENT_TOTALS_KEY]: JSON.stringify({ [A]: { i: -1, o: 2 }, x: { i: 1, o: 1 }, [B]: { i: 1, o: 2 } }) })).toEqual(
      new Map([[B, { input: 1, output: 2 }]]),
    );
    const many = new Map(
      Array.from({ length: MAX_CARRIED_SUBAGENTS + 5 }, (_, n) => [`00000000-0000-0000-0000-${String(n).padStart(12, '0')}`, { input: n, output: 0 }]),
    );
    const kept = carriedSubagentTotals({ [SUBAGENT_TOTALS_KEY]: carryForm(many) });
    expect(kept.size).toBe(MAX_CARRIED_SUBAGENTS);
    expect(kept.has('00000000-0000-0000-0000-000000000000')).toBe(false);
  });

  test('growth past what was counted; a total that went down counts whole', () => {
    expect(subagentGrowth(undefined, { input: 7000, output: 70 })).toEqual({ input: 7000, output: 70 });
    expect(subagentGrowth({ input: 7000, output: 70 }, { input: 7100, output: 71 })).toEqual({ input: 100, output: 1 });
    expect(subagentGrowth({ input: 7000, output: 70 }, { input: 7000, output: 70 })).toEqual({ input: 0, output: 0 });
    expect(subagentGrowth({ input: 7000, output: 70 }, { input: 50, output: 80 })).toEqual({ input: 50, output: 80 });
  });
});

describe('counting the sub-agents from their rollouts', () => {
  test("each rollout's last running totals, past what was counted; the session's own thread and unknown threads left out", async () => {
    const h = home('count', {
      [A]: [
        [7000, 70],
        [7100, 71],
      ],
      [B]: [[5, 1]],
      [OWN]: [[1800, 235]],
    });
    const first = await countSubagents(h, [A, OWN, '01a224af-0000-7000-8000-000000000000'], OWN, new Map());
    expect(first).toMatchObject({ tokensIn: 7100, tokensOut: 71, counted: [{ id: A, tokensIn: 7100, tokensOut: 71 }] });
    const again = await countSubagents(h, [A, B], OWN, first.totals);
    expect(again).toMatchObject({
      tokensIn: 5,
      tokensOut: 1,
      counted: [
        { id: A, tokensIn: 0, tokensOut: 0 },
        { id: B, tokensIn: 5, tokensOut: 1 },
      ],
    });
    expect([...again.totals.keys()]).toEqual([A, B]);
  });

  test('a rollout that is a symbolic link, or leads out of the sessions folder, counts nothing', async () => {
    const outside = join(scratch, 'outside');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, `rollout-x-${A}.jsonl`), `${tokenCount(9e6, 9e6)}\n`);
    const h = home('links', {});
    symlinkSync(join(outside, `rollout-x-${A}.jsonl`), join(h, 'sessions', '2026', '11', '29', `rollout-x-${A}.jsonl`));
    mkdirSync(join(h, 'sessions', '2027'));
    symlinkSync(outside, join(h, 'sessions', '2027', '01'));
    writeFileSync(join(outside, `rollout-y-${B}.jsonl`), `${tokenCount(9e6, 9e6)}\n`);
    const warned: unknown[] = [];
    const log = { warn: (o: unknown) => void warned.push(o), debug: () => {} } as never;
    const r = await countSubagents(h, [A, B], OWN, new Map(), log);
    expect(r).toMatchObject({ tokensIn: 0, tokensOut: 0, counted: [] });
    expect(r.totals.size).toBe(0);
    // A's link is refused; B's rollout is not found at all (readdir does not follow the linked folder) or refused.
    expect(JSON.stringify(warned)).toContain('symbolic link');
  });
});
