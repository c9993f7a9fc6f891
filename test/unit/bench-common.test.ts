import { describe, expect, test } from 'vitest';
import { eachFlag, latencyStats, makeTurn, numArg, percentile, UsageError } from '../../bench/common.js';

describe('the statistics the benchmarks print', () => {
  test('percentile is nearest-rank over an ascending array, NaN when empty', () => {
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(xs, 50)).toBe(5);
    expect(percentile(xs, 90)).toBe(9);
    expect(percentile(xs, 99)).toBe(10);
    expect(percentile([7], 1)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  test('latencyStats sorts a copy and rounds to the digits asked; empty gives NaN, null in JSON', () => {
    const xs = [30.456, 10.123, 20.789];
    expect(latencyStats(xs)).toEqual({ p50: 20.8, p90: 30.5, p99: 30.5, max: 30.5 });
    expect(latencyStats(xs, 2)).toEqual({ p50: 20.79, p90: 30.46, p99: 30.46, max: 30.46 });
    expect(xs).toEqual([30.456, 10.123, 20.789]);
    expect(JSON.stringify(latencyStats([]))).toBe('{"p50":null,"p90":null,"p99":null,"max":null}');
  });
});

describe('the turns the benchmarks report', () => {
  test('makeTurn is deterministic, keeps the id given and cycles through four kinds of tool call', () => {
    const turns = [0, 1, 2, 3].map((t) => makeTurn(`x-${t}`, 3, t));
    expect(turns.map((t) => t.id)).toEqual(['x-0', 'x-1', 'x-2', 'x-3']);
    expect(turns.map((t) => t.toolCalls?.[0]?.name)).toEqual(['read_file', 'edit_file', 'shell', 'grep']);
    expect(makeTurn('x-1', 3, 1)).toEqual(turns[1]);
    expect(turns[0]).toMatchObject({ tokensIn: 911, tokensOut: 123, costUsd: 0.002 });
    expect(turns[0]!.text).toBe('Turn 0: reading src/http/routes.ts to understand error propagation before changing anything (agent 3).');
  });
});

describe('the benchmarks’ flags', () => {
  const walk = (argv: string[]) => {
    const seen: Array<[string, string | undefined]> = [];
    eachFlag(argv, 'usage', (flag, val) => {
      if (flag === '--bogus') return false;
      seen.push([flag, flag === '--on' ? undefined : val()]);
      return true;
    });
    return seen;
  };

  test('eachFlag reads `--flag value` and `--flag=value`, and leaves a switch its next argument', () => {
    expect(walk(['--agents', '3', '--turns=4', '--on', '--namespace', 'ns'])).toEqual([
      ['--agents', '3'],
      ['--turns', '4'],
      ['--on', undefined],
      ['--namespace', 'ns'],
    ]);
  });

  test('eachFlag: a flag the bench does not take is a usage error naming it', () => {
    expect(() => walk(['--agents', '3', '--bogus=1'])).toThrow(new UsageError('unknown argument: --bogus=1'));
  });

  test('numArg names the flag: not a number, out of range, a fraction where a whole number is needed', () => {
    expect(numArg('--agents', '12', 1, 20)).toBe(12);
    expect(numArg('--period', '0.5', 0.1, 10, false)).toBe(0.5);
    expect(() => numArg('--agents', undefined, 1, 20)).toThrow(new UsageError('--agents needs a whole number'));
    expect(() => numArg('--agents', '1.5', 1, 20)).toThrow(new UsageError('--agents needs a whole number'));
    expect(() => numArg('--period', 'x', 0.1, 10, false)).toThrow(new UsageError('--period needs a number'));
    expect(() => numArg('--agents', '0', 1, 20)).toThrow(new UsageError('--agents must be between 1 and 20'));
  });
});
