import { describe, expect, test } from 'vitest';
import { REPLY_LIMITS, ReplyLimiter, IrcBotConfigSchema, isAllowed, parseIrcCommand, refusal, splitList, statusLine } from '../../src/domain/notify/irc.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { ircConfigFrom } from '../../src/cli/commands/irc.js';

describe('parseIrcCommand', () => {
  test("chatter and other bots' commands are ignored", () => {
    expect(parseIrcCommand('hello all')).toEqual({ kind: 'none' });
    expect(parseIrcCommand('!weather berlin')).toEqual({ kind: 'none' });
    expect(parseIrcCommand('status fixer')).toEqual({ kind: 'none' });
  });
  test('!help', () => {
    expect(parseIrcCommand('!help')).toEqual({ kind: 'help' });
  });
  test('each verb with its arguments', () => {
    expect(parseIrcCommand('!status fixer')).toEqual({ kind: 'command', command: { verb: 'status', agentId: 'fixer' } });
    expect(parseIrcCommand('  !resume fixer  looks fine now ')).toEqual({
      kind: 'command',
      command: { verb: 'resume', agentId: 'fixer', note: 'looks fine now' },
    });
    expect(parseIrcCommand('!resume fixer')).toEqual({ kind: 'command', command: { verb: 'resume', agentId: 'fixer' } });
    expect(parseIrcCommand('!abort fixer going in circles')).toEqual({
      kind: 'command',
      command: { verb: 'abort', agentId: 'fixer', reason: 'going in circles' },
    });
    expect(parseIrcCommand('!pause a.b-c_1')).toEqual({ kind: 'command', command: { verb: 'pause', agentId: 'a.b-c_1' } });
    expect(parseIrcCommand('!dismiss fixer flaky upstream')).toEqual({
      kind: 'command',
      command: { verb: 'dismiss', agentId: 'fixer', note: 'flaky upstream' },
    });
    expect(parseIrcCommand('!dismiss fixer')).toEqual({ kind: 'command', command: { verb: 'dismiss', agentId: 'fixer' } });
    expect(parseIrcCommand('!STEER fixer try the config module first')).toEqual({
      kind: 'command',
      command: { verb: 'steer', agentId: 'fixer', text: 'try the config module first' },
    });
  });
  test('bad arguments are errors that say what is wrong', () => {
    expect(parseIrcCommand('!resume')).toEqual({ kind: 'error', message: 'usage: !resume <agent>' });
    expect(parseIrcCommand('!steer fixer')).toEqual({ kind: 'error', message: 'usage: !steer fixer <text>' });
    const bad = parseIrcCommand('!abort ../etc');
    expect(bad.kind).toBe('error');
    expect(bad.kind === 'error' && bad.message).toMatch(/not an agent id/);
  });
});

