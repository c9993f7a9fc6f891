/**
 * How the web console knows who is asking, pure:
 *
 *  - Login, Jupyter style: `/console…?token=<token>` (the address `warden serve` prints) sets an
 *    HttpOnly, SameSite=Strict cookie scoped to `/console` and redirects (303) to the same address
 *    without the token, so it leaves the address bar and the history's newest entry. Over HTTPS
 *    (a reverse proxy's X-Forwarded-Proto) the cookie is Secure too.
 *  - Every later request carries the cookie; its token's role (operator or read-only) is looked up
 *    in the current token file (tokens.ts), so a rotation logs everyone out.
 *  - Actions are POSTs with a CSRF field: an HMAC of the session's token, checked in constant time;
 *    a POST whose Origin (or Sec-Fetch-Site) says it came from another site is refused as well.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export const COOKIE_NAME = 'warden_console';
export const CONSOLE_PATH = '/console';

/** The cookies of a request (the first of a repeated name wins). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    if (name && !out.has(name)) out.set(name, part.slice(i + 1).trim());
  }
  return out;
}

/** The session token a request presents in its cookie, if any. */
export const sessionToken = (headers: IncomingHttpHeaders): string | null => parseCookies(headers.cookie).get(COOKIE_NAME) ?? null;

/**
 * Whether the browser reached the console over HTTPS: directly (a TLS socket) or through the
 * operator's reverse proxy, which says so in X-Forwarded-Proto. Trusting the header can only make
 * the cookie stricter (Secure), never weaker.
 */
export function overHttps(headers: IncomingHttpHeaders, encrypted = false): boolean {
  const proto = headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
  return encrypted || first === 'https';
}

/** The Set-Cookie header that logs a browser in with `token`; Secure when the console was reached over HTTPS. */
export function loginCookie(token: string, secure = false): string {
  return `${COOKIE_NAME}=${token}; Path=${CONSOLE_PATH}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie header that logs a browser out. */
export const logoutCookie = (): string => `${COOKIE_NAME}=; Path=${CONSOLE_PATH}; HttpOnly; SameSite=Strict; Max-Age=0`;

/** The CSRF value of a session: bound to its token (a rotation voids it), useless without it. */
export function csrfFor(token: string): string {
  return createHmac('sha256', token).update('warden-console-csrf').digest('base64url');
}

export function csrfOk(token: string, presented: string | null | undefined): boolean {
  if (typeof presented !== 'string') return false;
  const a = Buffer.from(csrfFor(token));
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether a POST may have come from the console's own pages: a browser that says where it came from
 * (Sec-Fetch-Site, Origin) must say this very origin. A client that says nothing (curl) still needs
 * the cookie and the CSRF field.
 */
export function sameOrigin(headers: IncomingHttpHeaders): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = headers.origin;
  if (origin === undefined) return true;
  const host = headers.host;
  if (!host) return false;
  return origin === `http://${host}` || origin === `https://${host}`;
}

/** `path?query` without its `token` parameter(s): where a login redirects to. */
export function withoutToken(url: URL): string {
  const q = new URLSearchParams(url.search);
  q.delete('token');
  const rest = q.toString();
  return `${url.pathname}${rest ? `?${rest}` : ''}`;
}
