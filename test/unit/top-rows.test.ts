import { describe, expect, test } from 'vitest';
import {
  arrange,
  badge,
  buildRow,
  DEFAULT_SORT,
  filterRows,
  fleetTotals,
  formatFleetTotals,
  formatRate,
  fuzzyScore,
  hideFinished,
  intentFromSummary,
  parseTopStatus,
  roster,
  rowJson,
  type RosterEntry,
  type Row,
  type TopStatus,
} from '../../src/roster/rows.js';
import { cells, fitMiddle, layoutColumns, longestId, renderText } from '../../src/cli/top/table.js';
import { iso, opts, rosterEntry as entry } from '../helpers/top.js';
import { buildMeshRow } from '../../src/roster/meshes.js';

function status(agentId: string, over: Record<string, unknown> = {}): TopStatus {
  return parseTopStatus({
    agentId,
    state: 'running',
    stateReason: null,
    paused: false,
    escalationStep: 0,
    escalationThreshold: 3,
    turns: 3,
    lastVerdict: null,
    pendingWhispers: 0,
    tokens: { in: 100, out: 10, total: 110 },
    costUsd: 0.01,
    lastTurnAt: iso(5_000),
    lastHeartbeatAt: null,
    turnRunning: false,
    refused: [],
    budgets: {},
    parent: null,
    children: [],
    ...over,
  });
}

const row = (id: string, e: Partial<RosterEntry> = {}, st: Record<string, unknown> | null = {}, intent: string | null = null) =>
  buildRow(entry(id, e), st === null ? null : status(id, { state: e.state ?? 'running', ...st }), intent, opts);

/** Spend buckets: `values` per minute, the last one in the current minute. */
function spend(values: number[], key: 'costUsd' | 'tokens' = 'costUsd') {
  return {
    bucketMs: 60_000,
    buckets: values.map((v, i) => ({ at: iso((values.length - 1 - i) * 60_000), tokens: key === 'tokens' ? v : 0, costUsd: key === 'costUsd' ? v : 0 })),
  };
}