describe('isAllowed', () => {
  const who = { nick: 'Alice', ident: 'alice', hostname: 'ops.example.net' };
  test('a plain entry matches the nick, case-insensitively', () => {
    expect(isAllowed(['alice'], who)).toBe(true);
    expect(isAllowed(['bob'], who)).toBe(false);
    expect(isAllowed([], who)).toBe(false);
  });
  test('a hostmask entry matches nick!user@host with wildcards', () => {
    expect(isAllowed(['*!*@ops.example.net'], who)).toBe(true);
    expect(isAllowed(['alice!alice@*.example.net'], who)).toBe(true);
    expect(isAllowed(['*!*@evil.example.net'], who)).toBe(false);
    expect(isAllowed(['alice!?lice@ops.example.net'], who)).toBe(true);
    // Regex characters in a mask are literal.
    expect(isAllowed(['alice!alice@ops.example.net'], { ...who, hostname: 'opsXexample.net' })).toBe(false);
  });
  test('the refusal is polite and names the verb', () => {
    expect(refusal('mallory', 'resume')).toMatch(/^mallory: sorry, you are not on this bot's allowlist, so I cannot resume agents/);
  });
});

describe('bot config', () => {
  test('flags, then env, validated with field names', () => {
    expect(ircConfigFrom({ server: '127.0.0.1', port: '6697', channel: '#alerts', allow: 'alice, bob' }, {})).toEqual({
      server: '127.0.0.1',
      port: 6697,
      tls: false,
      nick: 'warden',
      channel: '#alerts',
      allow: ['alice', 'bob'],
    });
    expect(ircConfigFrom({}, { WARDEN_IRC_SERVER: 'irc.example.net', WARDEN_IRC_CHANNEL: '#ops', WARDEN_IRC_NICK: 'wbot', WARDEN_IRC_TLS: '1' })).toMatchObject(
      {
        server: 'irc.example.net',
        port: 6667,
        tls: true,
        nick: 'wbot',
        channel: '#ops',
        allow: [],
      },
    );
    expect(() => ircConfigFrom({ channel: '#a' }, {})).toThrow(/--server/);
    expect(() => ircConfigFrom({ server: 'x' }, {})).toThrow(/--channel/);
    expect(() => ircConfigFrom({ server: 'x', channel: 'alerts' }, {})).toThrow(/channel: an IRC channel/);
    expect(() => ircConfigFrom({ server: 'x', channel: '#a', port: '70000' }, {})).toThrow(/port: 1-65535/);
    expect(() => ircConfigFrom({ server: 'x', channel: '#a', nick: '9lives' }, {})).toThrow(/nick:/);
    expect(() => ircConfigFrom({ server: 'x:6667', channel: '#a' }, {})).toThrow(/server: a host name/);
    expect(() => IrcBotConfigSchema.parse({ server: 'x', channel: '#a', allow: ['a b'] })).toThrow(/allow/);
  });
  test('splitList', () => {
    expect(splitList(' a,b ,,c d')).toEqual(['a', 'b', 'c', 'd']);
    expect(splitList(undefined)).toEqual([]);
  });
});

test('statusLine', () => {
  const s = {
    agentId: 'fixer',
    state: 'awaiting-input',
    paused: true,
    pauseReason: 'escalated: SPIRALING',
    escalationStep: 3,
    escalationThreshold: 3,
    turns: 15,
    evaluations: { total: 3, ok: 0, flagged: 3, skipped: 0 },
    lastVerdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'same failing build 5 times', at: '' },
    pendingWhispers: 1,
    costUsd: 0.15,
  } as unknown as AgentStatus;
  expect(statusLine(s)).toBe(
    'fixer is awaiting-input (escalated: SPIRALING) · step 3/3 · 15 turns · 3 evaluations (3 flagged) · last verdict CORRECTION SPIRALING: same failing build 5 times · 1 whispers pending · $0.15',
  );
});

test('reply limits: a stranger gets one reply a minute, and all strangers together one a minute', () => {
  const l = new ReplyLimiter(REPLY_LIMITS, 0);
  expect(l.take('mallory', false, 0)).toBe(true);
  // 49 more at once, and a minute less a bit: nothing.
  for (let i = 1; i < 50; i++) expect(l.take('mallory', false, i * 10)).toBe(false);
  expect(l.take('Mallory', false, 59_000)).toBe(false);
  // Another stranger (or mallory under a new nick) shares the strangers' minute.
  expect(l.take('eve', false, 30_000)).toBe(false);
  expect(l.take('mallory', false, 60_500)).toBe(true);
  expect(l.take('eve', false, 60_600)).toBe(false);
  expect(l.take('eve', false, 121_000)).toBe(true);
});

test('reply limits: an allowlisted nick gets a burst, then one reply per interval, never blocked by strangers', () => {
  const l = new ReplyLimiter(REPLY_LIMITS, 0);
  expect(l.take('mallory', false, 0)).toBe(true);
  for (let i = 0; i < REPLY_LIMITS.memberBurst; i++) expect(l.take('alice', true, 0)).toBe(true);
  expect(l.take('alice', true, 0)).toBe(false);
  expect(l.take('alice', true, REPLY_LIMITS.memberIntervalMs)).toBe(true);
  expect(l.take('alice', true, REPLY_LIMITS.memberIntervalMs + 1)).toBe(false);
  // The total bucket bounds everyone together.
  const t = new ReplyLimiter({ ...REPLY_LIMITS, memberBurst: 100, totalBurst: 3 }, 0);
  expect([1, 2, 3, 4].map(() => t.take('alice', true, 0))).toEqual([true, true, true, false]);
});
