/**
 * The small HTML pages `warden serve` answers with. Everything shown that came from a request or an
 * agent (agent ids, steering text, a refusal reason) is untrusted: it is made visible as plain text
 * first (control and bidi characters shown, not applied: src/text/sanitize.ts) and then HTML-escaped.
 * The pages load nothing and link nowhere; forms post back to the page's own URL.
 */
import { visible } from '../text/sanitize.js';

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

const VERBS: Record<string, string> = { resume: 'Resume', abort: 'Abort', dismiss: 'Dismiss as a false alarm', steer: 'Steer', pause: 'Pause' };
const WHAT: Record<string, string> = {
  resume: 'The agent continues; its escalation ladder starts over.',
  abort: 'The agent ends now, failed. This cannot be undone.',
  dismiss: 'The finding is marked a false alarm: it no longer whispers or escalates, and an agent its escalation paused runs again.',
  steer: 'Your text reaches the agent at its next turn.',
  pause: 'The agent is paused: no new turn starts until a human resumes it (`warden resume`).',
};

/** The escalation a link answers, as its confirm page shows it (pattern and message: agent-influenced text). */
export interface ShownFinding {
  escalation: number;
  pattern: string | null;
  message: string | null;
}

/** At most this many characters of a finding's message are shown. */
export const MAX_SHOWN_FINDING_CHARS = 600;

function findingHtml(finding: ShownFinding | null | undefined): string {
  if (finding === null) return '';
  if (finding === undefined)
    return '<p id="finding" class="muted">The agent did not say in time which finding it waits on; pressing the button still checks that this link answers its current escalation.</p>';
  const message = finding.message ?? '';
  const shown = [...message].length > MAX_SHOWN_FINDING_CHARS ? `${[...message].slice(0, MAX_SHOWN_FINDING_CHARS).join('')}…` : message;
  return (
    `<p id="finding">Escalation #${finding.escalation}: <strong>${escapeHtml(finding.pattern ?? 'flagged')}</strong>` +
    `${shown ? ` — ${escapeHtml(shown)}` : ''}</p>`
  );
}

/**
 * The confirmation page a link opens (GET): nothing happens until the button is pressed (a POST),
 * so a chat tool that previews the link, or a mail scanner that follows it, changes nothing. An
 * escalation's link shows the escalation and its finding (`finding`: null for a link of another
 * alert, undefined when the agent could not be asked).
 */
export function confirmPage(
  agentId: string,
  action: string,
  expiresAt: number,
  opts: { finding?: ShownFinding | null | undefined; error?: string; text?: string } = { finding: null },
): string {
  const verb = VERBS[action] ?? action;
  const { error, text = '' } = opts;
  const finding = 'finding' in opts ? opts.finding : null;
  const steer =
    action === 'steer'
      ? `<p><label for="text">What should the agent do? (at most ${MAX_STEER_CHARS} characters)</label><br><textarea id="text" name="text" rows="4" maxlength="${MAX_STEER_CHARS}" required>${escapeHtml(text)}</textarea></p>`
      : '';
  const once = finding
    ? `This link works once, while the agent waits on escalation #${finding.escalation}, until ${escapeHtml(new Date(expiresAt * 1000).toISOString())}; using any link of this escalation voids the others.`
    : `This link works once, until ${escapeHtml(new Date(expiresAt * 1000).toISOString())}.`;
  return page(
    `${verb} agent ${agentId}?`,
    `${error ? `<p id="error"><strong>${escapeHtml(error)}</strong></p>` : ''}${findingHtml(finding)}<p>${escapeHtml(WHAT[action] ?? '')}</p>` +
      `<form method="post">${steer}<button type="submit" id="confirm">${escapeHtml(verb)}</button></form>` +
      `<p class="muted">${once}</p>`,
  );
}