describe('priority classes (seed 002 order)', () => {
  test('awaiting input, runaway, flagged, stuck, normal, finished — in that order', () => {
    const rows = [
      row('done1', { status: 'COMPLETED', state: 'done', closeTime: iso(1000) }, null),
      row('normal1'),
      row('stuck1', {}, { lastTurnAt: iso(10 * 60_000) }),
      row('flagged1', {}, { lastVerdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'same build again', at: iso(1000) } }),
      row('runaway1', {}, { spend: spend([...new Array(50).fill(0.01), 0.5, 0.6, 0.7]) }),
      row('waiting1', { state: 'awaiting-input' }, { stateReason: 'escalated: SPIRALING' }),
    ];
    expect(rows.map((r) => r.priority)).toEqual(['finished', 'normal', 'stuck', 'flagged', 'runaway', 'awaiting-input']);
    expect(arrange(rows).map((r) => r.agentId)).toEqual(['waiting1', 'runaway1', 'flagged1', 'stuck1', 'normal1', 'done1']);
  });

  test('blocked sorts after the conditions that need a human and before working agents, with its reason', () => {
    const rows = [
      row('normal1'),
      row('blocked1', { state: 'blocked' }, { stateReason: 'model rate-limited (429); retrying at 09:01:05 UTC (attempt 1)' }),
      row('stuck1', {}, { lastTurnAt: iso(10 * 60_000) }),
      row('blocked2', { state: 'blocked' }, null),
    ];
    expect(rows.map((r) => r.priority)).toEqual(['normal', 'blocked', 'stuck', 'blocked']);
    expect(rows[1]!.why).toBe('blocked: model rate-limited (429); retrying at 09:01:05 UTC (attempt 1)');
    expect(rows[3]!.why).toBe('blocked: waiting on the system');
    expect(arrange(rows).map((r) => r.agentId)).toEqual(['stuck1', 'blocked1', 'blocked2', 'normal1']);
    expect(badge('blocked').text).toBe('⧗ blocked');
  });

  test('a parent waiting on its children for ten silent minutes is blocked with their names, not stuck', () => {
    const rows = [
      row('stuck1', {}, { lastTurnAt: iso(10 * 60_000) }),
      row('boss', { state: 'blocked' }, { lastTurnAt: iso(10 * 60_000), stateReason: 'waiting on 2 delegated children: a, b' }),
      row('normal1'),
    ];
    expect(rows.map((r) => r.priority)).toEqual(['stuck', 'blocked', 'normal']);
    expect(rows[1]!.why).toBe('blocked: waiting on 2 delegated children: a, b');
    expect(arrange(rows).map((r) => r.agentId)).toEqual(['stuck1', 'boss', 'normal1']);
  });

  test("compacting says so: warden's last resort is flagged with its reason; the agent's own compaction is normal", () => {
    const verdict = { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'same build again', at: iso(1000) };
    const rows = [
      row(
        'ladder1',
        { state: 'compacting' },
        { lastVerdict: verdict, stateReason: 'compacting (last resort before escalation): SPIRALING — same build again' },
      ),
      row('own1', { state: 'compacting' }, { stateReason: "the agent's own CLI is compacting its context (auto)" }),
      row('own2', { state: 'compacting' }, null),
    ];
    expect(rows.map((r) => r.priority)).toEqual(['flagged', 'normal', 'normal']);
    expect(rows.map((r) => r.why)).toEqual([
      'compacting (last resort before escalation): SPIRALING — same build again',
      "the agent's own CLI is compacting its context (auto)",
      'compacting its context',
    ]);
    expect(badge('compacting').text).toBe('⇣ compacting');
  });

  test('orphaned is stuck; a running turn is not idle; a steady heavy spender is not a runaway', () => {
    expect(row('o', { state: 'orphaned' }).priority).toBe('stuck');
    expect(row('busy', {}, { lastTurnAt: iso(3_600_000), turnRunning: true }).priority).toBe('normal');
    expect(row('steady', {}, { spend: spend(new Array(60).fill(0.4)) }).priority).toBe('normal');
    // Below the floor, a jump from nothing is noise.
    expect(row('tiny', {}, { spend: spend([0, 0, 0.001, 0.002]) }).priority).toBe('normal');
  });

  test('an OK verdict is not a flag; an unqueried row with a climbing ladder is', () => {
    expect(row('ok', {}, { lastVerdict: { kind: 'OK', pattern: null, message: '', at: iso(1) } }).priority).toBe('normal');
    expect(row('noq', { escalationStep: 2 }, null).priority).toBe('flagged');
  });

  test('a flag a human dismissed as a false alarm is no longer a flag; a newer flag is', () => {
    const flag = { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'same build again', at: iso(1000) };
    // iso(n): n ms ago.
    expect(
      row('d', {}, { lastVerdict: flag, lastDismissal: { at: iso(500), note: 'expected', pattern: 'SPIRALING', message: 'same build again' } }).priority,
    ).toBe('normal');
    expect(row('n', {}, { lastVerdict: { ...flag, at: iso(100) }, lastDismissal: { at: iso(500), note: null, pattern: null, message: '' } }).priority).toBe(
      'flagged',
    );
    // Statuses from agents without the field, or junk in it, change nothing.
    expect(row('old', {}, { lastVerdict: flag }).priority).toBe('flagged');
    expect(row('junk', {}, { lastVerdict: flag, lastDismissal: 'yesterday' }).priority).toBe('flagged');
  });

  test('within a class the higher escalation step comes first', () => {
    const a = row('a', {}, { escalationStep: 1, lastVerdict: { kind: 'CORRECTION', pattern: null, message: 'x', at: iso(1) } });
    const b = row('b', {}, { escalationStep: 2, lastVerdict: { kind: 'THINK_DEEPER', pattern: null, message: 'y', at: iso(1) } });
    expect(arrange([a, b]).map((r) => r.agentId)).toEqual(['b', 'a']);
  });
});

