/**
 * Budgets and safety rails on every surface: `warden start --budget-*` flags, the config file's
 * `budgets:` and `safety:` keys, both mapped onto AgentSpec.budgets / .safety; and the trust rule
 * for a project's warden.yaml: its budgets only ever tighten the user's (trusted or not), its
 * `safety:` is honoured only when the project is trusted.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildSpec } from '../../src/cli/commands/start.js';
import { UsageError } from '../../src/cli/exit.js';
import { positiveDuration, positiveInt, positiveNumber } from '../../src/cli/flags.js';
import { buildProgram } from '../../src/cli/program.js';
import { BudgetsFile, ConfigError, parseConfig, specFromConfig } from '../../src/config/file.js';
import { capBudgets, configDigest, describeConfig, mergeUntrusted, sessionConfig, withTrusted, writeTrustStore } from '../../src/config/trust.js';
import { AgentSpecSchema, BudgetsSchema } from '../../src/domain/contract/schemas.js';
import { planSession } from '../../src/hooks/auto-start.js';

const scratch = mkdtempSync(join(tmpdir(), 'warden-budget-surfaces-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The options `warden start` parses from argv (commander with the real definitions). */
function startOptions(args: string[]): Record<string, unknown> {
  let got: Record<string, unknown> | undefined;
  const program = buildProgram('start');
  const start = program.commands.find((c) => c.name() === 'start')!;
  start.action((_id: string, o: Record<string, unknown>) => {
    got = o;
  });
  program.parse(['node', 'warden', 'start', 'a', '--task', 't', ...args]);
  return got!;
}

describe('warden start --budget-* flags', () => {
  test('parsed and mapped onto AgentSpec.budgets', () => {
    const o = startOptions(['--budget-tokens', '2000', '--budget-cost-usd', '2.50', '--budget-turns', '20', '--budget-wall-clock', '90m']);
    expect(o).toMatchObject({ budgetTokens: 2000, budgetCostUsd: 2.5, budgetTurns: 20, budgetWallClock: 5_400_000 });
    const spec = AgentSpecSchema.parse(buildSpec('a', { task: 't', ...o }));
    expect(spec.budgets).toEqual({ tokens: 2000, costUsd: 2.5, turns: 20, wallClockMs: 5_400_000 });
    expect(startOptions(['--budget-wall-clock', '2h']).budgetWallClock).toBe(7_200_000);
    expect(startOptions(['--budget-wall-clock', '45s']).budgetWallClock).toBe(45_000);
    // none given: no budgets in the spec
    expect(buildSpec('a', { task: 't' }).budgets).toBeUndefined();
  });

  test.each([
    [['--budget-turns', '0'], '--budget-turns must be a whole number above 0, got "0"'],
    [['--budget-turns', '2.5'], '--budget-turns must be a whole number above 0, got "2.5"'],
    [['--budget-tokens', 'many'], '--budget-tokens must be a whole number above 0, got "many"'],
    [['--budget-tokens', '-5'], '--budget-tokens must be a whole number above 0, got "-5"'],
    [['--budget-cost-usd', '0'], '--budget-cost-usd must be a number above 0, e.g. 2.50, got "0"'],
    [['--budget-cost-usd', '$5'], '--budget-cost-usd must be a number above 0, e.g. 2.50, got "$5"'],
    [['--budget-cost-usd', '1e13'], '--budget-cost-usd must be at most 1000000000000, got "1e13"'],
    [['--budget-wall-clock', '0s'], '--budget-wall-clock must be a duration above 0 like 45s, 90m or 2h, got "0s"'],
    [['--budget-wall-clock', '2 days'], '--budget-wall-clock must be a duration above 0 like 45s, 90m or 2h, got "2 days"'],
  ])('%j is a usage error naming the flag', (args, message) => {
    expect(() => startOptions(args)).toThrow(UsageError);
    expect(() => startOptions(args)).toThrow(message);
  });

  test('the parsers alone', () => {
    expect(positiveInt('--n')('7')).toBe(7);
    expect(() => positiveInt('--n')('')).toThrow('--n must be a whole number above 0');
    expect(() => positiveInt('--n')('9007199254740993')).toThrow(UsageError);
    expect(positiveNumber('--x', 10)('0.01')).toBe(0.01);
    expect(() => positiveNumber('--x', 10)('Infinity')).toThrow(UsageError);
    expect(positiveDuration('--d')('1500')).toBe(1500); // a number of ms, as every duration flag takes
    expect(() => positiveDuration('--d')('0')).toThrow(UsageError);
  });
});

