/**
 * A Claude Code sub-agent's spend: summed from its own transcript at SubagentStop (the hook side,
 * src/hooks/subagent-spend.ts: what it reads and what it refuses), remembered per sub-agent id in
 * the spend slice (a re-sent stop counts nothing twice), and counted toward the agent's budgets.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { SUBAGENT_IDS_KEPT, freshSpend, recordSubagentSpend } from '../../src/domain/agent/slices/spend.js';
import { spendOf } from '../../src/domain/agent/state.js';
import { status } from '../../src/domain/agent/visibility.js';
import { formatStatus } from '../../src/cli/commands/status.js';
import { SIGNAL_SCHEMAS, describeZodError } from '../../src/domain/contract/schemas.js';
import { readSubagentSpend, sumTranscriptUsage, TranscriptRefused } from '../../src/hooks/subagent-spend.js';
import { ROOT } from '../helpers/stack.js';
import { T0, testAgent } from '../helpers/core.js';

/**
 * A sub-agent's transcript as Claude Code 2.1.330 wrote it (its big attachment lines left out): a
 * first answer written as two entries (its text block and its Bash tool_use, one message id, the
 * same usage: 1000 in, 300 cache writes, 4000 cache reads, 200 out), the tool result, and a last
 * answer (1234 in, 5000 cache reads, 567 out).
 */
const FIXTURE = join(ROOT, 'test/fixtures/claude-subagent-transcript.jsonl');
const FIXTURE_SPEND = { tokensIn: 1000 + 300 + 4000 + 1234 + 5000, tokensOut: 200 + 567, costUsd: 0, messages: 2 };

describe('sumTranscriptUsage', () => {
  it("sums a real transcript's assistant messages, each message once however many entries it was written as", () => {
    expect(sumTranscriptUsage(readFileSync(FIXTURE, 'utf8').split('\n'))).toEqual(FIXTURE_SPEND);
  });

  it('adds the costUSD entries carry (older Claude Code); skips broken lines, other entries, bad numbers', () => {
    const lines = [
      JSON.stringify({ type: 'assistant', costUSD: 0.01, message: { id: 'm1', role: 'assistant', usage: { input_tokens: 100, output_tokens: 10 } } }),
      JSON.stringify({
        type: 'assistant',
        costUSD: 0.02,
        message: { id: 'm2', role: 'assistant', usage: { input_tokens: 200, output_tokens: -5, cache_read_input_tokens: 'x' } },
      }),
      JSON.stringify({ type: 'user', message: { role: 'user', usage: { input_tokens: 1e6 } } }),
      '{"type":"assistant","message":{"usage":', // cut off mid-line
      JSON.stringify({ type: 'assistant', message: { role: 'assistant', usage: null } }),
      JSON.stringify({ type: 'assistant', costUSD: Number.MAX_VALUE, message: { role: 'assistant', usage: { input_tokens: 1e300 } } }),
    ];
    const spent = sumTranscriptUsage(lines.slice(0, 5));
    expect(spent).toEqual({ tokensIn: 300, tokensOut: 10, costUsd: 0.03, messages: 2 });
    // Absurd numbers are capped at what the signal accepts.
    expect(sumTranscriptUsage(lines)).toMatchObject({ tokensIn: 1e12, costUsd: 1e9 });
  });
});

