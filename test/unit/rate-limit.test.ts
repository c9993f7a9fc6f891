/** A rate-limited or overloaded model: recognised from what each driver reports; blocked, not failed. */
import { describe, expect, it } from 'vitest';
import { rateLimitOf } from '../../src/domain/agent/blocking.js';
import { retryAfterBlock, turnFailed, turnFinished, turnRateLimited } from '../helpers/driven.js';
import { classifyTurnFailure, RATE_LIMIT_BACKOFF, rateLimitBackoffMs, RATE_LIMITED_FAILURE, retryAfterHint } from '../../src/domain/agent/rate-limit.js';
import { T0, testAgent } from '../helpers/core.js';

describe('classifyTurnFailure', () => {
  it.each([
    // command driver: the documented exit code, or the stderr marker (with any exit).
    [
      { driver: 'command', exitCode: 75, text: 'busy' },
      { reason: 'model rate-limited (agent command exited 75)', retryAfterMs: null },
    ],
    [
      { driver: 'command', exitCode: 1, text: 'x\n{"rateLimited": {"retryAfterMs": 1500, "reason": "quota hit"}}\n' },
      { reason: 'quota hit', retryAfterMs: 1500 },
    ],
    [
      { driver: 'command', exitCode: 3, text: '{"rateLimited": true}' },
      { reason: 'model rate-limited', retryAfterMs: null },
    ],
    // codex: its error after its own retries, as the driver words it.
    [
      { driver: 'codex', text: 'codex exec exited with code 1 after 900 ms; codex: exceeded retry limit, last status: 429 Too Many Requests; stderr: …' },
      { reason: 'model rate-limited (429)', retryAfterMs: null },
    ],
    [
      { driver: 'codex', text: 'codex: stream error: Rate limit reached for gpt-5. Please try again in 2.5s.' },
      { reason: 'model rate-limited (429)', retryAfterMs: 2500 },
    ],
    // claude: the API error it prints on 429 / 529.
    [
      { driver: 'claude', text: 'claude reported an error (error): API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}' },
      { reason: 'model rate-limited (429)', retryAfterMs: null },
    ],
    [
      { driver: 'claude', text: 'claude exited with code 1: API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' },
      { reason: 'model overloaded (529)', retryAfterMs: null },
    ],
    [
      { driver: 'codex', text: 'unexpected status 429; retry-after: 20' },
      { reason: 'model rate-limited (429)', retryAfterMs: 20_000 },
    ],
    // codex's words for any HTTP 500 it gave up on (after its own retries; as codex 0.169 words it,
    // with a curly apostrophe), and for a full model.
    [
      {
        driver: 'codex',
        text: 'codex exec exited with code 1 after 306 ms; codex: We’re currently experiencing high demand, which may cause temporary errors. | We’re currently experiencing high demand, which may cause temporary errors.; stderr: WARNING: …',
      },
      { reason: 'model overloaded (high demand)', retryAfterMs: null },
    ],
    [
      { driver: 'codex', text: 'codex: Selected model is at capacity. Please try a different model.' },
      { reason: 'model overloaded (high demand)', retryAfterMs: null },
    ],
    // An HTTP 500 or 503 whose body says overloaded: not a 529, so the reason does not claim one.
    [
      {
        driver: 'codex',
        text: 'unexpected status 500 Internal Server Error: {"error":{"message":"The server is overloaded, try again in 10s","type":"server_error"}}',
      },
      { reason: 'model overloaded', retryAfterMs: 10_000 },
    ],
    [
      { driver: 'command', exitCode: 1, text: 'upstream: 503 Service Unavailable (overloaded)' },
      { reason: 'model overloaded', retryAfterMs: null },
    ],
  ])('%j is a rate limit', (report, expected) => {
    expect(classifyTurnFailure(report)).toEqual(expected);
  });

  it.each([
    { driver: 'command', exitCode: 1, text: 'error TS2307: Cannot find module' },
    { driver: 'command', exitCode: 2, text: 'failed at line 429 of main.c' },
    { driver: 'codex', text: 'codex exec exited with code 1 after 10 ms; stderr: auth failed (401)' },
    { driver: 'claude', text: 'claude exited with code 75: something' }, // 75 means rate-limited for the command driver only
    { driver: 'command', exitCode: 1, text: '{"rateLimited": false}' },
    // A server error without words of load (from a command driver or a proxy; codex never words a 500 so) stays a failure.
    { driver: 'command', exitCode: 1, text: 'unexpected status 500 Internal Server Error: {"error":{"message":"UNIQUE-SERVER-ERROR","type":"server_error"}}' },
    { driver: 'codex', text: 'stream error: demand for a higher quota was refused (400)' },
  ])('%j is an ordinary failure', (report) => {
    expect(classifyTurnFailure(report)).toBeNull();
  });

  it('reads a retry hint in ms, s and minutes', () => {
    expect(retryAfterHint('Retry-After: 1500ms')).toBe(1500);
    expect(retryAfterHint('try again in 3 seconds')).toBe(3000);
    expect(retryAfterHint('retry after 2m')).toBe(120_000);
    expect(retryAfterHint('no hint')).toBeNull();
  });
});

