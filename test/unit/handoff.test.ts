/** The handoff a compacted agent's fresh context starts from: what it holds, and its bounds. */
import { describe, expect, it } from 'vitest';
import { HANDOFF_HEADER, HANDOFF_MAX_CHARS, buildHandoff, compactionInput, progressLines, summariseTurn } from '../../src/domain/judgement/handoff.js';
import type { Turn } from '../../src/domain/contract/schemas.js';

const spiral = (n: number): Turn => ({
  id: `t${n}`,
  text: 'The build failed again, retrying the build.',
  toolCalls: [{ name: 'shell', args: 'npm run build', result: 'error TS2307', ok: false }],
});
const base = {
  task: 'Make `npm run build` pass (task K-77).',
  firstTurnNumber: 4,
  whispers: [
    { type: 'CORRECTION' as const, text: 'You have run the same failing call 3 times.' },
    { type: 'STEERING' as const, text: 'Read the TS2307 error.' },
    { type: 'CORRECTION' as const, text: 'Warning 2 of 2: You have run the same failing call 6 times.' },
  ],
  next: 'Stop re-running the build; read the error and fix its cause.',
  doneMarker: 'TASK COMPLETE',
};

describe('summariseTurn and progressLines', () => {
  it('one line per turn: what the agent said and the tools it ran, with how they ended', () => {
    expect(summariseTurn(spiral(1))).toBe('said "The build failed again, retrying the build.", ran shell npm run build (failed)');
    expect(summariseTurn({ text: '' })).toBe('(nothing)');
    expect(summariseTurn({ text: 'a\n\n  b', toolCalls: [{ name: 'edit', ok: true }] })).toBe('said "a b", ran edit (ok)');
  });

  it('runs of identical turns fold into one line, so a spiral reads as one', () => {
    const turns: Turn[] = [{ text: 'Reading the code.' }, spiral(2), spiral(3), spiral(4), { text: 'Done reading.' }];
    expect(progressLines(turns, 10)).toEqual([
      '- turn 10: said "Reading the code."',
      '- turns 11–13, 3 times the same: said "The build failed again, retrying the build.", ran shell npm run build (failed)',
      '- turn 14: said "Done reading."',
    ]);
  });
});

describe('buildHandoff', () => {
  it('holds the task, the progress, every whisper given (word for word) and what to do next, in that order', () => {
    const h = buildHandoff({ ...base, turns: [spiral(4), spiral(5), spiral(6)] });
    expect(h.startsWith(HANDOFF_HEADER)).toBe(true);
    const order = [
      'Your task:\nMake `npm run build` pass (task K-77).',
      'turns 4–6, 3 times the same',
      '[CORRECTION] You have run the same failing call 3 times.',
      '[steering] Read the TS2307 error.',
      '[CORRECTION] Warning 2 of 2',
      'What you must do next:\nStop re-running the build',
      'start your final message with "TASK COMPLETE"',
    ];
    let at = -1;
    for (const part of order) {
      const i = h.indexOf(part);
      expect(i, part).toBeGreaterThan(at);
      at = i;
    }
  });

  it('with no turns and no whispers it still holds the task and what to do next', () => {
    const h = buildHandoff({ ...base, whispers: [], turns: [] });
    expect(h).toContain('Progress so far: no turns yet.');
    expect(h).not.toContain('Corrections you were given');
    expect(h).toContain('What you must do next:');
  });

  it('is bounded: long turns lose their oldest progress lines first, with a marker; the task, whispers and next step stay', () => {
    const turns: Turn[] = Array.from({ length: 200 }, (_, i) => ({ id: `t${i}`, text: `step ${i} ${'x'.repeat(400)}` }));
    const h = buildHandoff({ ...base, turns, firstTurnNumber: 1 });
    expect(h.length).toBeLessThanOrEqual(HANDOFF_MAX_CHARS);
    expect(h).toContain('earlier turns left out');
    expect(h).toContain('turn 200: said "step 199');
    expect(h).not.toContain('turn 1: said "step 0 ');
    expect(h).toContain('Your task:');
    expect(h).toContain('Warning 2 of 2');
    expect(h).toContain('Stop re-running the build');
  });

  it('a huge task and huge whispers are cut too: never past the bound', () => {
    const h = buildHandoff({
      ...base,
      task: 'T'.repeat(50_000),
      whispers: Array.from({ length: 30 }, () => ({ type: 'CORRECTION' as const, text: 'W'.repeat(5_000) })),
      turns: [spiral(1)],
    });
    expect(h.length).toBeLessThanOrEqual(HANDOFF_MAX_CHARS);
    expect(h).toContain('What you must do next:');
  });
});

describe('compactionInput', () => {
  it('is the handoff alone, or the queued whispers first, marked as in any turn', () => {
    expect(compactionInput('HANDOFF', [])).toBe('HANDOFF');
    expect(compactionInput('HANDOFF', [{ type: 'STEERING', text: 'Use the cache.' }])).toBe(
      'Messages from your supervisor (warden):\n[steering] Use the cache.\n\nHANDOFF',
    );
  });
});