describe('readSubagentSpend: only a regular file inside the session transcript directory', () => {
  let dir: string;
  let project: string;
  let session: string;
  let subagents: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-subagent-spend-'));
    project = join(dir, 'projects', '-work');
    session = join(project, 's1.jsonl');
    subagents = join(project, 's1', 'subagents');
    mkdirSync(subagents, { recursive: true });
    writeFileSync(session, '');
    writeFileSync(join(subagents, 'agent-a1.jsonl'), readFileSync(FIXTURE));
    writeFileSync(join(dir, 'outside.jsonl'), readFileSync(FIXTURE));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads and sums the sub-agent's transcript where Claude Code writes it", async () => {
    expect(await readSubagentSpend(join(subagents, 'agent-a1.jsonl'), session)).toEqual(FIXTURE_SPEND);
  });

  it('a transcript over the size cap is counted up to the cap, marked partial', async () => {
    const big = join(subagents, 'agent-big.jsonl');
    const line = `${JSON.stringify({ type: 'assistant', message: { id: 'm', usage: { input_tokens: 1, output_tokens: 1 } } })}\n`;
    writeFileSync(big, [0, 1, 2, 3].map((i) => line.replace('"m"', `"m${i}"`)).join(''));
    expect(await readSubagentSpend(big, session, line.length * 2 + 10)).toEqual({ tokensIn: 2, tokensOut: 2, costUsd: 0, messages: 2, partial: true });
  });

  const refusals: Array<[string, () => { path: string; session?: string }, RegExp]> = [
    ['a relative path', () => ({ path: 's1/subagents/agent-a1.jsonl', session }), /not an absolute path/],
    ['a file outside the transcript directory', () => ({ path: join(dir, 'outside.jsonl'), session }), /not inside the session's transcript directory/],
    ['a path that climbs out with ..', () => ({ path: `${subagents}/../../../../outside.jsonl`, session }), /not inside the session's transcript directory/],
    ['no session transcript to check it against', () => ({ path: join(subagents, 'agent-a1.jsonl') }), /transcript_path/],
    ['not a .jsonl file', () => ({ path: join(project, 's1.txt'), session }), /\.jsonl/],
    [
      'a symlink to a file outside',
      () => {
        const link = join(subagents, 'agent-link.jsonl');
        symlinkSync(join(dir, 'outside.jsonl'), link);
        return { path: link, session };
      },
      /symbolic link/,
    ],
    [
      'a file under a symlinked directory that leads out',
      () => {
        const out = join(dir, 'elsewhere');
        mkdirSync(out);
        writeFileSync(join(out, 'agent-x.jsonl'), readFileSync(FIXTURE));
        symlinkSync(out, join(project, 's1', 'escape'));
        return { path: join(project, 's1', 'escape', 'agent-x.jsonl'), session };
      },
      /leads out of the session's transcript directory/,
    ],
    [
      'a FIFO',
      () => {
        const fifo = join(subagents, 'agent-fifo.jsonl');
        execFileSync('mkfifo', [fifo]);
        return { path: fifo, session };
      },
      /not a regular file/,
    ],
    [
      'a directory',
      () => {
        mkdirSync(join(subagents, 'agent-dir.jsonl'));
        return { path: join(subagents, 'agent-dir.jsonl'), session };
      },
      /not a regular file/,
    ],
  ];
  it.each(refusals)('refuses %s, saying why', async (_what, make, reason) => {
    const { path, session: s } = make();
    const err = await readSubagentSpend(path, s).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TranscriptRefused);
    expect((err as Error).message).toMatch(reason);
  });
});

describe('the spend slice remembers what it counted of each sub-agent', () => {
  it('a re-sent stop counts nothing; a resumed sub-agent adds only what it spent since', () => {
    const s = freshSpend();
    expect(recordSubagentSpend(s, 'a1', { tokensIn: 100, tokensOut: 20, costUsd: 0.01 }, T0)).toEqual({ tokens: 120, costUsd: 0.01 });
    expect(recordSubagentSpend(s, 'a1', { tokensIn: 100, tokensOut: 20, costUsd: 0.01 }, T0 + 1)).toBeNull();
    expect(recordSubagentSpend(s, 'a1', { tokensIn: 150, tokensOut: 30, costUsd: 0.01 }, T0 + 2)).toEqual({ tokens: 60, costUsd: 0 });
    expect(recordSubagentSpend(s, 'b2', { tokensIn: 5, tokensOut: 5, costUsd: 0 }, T0 + 3)).toEqual({ tokens: 10, costUsd: 0 });
    expect(s.subagentSpend).toEqual({ tokensIn: 155, tokensOut: 35, costUsd: 0.01, counted: 2 });
    expect(s.subagentCounted.map((c) => c.id)).toEqual(['a1', 'b2']);
    // The burn rate sees it too.
    expect(s.spendHistory).toEqual([{ at: T0, tokens: 190, costUsd: 0.01 }]);
  });

  it(`remembers the newest ${SUBAGENT_IDS_KEPT} ids`, () => {
    const s = freshSpend();
    for (let i = 0; i < SUBAGENT_IDS_KEPT + 50; i++) recordSubagentSpend(s, `x${i}`, { tokensIn: 1, tokensOut: 0, costUsd: 0 }, T0);
    expect(s.subagentCounted).toHaveLength(SUBAGENT_IDS_KEPT);
    expect(s.subagentCounted[0]!.id).toBe('x50');
    expect(s.subagentSpend.counted).toBe(SUBAGENT_IDS_KEPT + 50);
    expect(recordSubagentSpend(s, `x${SUBAGENT_IDS_KEPT + 49}`, { tokensIn: 1, tokensOut: 0, costUsd: 0 }, T0)).toBeNull();
  });
});

