/**
 * Action-link tokens: what lets a human resume, abort, dismiss, steer or pause an agent from a link in a
 * notification, without a terminal. A token is signed with HMAC-SHA256 under a secret only the
 * operator holds (WARDEN_LINK_SECRET, read by the processes that issue links and by `warden serve`),
 * and binds:
 *
 *   - the agent id (a token for one agent does nothing to another),
 *   - the action (resume, abort, dismiss, steer or pause),
 *   - a random token id (the agent's workflow records the ids it acted on and refuses a replay),
 *   - an expiry (unix seconds; one hour by default),
 *   - the escalation it answers: its number (status's `escalations` count; 0 for a link of another
 *     alert) and the short id of its finding (src/domain/judgement/finding.ts findingId; `-` for
 *     none). The agent refuses a link whose escalation it no longer waits on, and shows no agent
 *     text in a URL: `warden serve` asks the agent for the finding to show.
 *
 * Format: `w2.<agentId, base64url>.<action>.<tokenId>.<expiry>.<escalation>.<finding>.<signature,
 * base64url>`, the signature covering everything before it. Tokens of the first format (`w1.`, not
 * bound to an escalation) are refused as outdated. The link itself is
 * `<base>/agents/<agentId>/<action>?token=<token>`: it carries no credential but the token.
 *
 * Pure apart from node:crypto: issue, parse and verify are plain functions; verification compares
 * signatures with `timingSafeEqual` and names why it refused (malformed, tampered, expired, wrong
 * agent, wrong action).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const LINK_ACTIONS = ['resume', 'abort', 'dismiss', 'steer', 'pause'] as const;
export type LinkAction = (typeof LINK_ACTIONS)[number];
export const isLinkAction = (x: string): x is LinkAction => (LINK_ACTIONS as readonly string[]).includes(x);

export const TOKEN_VERSION = 'w2';
/** The format before tokens named their escalation: refused as outdated. */
export const OUTDATED_TOKEN_VERSIONS = ['w1'];
/** A finding id (16 hex characters), or `-` in a token for none. */
export const FINDING_ID_RE = /^[0-9a-f]{16}$/;
/** Token ids: 16 random bytes, base64url (22 characters). */
export const TOKEN_ID_RE = /^[A-Za-z0-9_-]{22}$/;
/** Agent ids as warden accepts them (src/domain/contract/schemas.ts AGENT_ID_RE). */
const AGENT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** A token is at most this long (a 100-character agent id gives ~240). */
export const MAX_TOKEN_LENGTH = 512;
/** The secret must have at least this many characters (e.g. `openssl rand -hex 32` gives 64). */
export const MIN_SECRET_LENGTH = 32;

export interface TokenClaims {
  agentId: string;
  action: LinkAction;
  tokenId: string;
  /** Unix seconds after which the token is refused. */
  expiresAt: number;
  /** The escalation the link answers (its number; 0: a link of another alert). */
  escalation: number;
  /** The id of that escalation's finding, or null. */
  finding: string | null;
}

export type RefusalReason = 'malformed' | 'outdated' | 'tampered' | 'expired' | 'wrong-agent' | 'wrong-action';
export type VerifyResult = { ok: true; claims: TokenClaims } | { ok: false; reason: RefusalReason; message: string };

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(`warden-link|${body}`).digest('base64url');
}

/** A new random token id. */
export const newTokenId = (): string => randomBytes(16).toString('base64url');

/** Why this secret cannot sign links, or null. */
export function secretProblem(secret: string | undefined): string | null {
  if (secret === undefined || secret === '') return 'WARDEN_LINK_SECRET is not set';
  if (secret.length < MIN_SECRET_LENGTH) return `WARDEN_LINK_SECRET is too short: at least ${MIN_SECRET_LENGTH} characters (e.g. \`openssl rand -hex 32\`)`;
  return null;
}

/** Sign a token for `claims`. Throws on claims that could never verify (a bug in the caller). */
export function issueToken(secret: string, claims: TokenClaims): string {
  const problem = secretProblem(secret);
  if (problem) throw new Error(problem);
  if (!AGENT_ID_RE.test(claims.agentId)) throw new Error(`agentId: not a warden agent id: ${JSON.stringify(claims.agentId.slice(0, 100))}`);
  if (!isLinkAction(claims.action)) throw new Error(`action: one of ${LINK_ACTIONS.join(', ')}`);
  if (!TOKEN_ID_RE.test(claims.tokenId)) throw new Error('tokenId: 22 base64url characters');
  if (!Number.isSafeInteger(claims.expiresAt) || claims.expiresAt <= 0) throw new Error('expiresAt: unix seconds');
  if (!Number.isSafeInteger(claims.escalation) || claims.escalation < 0 || claims.escalation > 999_999_999)
    throw new Error('escalation: a whole number from 0 (0: not an escalation)');
  if (claims.finding !== null && !FINDING_ID_RE.test(claims.finding)) throw new Error('finding: 16 hex characters, or null');
  const body = [
    TOKEN_VERSION,
    b64url(claims.agentId),
    claims.action,
    claims.tokenId,
    String(claims.expiresAt),
    String(claims.escalation),
    claims.finding ?? '-',
  ].join('.');
  return `${body}.${sign(secret, body)}`;
}

