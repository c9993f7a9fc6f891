/** The web console's pure parts: tokens and roles, the session cookie and CSRF, the fleet's groups, the timeline, escaping. */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { csrfFor, csrfOk, loginCookie, overHttps, parseCookies, sameOrigin, sessionToken, withoutToken } from '../../src/serve/console/auth.js';
import { fleetRows } from '../../src/serve/console/fleet.js';
import { agentPage, fleetPage, CONSOLE_HEADERS } from '../../src/serve/console/html.js';
import { raiseFromForm } from '../../src/serve/console/actions.js';
import { agentTimeline, CONSOLE_TIMELINE, type AgentTimeline } from '../../src/timeline/agent-timeline.js';
import { consoleTokenFile, ensureConsoleTokens, readConsoleTokens, roleOf, rotateConsoleTokens, tokenStore } from '../../src/serve/console/tokens.js';
import { arrange, buildRow, DEFAULT_ROW_OPTIONS, type RosterEntry } from '../../src/roster/rows.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';

const homes: string[] = [];
const home = () => {
  const h = mkdtempSync(join(tmpdir(), 'warden-console-unit-'));
  homes.push(h);
  return { WARDEN_HOME: h };
};
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

describe('console tokens', () => {
  test('created once, 0600, two distinct roles; rotation replaces both and the store sees it', () => {
    const env = home();
    const { tokens, created } = ensureConsoleTokens(env);
    expect(created).toBe(true);
    expect(tokens.operator).toMatch(/^[0-9a-f]{64}$/);
    expect(tokens.readonly).not.toBe(tokens.operator);
    expect(statSync(consoleTokenFile(env)).mode & 0o777).toBe(0o600);
    expect(ensureConsoleTokens(env)).toEqual({ tokens, created: false });
    expect(roleOf(tokens, tokens.operator)).toBe('operator');
    expect(roleOf(tokens, tokens.readonly)).toBe('readonly');
    expect(roleOf(tokens, 'f'.repeat(64))).toBeNull();
    expect(roleOf(tokens, undefined)).toBeNull();
    expect(roleOf(null, tokens.operator)).toBeNull();

    const store = tokenStore(env);
    expect(store()).toEqual(tokens);
    const next = rotateConsoleTokens(env);
    expect(next.operator).not.toBe(tokens.operator);
    expect(store()).toEqual(next);
    expect(roleOf(store(), tokens.operator)).toBeNull();
  });

  test('a file that is not what warden writes is no tokens (and is replaced by ensure)', () => {
    const env = home();
    writeFileSync(consoleTokenFile(env), JSON.stringify({ operator: 'x', readonly: 'y' }));
    expect(readConsoleTokens(env)).toBeNull();
    expect(tokenStore(env)()).toBeNull();
    expect(ensureConsoleTokens(env).created).toBe(true);
  });
});

describe('console sessions', () => {
  const t = 'a'.repeat(64);
  test('the login cookie is HttpOnly, SameSite=Strict, scoped to /console; the session reads it back', () => {
    expect(loginCookie(t)).toBe(`warden_console=${t}; Path=/console; HttpOnly; SameSite=Strict`);
    expect(sessionToken({ cookie: `other=1; warden_console=${t}; x=y` })).toBe(t);
    expect(parseCookies(`a=1; a=2`).get('a')).toBe('1');
    expect(sessionToken({})).toBeNull();
  });
  test('over HTTPS (TLS, or a reverse proxy saying so) the login cookie is Secure too', () => {
    expect(loginCookie(t, true)).toBe(`warden_console=${t}; Path=/console; HttpOnly; SameSite=Strict; Secure`);
    expect(overHttps({ 'x-forwarded-proto': 'https' })).toBe(true);
    expect(overHttps({ 'x-forwarded-proto': 'HTTPS, http' })).toBe(true);
    expect(overHttps({ 'x-forwarded-proto': 'http' })).toBe(false);
    expect(overHttps({})).toBe(false);
    expect(overHttps({}, true)).toBe(true);
  });
  test('CSRF is bound to the session token', () => {
    expect(csrfOk(t, csrfFor(t))).toBe(true);
    expect(csrfOk(t, csrfFor('b'.repeat(64)))).toBe(false);
    expect(csrfOk(t, '')).toBe(false);
    expect(csrfOk(t, null)).toBe(false);
  });
  test('another site, or an opaque origin, is not this console', () => {
    expect(sameOrigin({ host: '127.0.0.1:8788', origin: 'http://127.0.0.1:8788', 'sec-fetch-site': 'same-origin' })).toBe(true);
    expect(sameOrigin({ host: '127.0.0.1:8788' })).toBe(true);
    expect(sameOrigin({ host: '127.0.0.1:8788', origin: 'http://evil.example' })).toBe(false);
    expect(sameOrigin({ host: '127.0.0.1:8788', origin: 'null' })).toBe(false);
    expect(sameOrigin({ host: '127.0.0.1:8788', 'sec-fetch-site': 'cross-site' })).toBe(false);
  });
  test('a login redirects to the address without its token', () => {
    expect(withoutToken(new URL('http://h/console?token=abc'))).toBe('/console');
    expect(withoutToken(new URL('http://h/console/agents/a?x=1&token=abc'))).toBe('/console/agents/a?x=1');
  });
});