describe('lineage', () => {
  test('children follow their parent, indented; a subtree rises with its loudest member', () => {
    const rows = [
      row('calm'),
      row('boss', { startTime: iso(900_000) }),
      row('boss.a', { parent: 'boss' }, { parent: 'boss' }),
      row('boss.b', { parent: 'boss', state: 'awaiting-input' }, { parent: 'boss' }),
    ];
    const out = arrange(rows);
    expect(out.map((r) => [r.agentId, r.depth])).toEqual([
      ['boss', 0],
      ['boss.b', 1],
      ['boss.a', 1],
      ['calm', 0],
    ]);
    expect(out[1]!.shortId).toBe('b');
    const cols = layoutColumns(160);
    expect(cells(out[1]!, cols)[0]!.trimEnd()).toBe('  └ b');
  });

  test('an orphan child (parent not listed) is a root; a parent cycle does not hang or drop rows', () => {
    expect(arrange([row('x.y', { parent: 'x' })]).map((r) => r.depth)).toEqual([0]);
    const cyc = arrange([row('p', { parent: 'q' }), row('q', { parent: 'p' })]);
    expect(cyc.map((r) => r.agentId).sort()).toEqual(['p', 'q']);
  });

  test('hiding finished keeps a finished parent of a live child', () => {
    const rows = arrange([
      row('old', { status: 'COMPLETED', state: 'done' }, null),
      row('boss', { status: 'COMPLETED', state: 'done' }, null),
      row('boss.kid', { parent: 'boss' }),
    ]);
    expect(hideFinished(rows).map((r) => r.agentId)).toEqual(['boss', 'boss.kid']);
  });
});

describe('sorting by any column', () => {
  const rows = [
    row('b', {}, { costUsd: 2, tokens: { in: 10, out: 1, total: 11 } }),
    row('a', {}, { costUsd: 5, tokens: { in: 1000, out: 1, total: 1001 } }),
    row('c', {}, { costUsd: 1, tokens: { in: 5, out: 1, total: 6 } }),
  ];
  test('cost descending, id ascending, tokens', () => {
    expect(arrange(rows, { key: 'cost', desc: true }).map((r) => r.agentId)).toEqual(['a', 'b', 'c']);
    expect(arrange(rows, { key: 'id', desc: false }).map((r) => r.agentId)).toEqual(['a', 'b', 'c']);
    expect(arrange(rows, { key: 'tokens', desc: false }).map((r) => r.agentId)).toEqual(['c', 'b', 'a']);
  });
});

describe('the / filter', () => {
  test('fuzzy subsequence, case-insensitive; all terms must match', () => {
    expect(fuzzyScore('bld', 'make the build pass')).not.toBeNull();
    expect(fuzzyScore('xyz', 'make the build pass')).toBeNull();
    expect(fuzzyScore('BUILD', 'make the build pass')!).toBeGreaterThan(fuzzyScore('bild', 'make the build pass')!);
  });

  test('a match keeps its ancestors; a term never matches across two fields', () => {
    const rows = arrange([
      row('alpha', {}, {}, 'make the build pass'),
      row('boss', {}, {}, 'coordinate'),
      row('boss.kid', { parent: 'boss' }, { parent: 'boss' }, 'compute the answer'),
    ]);
    expect(filterRows(rows, 'answer').map((r) => r.agentId)).toEqual(['boss', 'boss.kid']);
    expect(filterRows(rows, 'alp').map((r) => r.agentId)).toEqual(['alpha']);
    // 'gam': g in "running", a and m in "make" — spread over fields and words, it must not match alpha.
    expect(filterRows(rows, 'gam')).toEqual([]);
    expect(filterRows(rows, '')).toHaveLength(3);
    expect(roster(rows, { filter: 'awaiting' })).toEqual([]);
  });
});