describe('the config file: budgets and safety', () => {
  const YAML = [
    'budgets:',
    '  tokens: 2000000',
    '  cost_usd: 5',
    '  turns: 200',
    '  wall_clock: 2h',
    'safety:',
    '  max_restarts: 2',
    '  restart_window: 5m',
    '  max_blocked: 30m',
    '  max_held: 1h',
    '  heartbeat_interval: 30s',
    '',
  ].join('\n');

  test('every key maps onto the AgentSpec field of the same meaning', () => {
    const spec = AgentSpecSchema.parse({ agentId: 'a', task: 't', ...specFromConfig(parseConfig(YAML)) });
    expect(spec.budgets).toEqual({ tokens: 2_000_000, costUsd: 5, turns: 200, wallClockMs: 7_200_000 });
    expect(spec.safety).toEqual({ maxRestarts: 2, restartWindowMs: 300_000, maxBlockedMs: 1_800_000, maxHeldMs: 3_600_000, heartbeatIntervalMs: 30_000 });
    // A partial safety section keeps the other defaults.
    expect(AgentSpecSchema.parse({ agentId: 'a', task: 't', ...specFromConfig(parseConfig('safety:\n  max_restarts: 1\n')) }).safety).toMatchObject({
      maxRestarts: 1,
      restartWindowMs: 60_000,
      maxHeldMs: 14_400_000,
    });
  });

  test.each([
    ['budgets:\n  turn: 3\n', 'budgets: Unrecognized key: "turn"'],
    ['budgets:\n  costUsd: 3\n', 'budgets: Unrecognized key: "costUsd"'],
    ['budgets:\n  turns: three\n', 'budgets.turns: Invalid input: expected number, received string'],
    ['budgets:\n  turns: 0\n', 'budgets.turns: must be above 0'],
    ['budgets:\n  tokens: 1.5\n', 'budgets.tokens: must be a whole number'],
    ['budgets:\n  cost_usd: -1\n', 'budgets.cost_usd: must be above 0'],
    ['budgets:\n  wall_clock: 2 days\n', 'budgets.wall_clock'],
    ['budgets:\n  wall_clock: 0\n', 'budgets.wall_clock: must be above 0'],
    ['budgets: 5\n', 'budgets: Invalid input: expected object, received number'],
    ['safety:\n  max_blocked: 10ms\n', 'safety.max_blocked: at least 1s'],
    ['safety:\n  hold_token: abcdefabcdefabcdef\n', 'safety: Unrecognized key: "hold_token"'],
    ['safety:\n  max_restarts: many\n', 'safety.max_restarts: Invalid input: expected number, received string'],
  ])('%j is a ConfigError naming the key path', (yaml, message) => {
    expect(() => parseConfig(yaml, 'warden.yaml')).toThrow(ConfigError);
    expect(() => parseConfig(yaml, 'warden.yaml')).toThrow(`warden.yaml: ${message}`);
  });

  test('warden start --config: the file budgets and safety, each budget flag over the file', () => {
    const file = join(scratch, 'start.yaml');
    writeFileSync(file, YAML);
    const spec = AgentSpecSchema.parse(buildSpec('a', { task: 't', config: file, budgetTurns: 500, budgetCostUsd: 1 }));
    expect(spec.budgets).toEqual({ tokens: 2_000_000, costUsd: 1, turns: 500, wallClockMs: 7_200_000 });
    expect(spec.safety.maxRestarts).toBe(2);
  });
});

