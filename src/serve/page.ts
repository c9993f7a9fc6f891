/**
 * The small HTML pages `warden serve` answers with. Everything shown that came from a request or an
 * agent (agent ids, steering text, a refusal reason) is untrusted: it is made visible as plain text
 * first (control and bidi characters shown, not applied: src/cli/sanitize.ts) and then HTML-escaped.
 * The pages load nothing and link nowhere; forms post back to the page's own URL.
 */
import { visible } from '../cli/sanitize.js';

/** HTML-escape text for an element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return visible(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** What every answer sends besides its body: no caching, no framing, no referrer, nothing loaded. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export const MAX_STEER_CHARS = 1000;

const STYLE =
  'body{font:16px/1.45 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;color:#222}h1{font-size:1.3em}code{background:#f3f3f3;padding:0 .2em}textarea{width:100%;font:inherit}button{font:inherit;padding:.4em 1.2em}.muted{color:#666;font-size:.9em}';

/** A whole page; `bodyHtml` must already be safe HTML. */
export function page(title: string, bodyHtml: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${bodyHtml}</body></html>`;
}

/** A page that says what happened, in one or two sentences of text. */
export function messagePage(title: string, message: string, note?: string): string {
  return page(title, `<p id="message">${escapeHtml(message)}</p>${note ? `<p class="muted">${escapeHtml(note)}</p>` : ''}`);
}

const VERBS: Record<string, string> = { resume: 'Resume', abort: 'Abort', dismiss: 'Dismiss as a false alarm', steer: 'Steer' };
const WHAT: Record<string, string> = {
  resume: 'The agent continues; its escalation ladder starts over.',
  abort: 'The agent ends now, failed. This cannot be undone.',
  dismiss: 'The finding is marked a false alarm: it no longer whispers or escalates, and an agent its escalation paused runs again.',
  steer: 'Your text reaches the agent at its next turn.',
};

/**
 * The confirmation page a link opens (GET): nothing happens until the button is pressed (a POST),
 * so a chat tool that previews the link, or a mail scanner that follows it, changes nothing.
 */
export function confirmPage(agentId: string, action: string, expiresAt: number, error?: string, text = ''): string {
  const verb = VERBS[action] ?? action;
  const steer =
    action === 'steer'
      ? `<p><label for="text">What should the agent do? (at most ${MAX_STEER_CHARS} characters)</label><br><textarea id="text" name="text" rows="4" maxlength="${MAX_STEER_CHARS}" required>${escapeHtml(text)}</textarea></p>`
      : '';
  return page(
    `${verb} agent ${agentId}?`,
    `${error ? `<p id="error"><strong>${escapeHtml(error)}</strong></p>` : ''}<p>${escapeHtml(WHAT[action] ?? '')}</p>` +
      `<form method="post">${steer}<button type="submit" id="confirm">${escapeHtml(verb)}</button></form>` +
      `<p class="muted">This link works once, until ${escapeHtml(new Date(expiresAt * 1000).toISOString())}.</p>`,
  );
}