describe('row model', () => {
  test('absent model, tool, spend render as dashes and an empty sparkline', () => {
    const r = row('a', {}, {}, 'fix it');
    expect(r.model).toBeNull();
    expect(r.tool).toBeNull();
    expect(r.spark.trim()).toBe('');
    const text = renderText([r], 160, { key: 'priority', desc: false })[1]!;
    expect(text).toMatch(/^a +▶ running +fix it +— +100\/10 +\$0\.010 +\$0\.000 +\$0\.000\/h +— /);
  });

  test('agent text in a cell (task, tool, model) is one line with its terminal controls visible; widths hold', () => {
    const r = row('a', {}, { model: 'm\x9b2J', currentTool: 'sh\x1b]0;pwned\x07', task: 'Supervising a: fix\x1b]52;c;aGVsbG8=\x07\tit\rFAKE' });
    const cols = layoutColumns(160);
    const c = cells(r, cols);
    for (const [i, text] of c.entries()) expect([...text].length, cols[i]!.key).toBe(cols[i]!.width);
    expect(c.join(' ')).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    expect(c[cols.findIndex((x) => x.key === 'intent')]).toMatch(/^fix␛\]52;c;aGVsbG8=␇ it␍FAKE +$/);
    expect(c[cols.findIndex((x) => x.key === 'tool')]).toBe('sh␛]0;pwned␇'); // exactly the 12 columns;
    expect(c[cols.findIndex((x) => x.key === 'model')]).toMatch(/^m\\x9b2J +$/);
  });

  test('model, current tool and task come from status when the workflow exposes them', () => {
    const r = row('a', {}, { model: 'gpt-5.4', currentTool: 'shell', task: 'Supervising a: ship it', spend: spend([0.1, 0.2]) });
    expect([r.model, r.tool, r.intent]).toEqual(['gpt-5.4', 'shell', 'ship it']);
    expect(r.burn.slice(-2)).toEqual([0.1, 0.2]);
    expect(rowJson(r)).toMatchObject({ currentTool: 'shell', burn: { metric: 'costUsd' } });
  });

  test('intent from the static summary', () => {
    expect(intentFromSummary('Supervising fixer: make the build pass')).toBe('make the build pass');
    expect(intentFromSummary('Delegated by boss: Compute the answer for a.')).toBe('Compute the answer for a.');
    expect(intentFromSummary(undefined)).toBeNull();
  });

  test('a visibility-only row uses the search attributes; a finished one is dimmed by flag', () => {
    const r = buildRow(entry('z', { status: 'FAILED', state: 'failed', costUsd: 1.5, closeTime: iso(60_000) }), null, null, opts);
    expect(r).toMatchObject({ finished: true, priority: 'finished', costUsd: 1.5, tokensIn: null, detailed: false, elapsedMs: 540_000 });
  });

  test('a malformed status answer names the field', () => {
    expect(() => parseTopStatus({ agentId: 'a', state: 'flying' })).toThrow(/state/);
    expect(() => parseTopStatus({ state: 'running' })).toThrow(/agentId/);
  });
});

test('the badge carries text as well as colour', () => {
  const r: Row = row('a', { state: 'awaiting-input' });
  const c = cells(r, layoutColumns(160));
  expect(c[1]).toContain('awaiting-input');
});

describe('long agent ids (a session started by a hook is <project>-<session>)', () => {
  const a = 'my-webapp-frontend-1f3a9c0b2d4e';
  const b = 'my-webapp-frontend-77e0c1d2b3a4';

  test('the AGENT column grows to fit them when the terminal has room, and the intent keeps its share', () => {
    const rows = [row(a), row(b)];
    const wide = layoutColumns(200, longestId(rows));
    expect(wide[0]!.width).toBe(a.length);
    expect(wide[2]!.width).toBeGreaterThanOrEqual(24);
    expect(wide.reduce((n, c) => n + c.width, 0) + wide.length - 1).toBe(200);
    const lines = renderText(rows, 200, DEFAULT_SORT);
    expect(lines.some((l) => l.startsWith(`${a} `))).toBe(true);
    expect(lines.some((l) => l.startsWith(`${b} `))).toBe(true);
    // Short ids: the column stays as it was.
    expect(layoutColumns(160, longestId([row('calm')]))[0]!.width).toBe(18);
    // Less room: it grows only as far as the intent can spare.
    const mid = layoutColumns(160, longestId(rows));
    expect(mid[0]!.width).toBe(27);
    expect(mid[2]!.width).toBe(24);
    expect(cells(row(a), mid)[0]).toBe('my-webapp-fro…-1f3a9c0b2d4e');
    expect(layoutColumns(160)[0]!.width).toBe(18);
  });

  test('in a narrow terminal an id is cut in the middle: the session part at its end stays, so two sessions stay apart', () => {
    const cols = layoutColumns(100, longestId([row(a), row(b)]));
    expect(cols[0]!.width).toBe(18);
    const [ca, cb] = [cells(row(a), cols)[0]!, cells(row(b), cols)[0]!];
    expect([...ca]).toHaveLength(18);
    expect(ca).toBe('my-w…-1f3a9c0b2d4e');
    expect(cb).toBe('my-w…-77e0c1d2b3a4');
    expect(fitMiddle('short', 8)).toBe('short   ');
    expect(fitMiddle('abcdef', 1)).toBe('…');
  });
});