const entry = (agentId: string, state: string, extra: Partial<RosterEntry> = {}): RosterEntry => ({
  agentId,
  workflowId: `agent-${agentId}`,
  runId: 'r',
  status: 'RUNNING',
  state,
  parent: null,
  escalationStep: 0,
  paused: false,
  costUsd: 0,
  tokens: 0,
  evaluatorCostUsd: 0,
  startTime: '2026-01-01T00:00:00.000Z',
  closeTime: null,
  ...extra,
});

describe('fleet rows', () => {
  test("top's order, each tree in its loudest member's group", () => {
    const o = { ...DEFAULT_ROW_OPTIONS, nowMs: Date.parse('2026-01-01T01:00:00Z') };
    const rows = arrange(
      [
        entry('a-running', 'running'),
        entry('b-done', 'done', { status: 'COMPLETED', closeTime: '2026-01-01T00:30:00.000Z' }),
        entry('c-boss', 'running'),
        entry('c-boss.kid', 'awaiting-input', { parent: 'c-boss' }),
        entry('d-flagged', 'running', { escalationStep: 2 }),
      ].map((e) => buildRow(e, null, null, o)),
    );
    const f = fleetRows(rows, o.nowMs);
    expect(f.map((r) => [r.agentId, r.group, r.depth])).toEqual([
      ['c-boss', 'awaiting-input', 0],
      ['c-boss.kid', 'awaiting-input', 1],
      ['d-flagged', 'flagged', 0],
      ['a-running', 'normal', 0],
      ['b-done', 'finished', 0],
    ]);
    expect(f[0]!.age).toBe('1h00m');
  });
  test('each row carries what supervising it cost, and that per agent-hour', () => {
    const o = { ...DEFAULT_ROW_OPTIONS, nowMs: Date.parse('2026-01-01T02:00:00Z') };
    const [r] = fleetRows([buildRow(entry('a', 'running', { evaluatorCostUsd: 0.5 }), null, null, o)], o.nowMs);
    expect(r).toMatchObject({ supervisionUsd: 0.5, supervision: '$0.500', supervisionRate: '$0.250/h' });
    const [old] = fleetRows([buildRow(entry('b', 'running', { evaluatorCostUsd: null }), null, null, o)], o.nowMs);
    expect(old).toMatchObject({ supervisionUsd: null, supervision: '—', supervisionRate: '—' });
  });
  test("a row not queried yet says what the agent does from the memo's task; its status, once read, wins", () => {
    const o = { ...DEFAULT_ROW_OPTIONS, nowMs: Date.parse('2026-01-01T02:00:00Z') };
    expect(buildRow(entry('a', 'running', { task: 'make the build pass' }), null, null, o).intent).toBe('make the build pass');
    expect(buildRow(entry('a', 'running', { task: 'make the build pass' }), null, 'Supervising a: from describe', o).intent).toBe(
      'Supervising a: from describe',
    );
    expect(buildRow(entry('b', 'running'), null, null, o).intent).toBeNull();
  });
});

const status = (over: Partial<AgentStatus> = {}): AgentStatus =>
  ({
    agentId: 'x',
    state: 'awaiting-input',
    stateReason: 'escalated <b>',
    task: 'Do <script>alert(1)</script>',
    escalationStep: 3,
    escalationThreshold: 3,
    escalations: 1,
    evaluations: { total: 3, ok: 0, flagged: 3, skipped: 0 },
    whispersDelivered: 2,
    pendingWhispers: 0,
    turns: 2,
    tokens: { in: 1, out: 1, total: 2 },
    costUsd: 0.01,
    budgets: { tokens: { used: 2, limit: null } },
    evaluatorSpend: { calls: 0, failed: 0, tokens: { in: 0, out: 0, total: 0 }, costUsd: 0, decided: { heuristic: 3, model: 0 } },
    transitions: [{ from: 'running', to: 'awaiting-input', event: 'escalate', cause: 'spiral', at: '2026-01-01T00:00:03Z' }],
    refused: [],
    lastVerdict: null,
    lastDismissal: null,
    lastVerification: null,
    lastCompaction: null,
    parent: null,
    children: [],
    ...over,
  }) as AgentStatus;