describe('a project file may only tighten budgets', () => {
  test('capBudgets: a lower budget, or one the user has not set, is taken; a higher one is ignored naming the cap', () => {
    const base = parseConfig('budgets:\n  turns: 20\n  cost_usd: 5\n').budgets;
    const r = capBudgets(parseConfig('budgets:\n  turns: 10\n  cost_usd: 500\n  tokens: 1000\n  wall_clock: 1h\n').budgets, base);
    expect(r.budgets).toEqual({ turns: 10, cost_usd: 5, tokens: 1000, wall_clock: 3_600_000 });
    expect(r.taken).toEqual(['budgets.tokens', 'budgets.turns', 'budgets.wall_clock']);
    expect(r.ignored).toEqual(['budgets.cost_usd ($500 would lift your cap of $5)']);
    expect(capBudgets(undefined, base)).toEqual({ budgets: base, taken: [], ignored: [] });
    expect(capBudgets(undefined, undefined)).toEqual({ budgets: undefined, taken: [], ignored: [] });
  });

  test("mergeUntrusted: the user's budgets are a ceiling; safety from an untrusted file is ignored as a whole", () => {
    const base = parseConfig('budgets:\n  turns: 20\n  wall_clock: 1h\n');
    const m = mergeUntrusted(parseConfig('budgets:\n  turns: 100000\n  wall_clock: 30m\nsafety:\n  max_restarts: 100\n  max_held: 24h\n'), base);
    expect(m.cfg).toEqual({ budgets: { turns: 20, wall_clock: 1_800_000 } });
    expect(m.taken).toEqual(['budgets.wall_clock']);
    expect(m.ignored).toEqual(['budgets.turns (100000 turns would lift your cap of 20 turns)', 'safety']);
    // Over no user config, a project's budget is a new cap: taken.
    expect(mergeUntrusted(parseConfig('budgets:\n  tokens: 5000\n'), null).cfg).toEqual({ budgets: { tokens: 5000 } });
  });

  test('sessionConfig: neither an untrusted nor a trusted project lifts the user cap; safety only when trusted', () => {
    const env = { HOME: join(scratch, 'home'), XDG_CONFIG_HOME: join(scratch, 'xdg') };
    mkdirSync(join(scratch, 'xdg', 'warden'), { recursive: true });
    writeFileSync(join(scratch, 'xdg', 'warden', 'warden.yaml'), 'budgets:\n  turns: 20\n  cost_usd: 5\n');
    const project = join(scratch, 'repo');
    mkdirSync(project, { recursive: true });
    const text = 'budgets:\n  turns: 100000\n  tokens: 9000\nsafety:\n  max_restarts: 0\n';
    writeFileSync(join(project, 'warden.yaml'), text);

    const untrusted = sessionConfig(project, env);
    expect(untrusted.cfg).toEqual({ budgets: { turns: 20, cost_usd: 5, tokens: 9000 } });
    expect(untrusted.untrusted?.ignored).toEqual(['budgets.turns (100000 turns would lift your cap of 20 turns)', 'safety']);

    writeTrustStore(withTrusted([], project, configDigest(text)), env);
    const trusted = sessionConfig(project, env);
    expect(trusted.untrusted).toBeUndefined();
    expect(trusted.cfg).toEqual({ budgets: { turns: 20, cost_usd: 5, tokens: 9000 }, safety: { max_restarts: 0 } });
    expect(describeConfig(parseConfig(text))).toContain('safety.max_restarts: 0');

    // A trusted file that sets no budgets keeps the user's.
    writeFileSync(join(project, 'warden.yaml'), 'supervisor:\n  eval_interval: 2\n');
    writeTrustStore(withTrusted([], project, configDigest('supervisor:\n  eval_interval: 2\n')), env);
    expect(sessionConfig(project, env).cfg).toEqual({ supervisor: { eval_interval: 2 }, budgets: { turns: 20, cost_usd: 5 } });
  });

  test("planSession: a hooked session's agent starts with the user's budgets and safety", () => {
    const xdg = join(scratch, 'xdg-plan');
    mkdirSync(join(xdg, 'warden'), { recursive: true });
    writeFileSync(join(xdg, 'warden', 'warden.yaml'), 'budgets:\n  turns: 2\n  wall_clock: 2h\nsafety:\n  heartbeat_interval: 1m\n');
    const dir = join(scratch, 'plain');
    mkdirSync(dir, { recursive: true });
    const plan = planSession(
      'claude',
      { hook_event_name: 'UserPromptSubmit', session_id: '0b9e5f1c-6a3d-4c1e-9f0a-2d8c7e6b5a41', cwd: dir, prompt: 'Fix it.' },
      { HOME: join(scratch, 'home'), XDG_CONFIG_HOME: xdg },
      dir,
      dir,
    );
    expect(plan.spec.budgets).toEqual({ turns: 2, wallClockMs: 7_200_000 });
    expect(AgentSpecSchema.parse(plan.spec).safety.heartbeatIntervalMs).toBe(60_000);
  });
});

test('one budget, three spellings: every spec budget has its flag and its config key, and the docs table names all three', () => {
  const NAMES: Record<string, [flag: string, key: string]> = {
    tokens: ['--budget-tokens', 'tokens'],
    costUsd: ['--budget-cost-usd', 'cost_usd'],
    turns: ['--budget-turns', 'turns'],
    wallClockMs: ['--budget-wall-clock', 'wall_clock'],
    warnAt: ['--budget-warn-at', 'warn_at'],
  };
  expect(Object.keys(BudgetsSchema.shape).sort()).toEqual(Object.keys(NAMES).sort());
  expect(Object.keys(BudgetsFile.shape).sort()).toEqual(
    Object.values(NAMES)
      .map(([, k]) => k)
      .sort(),
  );
  const flags = buildProgram('start')
    .commands.find((c) => c.name() === 'start')!
    .options.map((o) => o.long);
  const table = readFileSync(join(import.meta.dirname, '../../docs/using/safety-rails.md'), 'utf8');
  for (const [field, [flag, key]] of Object.entries(NAMES)) {
    expect(flags).toContain(flag);
    expect(table).toMatch(new RegExp(`\\| \`${flag} [^|]*\` \\| \`budgets\\.${key}: [^|]*\` \\| \`budgets\\.${field}\` \\|`));
  }
});