describe('rateLimitBackoffMs: capped, jittered, deterministic', () => {
  it('doubles from 2 s with up to +25% jitter, never past 5 min, at least the hint', () => {
    for (let attempt = 1; attempt <= 12; attempt++) {
      const ms = rateLimitBackoffMs(attempt, null, `a:${attempt}`);
      const base = Math.min(RATE_LIMIT_BACKOFF.maxMs, RATE_LIMIT_BACKOFF.initialMs * 2 ** (attempt - 1));
      expect(ms).toBeGreaterThanOrEqual(base);
      expect(ms).toBeLessThanOrEqual(Math.min(RATE_LIMIT_BACKOFF.maxMs, base * 1.25));
      expect(rateLimitBackoffMs(attempt, null, `a:${attempt}`)).toBe(ms); // the same key waits the same
    }
    expect(rateLimitBackoffMs(20, null, 'x')).toBe(RATE_LIMIT_BACKOFF.maxMs);
    expect(rateLimitBackoffMs(1, 60_000, 'x')).toBeGreaterThanOrEqual(60_000);
    expect(rateLimitBackoffMs(1, 3_600_000, 'x')).toBe(RATE_LIMIT_BACKOFF.maxMs);
    // Different agents limited at once spread out.
    const spread = new Set(['a', 'b', 'c', 'd', 'e'].map((k) => rateLimitBackoffMs(3, null, k)));
    expect(spread.size).toBeGreaterThan(1);
  });
});

describe('a rate-limited turn blocks the agent instead of counting against restart intensity', () => {
  const whispers = [{ id: 'w1', type: 'CORRECTION' as const, text: 'x', createdAt: 'now' }];
  const limit = { reason: 'model rate-limited (429)', retryAfterMs: null };

  it('reads the activity failure: only the rate-limit type counts', () => {
    expect(rateLimitOf({ type: RATE_LIMITED_FAILURE, details: [{ reason: 'model overloaded (529)', retryAfterMs: 5 }] })).toEqual({
      reason: 'model overloaded (529)',
      retryAfterMs: 5,
    });
    expect(rateLimitOf({ type: RATE_LIMITED_FAILURE })).toEqual({ reason: 'model rate-limited', retryAfterMs: null });
    expect(rateLimitOf({ type: 'TurnProtocolError' })).toBeNull();
    expect(rateLimitOf(undefined)).toBeNull();
  });

  it('running → blocked (reason and retry time) → running; twenty in a row never open the circuit', () => {
    const a = testAgent({ safety: { maxRestarts: 3, restartWindowMs: 60_000 }, driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    a.core.s.state = 'running';
    const waits: number[] = [];
    for (let i = 1; i <= 20; i++) {
      const wait = turnRateLimited(a, { turnNumber: 1, whispers, cause: 'agent command exited with code 75', limit })!;
      expect(a.core.s.state).toBe('blocked');
      const at = new Date(a.clock.now + wait).toISOString().slice(11, 19);
      expect(a.core.s.stateReason).toBe(`model rate-limited (429); retrying at ${at} UTC (attempt ${i})`);
      waits.push(wait);
      a.clock.advance(wait);
      retryAfterBlock(a);
      expect(a.core.s.state).toBe('running');
    }
    expect(waits[1]!).toBeGreaterThan(waits[0]!);
    expect(Math.max(...waits)).toBe(RATE_LIMIT_BACKOFF.maxMs);
    expect(a.core.s.failures).toEqual([]);
    expect(a.core.s.consecutiveFailures).toBe(0);
    expect(a.core.s.retryWhispers).toEqual(whispers); // the retry gets the same input
    expect(a.core.s.transitions.slice(-2).map((t) => `${t.from}->${t.to} (${t.event})`)).toEqual(['running->blocked (block)', 'blocked->running (unblock)']);
    // An ordinary failure afterwards still counts from zero.
    expect(turnFailed(a, { turnNumber: 1, whispers, cause: 'exit 1', protocolError: false })).toBe(1000);
  });

  it('a finished turn resets the backoff', () => {
    const a = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    a.core.s.state = 'running';
    turnRateLimited(a, { turnNumber: 1, whispers: [], cause: 'c', limit });
    a.clock.advance(60_000);
    retryAfterBlock(a);
    const second = turnRateLimited(a, { turnNumber: 1, whispers: [], cause: 'c', limit })!;
    expect(second).toBeGreaterThanOrEqual(4_000);
    retryAfterBlock(a);
    turnFinished(a, { turn: { id: 't1', text: 'ok' }, session: null, done: false }, 1);
    expect(turnRateLimited(a, { turnNumber: 2, whispers: [], cause: 'c', limit })!).toBeLessThan(4_000);
  });

  it('a human acting meanwhile wins: paused or stopped agents are not blocked, and the retry waits for them', () => {
    const a = testAgent({ driver: { kind: 'scripted', turns: [{ text: 'x' }] } });
    a.core.s.state = 'paused-by-user';
    expect(turnRateLimited(a, { turnNumber: 1, whispers, cause: 'c', limit })).toBeNull();
    expect(a.core.s.state).toBe('paused-by-user');
    expect(a.core.s.refused).toEqual([]);
    expect(a.core.s.retryWhispers).toEqual(whispers);
    retryAfterBlock(a);
    expect(a.core.s.state).toBe('paused-by-user');
    expect(T0).toBeGreaterThan(0);
  });
});
