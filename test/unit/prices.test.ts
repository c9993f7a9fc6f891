/**
 * Model prices for hooked sessions (src/hooks/prices.ts, the `prices:` of the user's own config):
 * a model's price by exact name or the longest `prefix*`, a message's cost by its token kinds, a
 * cost the transcript carries winning, unpriced models named; honoured only from the user's config.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ConfigError, parseConfig, userPrices } from '../../src/config/file.js';
import { describeConfig, mergeUntrusted } from '../../src/config/trust.js';
import { messageCost, priceFor, priceMessages } from '../../src/hooks/prices.js';

const scratch = mkdtempSync(join(tmpdir(), 'warden-prices-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('priceFor / messageCost / priceMessages', () => {
  const table = {
    'claude-opus-4-5': { input: 5, output: 25 },
    'claude-*': { input: 3, output: 15 },
    'claude-sonnet-*': { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
  };

  test('an exact name first, else the longest prefix, else none', () => {
    expect(priceFor('claude-opus-4-5', table)).toEqual({ input: 5, output: 25 });
    expect(priceFor('claude-sonnet-5', table)).toEqual(table['claude-sonnet-*']);
    expect(priceFor('claude-haiku-4', table)).toEqual(table['claude-*']);
    expect(priceFor('gpt-5', table)).toBeUndefined();
    expect(priceFor(undefined, table)).toBeUndefined();
    expect(priceFor('claude-x', undefined)).toBeUndefined();
    expect(priceFor('toString', table)).toBeUndefined(); // no inherited keys
  });

  test('each kind of token at its price; cache reads and writes at the input price when not given', () => {
    const u = { tokensIn: 1_000_000 + 2_000_000 + 4_000_000, tokensOut: 1_000_000, costUsd: 0, cacheRead: 2_000_000, cacheWrite: 4_000_000 };
    expect(messageCost(u, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })).toBeCloseTo(3 + 0.6 + 15 + 15, 9);
    expect(messageCost(u, { input: 3, output: 15 })).toBeCloseTo(3 * 7 + 15, 9);
  });

  test("a transcript's own cost wins; models without a price are named once", () => {
    const { priced, unpriced } = priceMessages(
      [
        { tokensIn: 1e6, tokensOut: 0, costUsd: 0.5, model: 'claude-opus-4-5' },
        { tokensIn: 1e6, tokensOut: 0, costUsd: 0, model: 'claude-opus-4-5' },
        { tokensIn: 10, tokensOut: 1, costUsd: 0, model: 'gpt-5' },
        { tokensIn: 10, tokensOut: 1, costUsd: 0, model: 'gpt-5' },
        { tokensIn: 10, tokensOut: 1, costUsd: 0 },
        { tokensIn: 0, tokensOut: 0, costUsd: 0, model: 'empty' },
      ],
      table,
    );
    expect(priced.map((m) => m.costUsd)).toEqual([0.5, 5, 0, 0, 0, 0]);
    expect(unpriced).toEqual(['gpt-5', 'unknown']);
  });
});

describe('prices: in the config file', () => {
  test('parsed and validated, naming the bad key', () => {
    expect(parseConfig("prices:\n  'claude-*': { input: 3, output: 15, cache_read: 0.3 }\n").prices).toEqual({
      'claude-*': { input: 3, output: 15, cache_read: 0.3 },
    });
    expect(() => parseConfig('prices:\n  m: { input: -1, output: 1 }\n')).toThrow(ConfigError);
    expect(() => parseConfig('prices:\n  m: { input: -1, output: 1 }\n')).toThrow(/prices\.m\.input/);
    expect(() => parseConfig('prices:\n  m: { input: 1 }\n')).toThrow(/prices\.m\.output/);
    expect(() => parseConfig('prices:\n  m: { input: 1, output: 1, per: 5 }\n')).toThrow(/per/);
  });

  test("read from the user's own config only; a project's are never taken", () => {
    const env = { HOME: join(scratch, 'home'), XDG_CONFIG_HOME: join(scratch, 'xdg') };
    expect(userPrices(env)).toBeUndefined();
    mkdirSync(join(scratch, 'xdg', 'warden'), { recursive: true });
    writeFileSync(join(scratch, 'xdg', 'warden', 'warden.yaml'), "prices:\n  'claude-*': { input: 3, output: 15, cache_write: 3.75 }\n");
    expect(userPrices(env)).toEqual({ 'claude-*': { input: 3, output: 15, cacheWrite: 3.75 } });
    const project = parseConfig("prices:\n  '*': { input: 0, output: 0 }\n");
    const merged = mergeUntrusted(project, parseConfig("prices:\n  'claude-*': { input: 3, output: 15 }\n"));
    expect(merged.cfg.prices).toEqual({ 'claude-*': { input: 3, output: 15 } });
    expect(merged.ignored).toContain('prices');
    expect(describeConfig(project)).toContain('prices: not taken from a project (only your own config sets them)');
  });
});
