/** Action-link tokens: issue, parse, verify (each refusal named), the link URL, and the links' configuration. */
import { describe, expect, it } from 'vitest';
import { baseUrlProblem, linkConfig, parseTtl } from '../../src/serve/config.js';
import { actionsFor, escalationClaims, issueLinks } from '../../src/serve/issue.js';
import { findingId, findingSignature } from '../../src/domain/judgement/finding.js';
import { issueToken, linkUrl, newTokenId, parseToken, secretProblem, verifyToken, type TokenClaims } from '../../src/serve/token.js';

const SECRET = 'a'.repeat(32) + '-test-secret';
const NOW = Date.parse('2026-11-25T01:00:00Z');
const claims: TokenClaims = {
  agentId: 'fixer.1',
  action: 'resume',
  tokenId: 'AAAAAAAAAAAAAAAAAAAAAA',
  expiresAt: NOW / 1000 + 3600,
  escalation: 2,
  finding: '0123456789abcdef',
};
const token = issueToken(SECRET, claims);
const want = { agentId: 'fixer.1', action: 'resume' };

describe('verifyToken', () => {
  it('accepts the token it issued, for its agent and action, before expiry', () => {
    expect(verifyToken(SECRET, token, want, NOW)).toEqual({ ok: true, claims });
    expect(verifyToken(SECRET, token, want, claims.expiresAt * 1000 - 1)).toMatchObject({ ok: true });
  });

  it('refuses an expired token (at the expiry second and after)', () => {
    expect(verifyToken(SECRET, token, want, claims.expiresAt * 1000)).toMatchObject({
      ok: false,
      reason: 'expired',
      message: expect.stringMatching(/expired at 2026-11-25T02:00:00/),
    });
  });

  it('refuses a token for another agent or another action', () => {
    expect(verifyToken(SECRET, token, { agentId: 'other', action: 'resume' }, NOW)).toMatchObject({ ok: false, reason: 'wrong-agent' });
    expect(verifyToken(SECRET, token, { agentId: 'fixer.1', action: 'abort' }, NOW)).toMatchObject({
      ok: false,
      reason: 'wrong-action',
      message: 'this link is for resume, not abort',
    });
  });

  it('refuses a tampered token: any part changed, or another secret', () => {
    const parts = token.split('.');
    const swap = (i: number, v: string) => parts.map((p, j) => (j === i ? v : p)).join('.');
    const cases = [
      swap(1, Buffer.from('victim').toString('base64url')), // another agent
      swap(2, 'abort'), // another action
      swap(3, 'BBBBBBBBBBBBBBBBBBBBBB'), // another id (a replay dodge)
      swap(4, String(claims.expiresAt + 86_400)), // a longer life
      swap(5, '3'), // a later escalation
      swap(6, 'fedcba9876543210'), // another finding
      swap(6, '-'), // no finding
      swap(7, parts[7]!.slice(0, -1) + (parts[7]!.endsWith('A') ? 'B' : 'A')), // the signature
      issueToken('b'.repeat(40), claims), // signed with another secret
    ];
    for (const t of cases)
      expect(
        verifyToken(SECRET, t, { agentId: parseToken(t).ok ? (parseToken(t) as { claims: TokenClaims }).claims.agentId : 'x', action: t.split('.')[2]! }, NOW),
      ).toMatchObject({ ok: false, reason: 'tampered' });
  });

  it('checks the signature before believing what the token says (a forged wrong-agent token is tampered, not wrong-agent)', () => {
    const forged = token.replace(token.split('.')[1]!, Buffer.from('someone').toString('base64url'));
    expect(verifyToken(SECRET, forged, want, NOW)).toMatchObject({ ok: false, reason: 'tampered' });
  });

  it.each([
    [undefined, /no token/],
    ['', /no token/],
    ['x'.repeat(600), /longer than 512/],
    ['a.b.c', /eight parts/],
    [token.replace(/^w2/, 'w3'), /unknown token version/],
    [token.replace(token.split('.')[1]!, 'Li4v'), /not an agent id/], // "../"
    [token.replace(token.split('.')[1]!, 'a+b'), /not base64url/],
    [token.replace('.resume.', '.delete.'), /not resume, abort, dismiss, steer or pause/],
    [token.replace(claims.tokenId, 'short'), /22 base64url/],
    [token.replace(`.${claims.expiresAt}.`, '.soon.'), /not a time/],
    [token.slice(0, -2), /not an HMAC-SHA256/],
    [token.replace('.2.0123456789abcdef.', '.two.0123456789abcdef.'), /escalation part/],
    [token.replace('.2.0123456789abcdef.', '.-1.0123456789abcdef.'), /escalation part/],
    [token.replace('.0123456789abcdef.', '.<script>.'), /finding part/],
  ])('refuses a malformed token (%#)', (t, why) => {
    const r = verifyToken(SECRET, t, want, NOW);
    expect(r).toMatchObject({ ok: false, reason: 'malformed' });
    expect((r as { message: string }).message).toMatch(why);
  });

  it('refuses a token of the first format (not bound to an escalation) as outdated, with a clear message', () => {
    const w1 = ['w1', Buffer.from('fixer.1').toString('base64url'), 'resume', claims.tokenId, String(claims.expiresAt), 'x'.repeat(43)].join('.');
    expect(verifyToken(SECRET, w1, want, NOW)).toMatchObject({ ok: false, reason: 'outdated', message: /older warden.*which escalation/ });
  });
});