describe('the subagent signal with spend', () => {
  const stop = (id: string, tokensIn: number, tokensOut: number, costUsd = 0) => ({
    phase: 'stop',
    id,
    type: 'general-purpose',
    spend: { tokensIn, tokensOut, costUsd },
  });

  it('counts toward the budgets: a token budget crossed by sub-agents pauses the agent; a re-sent stop does not count twice', () => {
    const a = testAgent({ budgets: { tokens: 1000 } });
    a.core.s.state = 'running';
    signal(a, 'subagent', { phase: 'start', id: 'a1', type: 'general-purpose' });
    signal(a, 'subagent', stop('a1', 500, 100));
    signal(a, 'subagent', stop('a1', 500, 100)); // re-sent
    expect(spendOf(a.core, a.ports.now()).tokens).toBe(600);
    expect(a.core.s.state).toBe('running');
    signal(a, 'subagent', stop('b2', 300, 100));
    expect(a.core.s).toMatchObject({ state: 'paused-by-user', budgetPaused: true, pauseReason: 'budget exhausted: tokens 1000 of 1000' });
    const st = status(a);
    expect(st.tokens.total).toBe(0); // the agent's own
    expect(st.subagents?.spend).toEqual({ tokens: { in: 800, out: 200, total: 1000 }, costUsd: 0, counted: 2 });
    expect(st.budgets.tokens).toEqual({ used: 1000, limit: 1000 });
    expect(formatStatus(st)).toContain('  sub-agents: 0 running, 2 finished, 1.0k tokens, $0.000');
  });

  it('a cost budget too, warned at 80 % first', () => {
    const a = testAgent({ budgets: { costUsd: 1 } });
    a.core.s.state = 'running';
    signal(a, 'subagent', stop('a1', 10, 10, 0.85));
    expect(a.core.s.budgetWarned).toEqual(['costUsd']);
    expect(a.core.s.state).toBe('running');
    signal(a, 'subagent', stop('a2', 10, 10, 0.2));
    expect(a.core.s).toMatchObject({ state: 'paused-by-user', budgetPaused: true });
    expect(formatStatus(status(a))).toContain('  sub-agents: 0 running, 2 finished, 40 tokens, $1.050');
  });

  it('a stop without spend (an older Claude Code, a refused transcript) only ends it; a bad spend is refused naming the field', () => {
    const a = testAgent({ budgets: { tokens: 10 } });
    a.core.s.state = 'running';
    signal(a, 'subagent', { phase: 'stop', id: 'a1' });
    expect(a.core.s.subagentSpend.counted).toBe(0);
    const bad = SIGNAL_SCHEMAS.subagent.safeParse({ phase: 'stop', id: 'a2', spend: { tokensIn: -1, tokensOut: 0, costUsd: 0 } });
    expect(bad.success).toBe(false);
    expect(describeZodError(bad.error!)).toContain('spend.tokensIn');
    const invalid = a.core.s.invalidSignals;
    signal(a, 'subagent', { phase: 'stop', id: 'a2', spend: { tokensIn: 5, tokensOut: 'many', costUsd: 0 } });
    expect(a.core.s.invalidSignals).toBe(invalid + 1);
    expect(a.core.s.subagentSpend.counted).toBe(0);
    expect(a.core.s.state).toBe('running');
  });
});
