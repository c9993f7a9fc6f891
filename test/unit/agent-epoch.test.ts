/**
 * The evaluation epoch has one owner (`startEpoch`, effects.ts): every human intervention and
 * every stop moves it and drops what is queued, so an evaluation that started before it is not
 * applied and nothing queued runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signal } from '../helpers/signal.js';
import { reportTurn } from '../helpers/report.js';
import { testAgent, turn, type TestAgent } from '../helpers/core.js';

const ROOT = join(import.meta.dirname, '../..');

function running(): TestAgent {
  const a = testAgent({ supervisor: { idleAfterMs: 0 } });
  reportTurn(a, turn('t1'));
  a.core.s.evalQueue = [{ reason: 'interval', turns: [...a.core.s.window], firstTurn: 1 }];
  return a;
}

describe('startEpoch: the one place the evaluation epoch moves', () => {
  it.each([
    ['pause', (a: TestAgent) => signal(a, 'pause', {})],
    ['interrupt', (a: TestAgent) => signal(a, 'interrupt', {})],
    ['abort', (a: TestAgent) => signal(a, 'abort', {})],
    ['stop', (a: TestAgent) => signal(a, 'stop', {})],
  ])('%s: a new epoch, nothing queued', (_name, act) => {
    const a = running();
    const before = a.core.run.epoch;
    act(a);
    expect(a.core.run.epoch).toBe(before + 1);
    expect(a.core.s.evalQueue).toEqual([]);
  });

  it('resume after a pause, and a steer after an interrupt, each start one more', () => {
    const a = running();
    signal(a, 'pause', {});
    signal(a, 'resume', {});
    expect(a.core.run.epoch).toBe(2);
    const b = running();
    signal(b, 'interrupt', {});
    signal(b, 'steer', { text: 'look at the config loader instead' });
    expect(b.core.run.epoch).toBe(2);
    expect(b.core.s.evalQueue).toEqual([]);
  });

  it('a refused control moves nothing', () => {
    const a = running();
    signal(a, 'resume', {}); // not paused: refused
    expect(a.core.run.epoch).toBe(0);
    expect(a.core.s.evalQueue).toHaveLength(1);
  });

  it('no other code in src/domain moves the epoch', () => {
    const dir = join(ROOT, 'src/domain/agent');
    const movers = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => (/\.epoch\s*(\+=|=|\+\+)/.test(readFileSync(join(dir, f), 'utf8')) ? [f] : []));
    expect(movers).toEqual(['effects.ts']);
  });
});