/**
 * The claims a token states, unverified (for messages only; never act on them), or why it is not a
 * token at all.
 */
export function parseToken(
  token: unknown,
): { ok: true; claims: TokenClaims; body: string; signature: string } | { ok: false; message: string; outdated?: true } {
  if (typeof token !== 'string' || token === '') return { ok: false, message: 'no token in the link' };
  if (token.length > MAX_TOKEN_LENGTH) return { ok: false, message: `the token is longer than ${MAX_TOKEN_LENGTH} characters` };
  const parts = token.split('.');
  if (OUTDATED_TOKEN_VERSIONS.includes(parts[0]!))
    return {
      ok: false,
      outdated: true,
      message: 'this link comes from an older warden and does not say which escalation it answers: use the links of the newest notification, or the warden CLI',
    };
  if (parts.length !== 8) return { ok: false, message: 'the token does not have the eight parts of a warden link token' };
  const [version, agentB64, action, tokenId, expiry, escalation, finding, signature] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (version !== TOKEN_VERSION) return { ok: false, message: `unknown token version ${JSON.stringify(version.slice(0, 10))}` };
  if (!/^[A-Za-z0-9_-]+$/.test(agentB64)) return { ok: false, message: 'the agent part of the token is not base64url' };
  const agentId = Buffer.from(agentB64, 'base64url').toString('utf8');
  if (!AGENT_ID_RE.test(agentId) || b64url(agentId) !== agentB64) return { ok: false, message: 'the agent part of the token is not an agent id' };
  if (!isLinkAction(action)) return { ok: false, message: 'the action part of the token is not resume, abort, dismiss, steer or pause' };
  if (!TOKEN_ID_RE.test(tokenId)) return { ok: false, message: 'the id part of the token is not 22 base64url characters' };
  if (!/^[1-9][0-9]{0,14}$/.test(expiry)) return { ok: false, message: 'the expiry part of the token is not a time' };
  if (!/^(?:0|[1-9][0-9]{0,8})$/.test(escalation)) return { ok: false, message: 'the escalation part of the token is not a number' };
  if (finding !== '-' && !FINDING_ID_RE.test(finding)) return { ok: false, message: 'the finding part of the token is not 16 hex characters or -' };
  if (!/^[A-Za-z0-9_-]{43}$/.test(signature)) return { ok: false, message: 'the signature part of the token is not an HMAC-SHA256' };
  return {
    ok: true,
    claims: { agentId, action, tokenId, expiresAt: Number(expiry), escalation: Number(escalation), finding: finding === '-' ? null : finding },
    body: parts.slice(0, 7).join('.'),
    signature,
  };
}

/**
 * Verify a token for an action on an agent at `nowMs`. In this order: the token's shape
 * (malformed), its signature (tampered: nothing it says is believed before this), then what it
 * binds: the agent (wrong-agent), the action (wrong-action), the expiry (expired).
 */
export function verifyToken(secret: string, token: unknown, expect: { agentId: string; action: string }, nowMs: number): VerifyResult {
  const parsed = parseToken(token);
  if (!parsed.ok) return { ok: false, reason: parsed.outdated ? 'outdated' : 'malformed', message: parsed.message };
  const want = Buffer.from(sign(secret, parsed.body));
  const got = Buffer.from(parsed.signature);
  if (want.length !== got.length || !timingSafeEqual(want, got)) {
    return { ok: false, reason: 'tampered', message: 'the token was not signed by this warden (altered, or signed with another secret)' };
  }
  const { claims } = parsed;
  if (claims.agentId !== expect.agentId) return { ok: false, reason: 'wrong-agent', message: 'this link is for another agent' };
  if (claims.action !== expect.action)
    return { ok: false, reason: 'wrong-action', message: `this link is for ${claims.action}, not ${expect.action.slice(0, 20)}` };
  if (claims.expiresAt * 1000 <= nowMs)
    return { ok: false, reason: 'expired', message: `this link expired at ${new Date(claims.expiresAt * 1000).toISOString()}` };
  return { ok: true, claims };
}

/** The link for a token: `<base>/agents/<agentId>/<action>?token=<token>` (base: http(s), no query). */
export function linkUrl(baseUrl: string, claims: Pick<TokenClaims, 'agentId' | 'action'>, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/agents/${encodeURIComponent(claims.agentId)}/${claims.action}?token=${token}`;
}