describe("supervision cost (the evaluator's model calls) beside the agent's own", () => {
  const es = (costUsd: number) => ({ calls: 2, failed: 0, tokens: { in: 700, out: 9, total: 709 }, costUsd, decided: { heuristic: 0, model: 2 } });

  test('from the status answer where the row was queried: its dollars and its rate over every run', () => {
    const r = row('a', { evaluatorCostUsd: 0.001 }, { evaluatorSpend: es(0.0084), supervision: { hours: 0.5, costUsdPerHour: 0.0168, tokensPerHour: 1418 } });
    expect([r.supervisionUsd, r.supervisionUsdPerHour]).toEqual([0.0084, 0.0168]);
    const cols = layoutColumns(220);
    const c = cells(r, cols);
    expect(c[cols.findIndex((x) => x.key === 'supervision')]!.trim()).toBe('$0.008');
    expect(c[cols.findIndex((x) => x.key === 'rate')]!.trim()).toBe('$0.017/h');
    expect(rowJson(r).supervision).toEqual({ costUsd: 0.0084, costUsdPerAgentHour: 0.0168 });
  });

  test('from visibility (WardenEvaluatorCostUsd) where it was not: the rate over the hours since the run started', () => {
    // rosterEntry starts 10 minutes before NOW: $0.05 in a sixth of an hour is $0.30 an hour.
    const r = row('a', { evaluatorCostUsd: 0.05 }, null);
    expect(r.supervisionUsd).toBe(0.05);
    expect(r.supervisionUsdPerHour).toBeCloseTo(0.3, 10);
    expect(renderText([r], 220, DEFAULT_SORT)[1]).toMatch(/ \$0\.050 +\$0\.300\/h /);
    // An older agent publishes no figure, and its status has none: a dash, never a made-up zero.
    const old = row('b', { evaluatorCostUsd: null }, null);
    expect([old.supervisionUsd, old.supervisionUsdPerHour]).toEqual([null, null]);
    expect(renderText([old], 220, DEFAULT_SORT)[1]).toMatch(/\$0\.000 +— +— /);
    // Under a minute supervised: no rate yet.
    expect(row('c', { evaluatorCostUsd: 0.01, startTime: iso(30_000) }, null).supervisionUsdPerHour).toBeNull();
    expect(formatRate(null)).toBe('—');
  });

  test('the header names both columns; the supervision column sorts', () => {
    expect(renderText([row('a')], 220, DEFAULT_SORT)[0]).toMatch(/COST +SUPV \$ +SUPV\/H +TOOL/);
    const rows = [row('cheap', { evaluatorCostUsd: 0.01 }, null), row('dear', { evaluatorCostUsd: 2 }, null), row('none', { evaluatorCostUsd: null }, null)];
    expect(arrange(rows, { key: 'supervision', desc: true }).map((r) => r.agentId)).toEqual(['dear', 'cheap', 'none']);
  });

  test("the fleet total: every agent row, the agents' own dollars and supervision's; a mesh row (its workers' sum) is not counted twice", () => {
    const rows = [
      row('a', {}, { costUsd: 1.5, evaluatorSpend: es(0.25) }),
      row('b', { costUsd: 0.5, evaluatorCostUsd: 0.125 }, null),
      row('old', { costUsd: null, evaluatorCostUsd: null }, null),
      // A mesh row's cost is its workers' sum (meshes.ts): counting it would count them twice.
      {
        ...buildMeshRow({ runId: 'r1', workflowId: 'mesh-r1', status: 'RUNNING', phase: 'running', startTime: iso(60_000), closeTime: null }, null, null, opts),
        costUsd: 9,
      },
    ];
    const t = fleetTotals(rows);
    expect(t).toEqual({ agents: 3, costUsd: 2, supervisionUsd: 0.375 });
    expect(formatFleetTotals(t)).toBe('agents $2.000 · supervision $0.375');
  });
});

describe("a hooked session's sub-agents", () => {
  test("their spend is in the row with the agent's own, as visibility publishes it; an older status without them reads as before", () => {
    const r = row(
      'hooked',
      {},
      { subagents: { running: 0, seen: 1, list: [], spend: { tokens: { in: 1000, out: 20, total: 1020 }, costUsd: 0.25, counted: 1 } } },
    );
    expect(r).toMatchObject({ tokensIn: 1100, tokensOut: 30, costUsd: 0.26 });
    expect(row('plain')).toMatchObject({ tokensIn: 100, tokensOut: 10, costUsd: 0.01 });
    expect(row('odd', {}, { subagents: 'garbage' })).toMatchObject({ tokensIn: 100, costUsd: 0.01 });
  });
});