describe('timeline and pages', () => {
  test('the page: entries newest first, the escalation with its evidence turns, the decision, the turns; escaped', () => {
    const s = status();
    const t = agentTimeline(
      {
        status: s,
        cases: {
          agentId: 'x',
          task: '',
          cases: [
            {
              seq: 1,
              at: '2026-01-01T00:00:02Z',
              verdict: { kind: 'ESCALATION', pattern: 'SPIRALING', message: 'same call', evidence: [2] },
              signature: 's',
              reason: 'interval',
              turns: [{ text: 'one' }, { text: 'two <img src=x onerror=alert(1)>' }],
              evidenceFrom: 1,
              firstTurnNumber: 1,
              escalated: true,
              decision: { kind: 'resumed', at: '2026-01-01T00:00:04Z', note: null },
            },
          ],
        },
        window: [{ text: 'latest', at: '2026-01-01T00:00:01Z' }],
        pendingWhispers: [],
      },
      CONSOLE_TIMELINE,
    );
    const verdict = t.entries.find((x) => x.kind === 'verdict');
    expect(verdict?.kind === 'verdict' && verdict.turns!.map((x) => [x.number, x.evidence])).toEqual([
      [1, false],
      [2, true],
    ]);
    const html = agentPage(s, t, { role: 'operator', csrf: 'C' });
    const kinds = [...html.matchAll(/<li class="k-([a-z]+)"/g)].map((m) => m[1]);
    expect(kinds).toEqual(['decision', 'state', 'escalation', 'turn']);
    expect(html).not.toMatch(/<script>alert|<img src=x|<b>/);
    expect(html).toContain('Do &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('two &lt;img src=x onerror=alert(1)&gt;');
    expect(html.match(/name="csrf" value="C"/g)).toHaveLength(6);
    const ro = agentPage(s, t, { role: 'readonly', csrf: 'C' });
    expect(ro).not.toContain('<form');
    expect(ro).not.toContain('csrf');
  });
  test("the agent page's facts say what supervision cost, and per agent-hour", () => {
    const EMPTY: AgentTimeline = { agentId: 'x', state: 'running', entries: [], recentTurns: [], note: '', truncated: [] };
    const spend = { calls: 4, failed: 0, tokens: { in: 2800, out: 36, total: 2836 }, costUsd: 0.0168, decided: { heuristic: 0, model: 4 } };
    const html = agentPage(status({ evaluatorSpend: spend, supervision: { hours: 2, costUsdPerHour: 0.0084, tokensPerHour: 1418 } }), EMPTY, {
      role: 'readonly',
      csrf: 'C',
    });
    expect(html).toContain('<dt>supervision $</dt><dd id="supervision">$0.017, $0.008/h per agent-hour</dd>');
    // In its first minute there is no rate yet; an agent from an older version has no evaluator spend at all.
    expect(
      agentPage(status({ evaluatorSpend: spend, supervision: { hours: 0, costUsdPerHour: null, tokensPerHour: null } }), EMPTY, {
        role: 'readonly',
        csrf: 'C',
      }),
    ).toContain('<dd id="supervision">$0.017</dd>');
    expect(agentPage(status({ evaluatorSpend: undefined }), EMPTY, { role: 'readonly', csrf: 'C' })).not.toContain('supervision $');
  });
  test('the fleet page has the two supervision columns and a place for the fleet total', () => {
    const html = fleetPage('operator', 3000);
    expect(html).toContain('<th>spend</th><th>supervision $</th><th>$/agent-hour</th><th>age</th>');
    expect(html).toContain('<p id="totals" class="totals"></p>');
  });
  test('pages load only their own script and style; the policy allows nothing inline', () => {
    const html = fleetPage('operator', 3000);
    expect(html).toContain('<script src="/console/static/console.js" defer></script>');
    expect(html).not.toMatch(/<script>|<style>|\sstyle="|\son[a-z]+=/);
    expect(CONSOLE_HEADERS['content-security-policy']).toMatch(/script-src 'self'/);
    expect(CONSOLE_HEADERS['content-security-policy']).not.toMatch(/unsafe/);
  });
});

describe('the raise form', () => {
  const form = (o: Record<string, string>) => new URLSearchParams(o);
  test('blank fields are left alone; the others become new limits', () => {
    expect(raiseFromForm(form({ tokens: '', cost_usd: '20', turns: ' 7 ', wall_clock: '2h' }))).toEqual({
      ok: true,
      raise: { costUsd: 20, turns: 7, wallClockMs: 7_200_000 },
    });
    expect(raiseFromForm(form({ tokens: '500000', cost_usd: '7.50' }))).toEqual({ ok: true, raise: { tokens: 500_000, costUsd: 7.5 } });
  });
  test('a bad field is named; an empty form asks for one', () => {
    expect(raiseFromForm(form({ turns: '-3' }))).toEqual({ ok: false, message: 'turns: a whole number of at least 1' });
    expect(raiseFromForm(form({ tokens: '1e9' }))).toMatchObject({ ok: false, message: expect.stringMatching(/^tokens:/) });
    expect(raiseFromForm(form({ cost_usd: '0' }))).toMatchObject({ ok: false, message: expect.stringMatching(/^cost_usd:/) });
    expect(raiseFromForm(form({ wall_clock: 'soon' }))).toMatchObject({ ok: false, message: expect.stringMatching(/^wall_clock:/) });
    expect(raiseFromForm(form({}))).toMatchObject({ ok: false, message: expect.stringMatching(/at least one new limit/) });
  });
});