describe('issueToken and links', () => {
  it('refuses a weak or missing secret and claims that could never verify', () => {
    expect(secretProblem(undefined)).toMatch(/not set/);
    expect(secretProblem('short')).toMatch(/at least 32/);
    expect(() => issueToken('short', claims)).toThrow(/at least 32/);
    expect(() => issueToken(SECRET, { ...claims, agentId: '../x' })).toThrow(/agentId/);
    expect(() => issueToken(SECRET, { ...claims, tokenId: 'x' })).toThrow(/tokenId/);
    expect(() => issueToken(SECRET, { ...claims, escalation: -1 })).toThrow(/escalation/);
    expect(() => issueToken(SECRET, { ...claims, finding: 'x' })).toThrow(/finding/);
  });

  it('token ids are random, 22 base64url characters', () => {
    const ids = new Set(Array.from({ length: 100 }, newTokenId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('a link carries the agent, the action and the token, nothing else', () => {
    expect(linkUrl('https://warden.example.com/base/', claims, token)).toBe(`https://warden.example.com/base/agents/fixer.1/resume?token=${token}`);
  });

  it('an escalation gets the four actions, each with its own token, all bound to that escalation and its finding; other alerts none', () => {
    const cfg = { secret: SECRET, baseUrl: 'https://w.example', ttlSeconds: 3600 };
    const verdict = { kind: 'ESCALATION' as const, pattern: 'SPIRALING' as const, message: 'retries `npm run build` <again>' };
    const links = issueLinks({ event: 'escalation', agentId: 'fixer.1', escalation: 3, verdict }, cfg, NOW)!;
    expect(Object.keys(links.actions).sort()).toEqual(['abort', 'dismiss', 'resume', 'steer']);
    expect(links.expiresAt).toBe('2026-11-25T02:00:00.000Z');
    const ids = new Set<string>();
    for (const [action, url] of Object.entries(links.actions)) {
      const u = new URL(url);
      expect(u.pathname).toBe(`/agents/fixer.1/${action}`);
      const v = verifyToken(SECRET, u.searchParams.get('token'), { agentId: 'fixer.1', action }, NOW);
      expect(v.ok).toBe(true);
      const c = (v as { claims: TokenClaims }).claims;
      expect(c).toMatchObject({ escalation: 3, finding: findingId(findingSignature(verdict)) });
      expect(url).not.toMatch(/npm|again|%3C|</); // no agent text in the link
      ids.add(c.tokenId);
    }
    expect(ids.size).toBe(4);
    for (const e of ['circuit-open', 'orphaned', 'mesh-ready', 'mesh-failed', 'mesh-awaiting-input']) {
      expect(actionsFor(e)).toEqual([]);
      expect(issueLinks({ event: e as 'orphaned', agentId: 'x' }, cfg, NOW)).toBeNull();
    }
    // A budget nearly spent: steer, pause or abort; a budget reached (the agent is paused): abort. Bound to no escalation.
    expect(actionsFor('budget-warning')).toEqual(['steer', 'pause', 'abort']);
    expect(actionsFor('budget-exhausted')).toEqual(['abort']);
    const warned = issueLinks({ event: 'budget-warning', agentId: 'x' }, cfg, NOW)!;
    const pause = verifyToken(SECRET, new URL(warned.actions.pause!).searchParams.get('token'), { agentId: 'x', action: 'pause' }, NOW);
    expect(pause).toMatchObject({ ok: true, claims: { action: 'pause', escalation: 0, finding: null } });
    // The agent's own CLI waiting for its human: links bound to no escalation.
    expect(escalationClaims({ event: 'awaiting-input' })).toEqual({ escalation: 0, finding: null });
    // An escalation that does not say its number (an older warden raised it) gets no links.
    expect(() => issueLinks({ event: 'escalation', agentId: 'fixer.1', verdict }, cfg, NOW)).toThrow(/does not say its number/);
  });

  it('finding ids are short, stable, and differ between findings', () => {
    expect(findingId('LOOP:retries the build')).toMatch(/^[0-9a-f]{16}$/);
    expect(findingId('LOOP:retries the build')).toBe(findingId('LOOP:retries the build'));
    expect(findingId('LOOP:retries the build')).not.toBe(findingId('LOOP:retries the tests'));
  });
});

describe('link configuration', () => {
  it('TTL: seconds or a unit, 1 minute to 7 days, default 1 hour', () => {
    expect(parseTtl(undefined)).toEqual({ ok: true, seconds: 3600 });
    expect(parseTtl('90s')).toEqual({ ok: true, seconds: 90 });
    expect(parseTtl('30m')).toEqual({ ok: true, seconds: 1800 });
    expect(parseTtl('2h')).toEqual({ ok: true, seconds: 7200 });
    expect(parseTtl('600')).toEqual({ ok: true, seconds: 600 });
    expect(parseTtl('10s')).toMatchObject({ ok: false, reason: /WARDEN_LINK_TTL: from 1 minute/ });
    expect(parseTtl('8d')).toMatchObject({ ok: false });
    expect(parseTtl('soon')).toMatchObject({ ok: false, reason: /not a duration/ });
  });

  it('base URL: http(s), no credentials, query, fragment or link-breaking characters', () => {
    expect(baseUrlProblem('https://warden.example.com/links')).toBeNull();
    expect(baseUrlProblem('ftp://x')).toMatch(/http/);
    expect(baseUrlProblem('https://u:p@x.example')).toMatch(/credentials/);
    expect(baseUrlProblem('https://x.example/?next=evil')).toMatch(/query/);
    expect(baseUrlProblem('https://x.example/#a')).toMatch(/fragment/);
    expect(baseUrlProblem('https://x.example/a|b')).toMatch(/must not contain/);
    expect(baseUrlProblem('nope')).toMatch(/not a URL/);
  });

  it('links are off without secret and base URL; a half or wrong configuration says why', () => {
    expect(linkConfig({})).toMatchObject({ ok: false, off: true });
    expect(linkConfig({ WARDEN_LINK_SECRET: SECRET })).toMatchObject({ ok: false, off: false, reason: /WARDEN_LINK_BASE_URL is not set/ });
    expect(linkConfig({ WARDEN_LINK_BASE_URL: 'https://x.example' })).toMatchObject({ ok: false, off: false, reason: /WARDEN_LINK_SECRET is not set/ });
    expect(linkConfig({ WARDEN_LINK_SECRET: SECRET, WARDEN_LINK_BASE_URL: 'https://x.example/', WARDEN_LINK_TTL: '15m' })).toEqual({
      ok: true,
      config: { secret: SECRET, baseUrl: 'https://x.example', ttlSeconds: 900 },
    });
  });
});
