/**
 * Action links in notifications (src/serve/issue.ts issues them; `warden serve` answers them): how
 * each channel shows them. The Slack-format webhook gets link buttons and the plain URLs in its
 * fallback text (Mattermost and Rocket.Chat show only that, and link bare URLs); a json webhook gets
 * them as fields (`actions: {resume: url, …}`, `actionsExpireAt`); IRC gets one line per link.
 * Pure: no @temporalio imports.
 */
import type { NotificationEvent } from '../contract/activity-types.js';
import { IRC_LINE_MAX, byteLength, slackBody, type SlackBody, type WebhookJsonBody } from './notify.js';

export type LinkActionName = 'resume' | 'abort' | 'dismiss' | 'steer' | 'pause';

/**
 * The links of one notification: one URL per action and when they stop working (ISO time; empty
 * when there is no action link), and the agent's page in the web console (`<base>/console/agents/<id>`:
 * no token in it, the console asks for its own login).
 */
export interface NotificationLinks {
  actions: Partial<Record<LinkActionName, string>>;
  expiresAt: string;
  console?: string;
}

/** The agent's page in the web console that `warden serve` answers at `baseUrl`. */
export const consoleLink = (baseUrl: string, agentId: string): string => `${baseUrl.replace(/\/+$/, '')}/console/agents/${encodeURIComponent(agentId)}`;

const consoleOf = (links: NotificationLinks | null): string | null => (links?.console && safeLink(links.console) ? links.console : null);

const LABELS: Record<LinkActionName, string> = { resume: 'Resume', abort: 'Abort', dismiss: 'Dismiss (false alarm)', steer: 'Steer…', pause: 'Pause' };
const ORDER: LinkActionName[] = ['resume', 'steer', 'dismiss', 'pause', 'abort'];

const entries = (links: NotificationLinks) => ORDER.flatMap((a) => (links.actions[a] ? [[a, links.actions[a]!] as const] : []));

/** A link warden built is http(s) and holds none of the characters that end or bend chat link syntax. */
export const safeLink = (url: string): boolean => /^https?:\/\/[^\s<>|"'`\\]+$/.test(url) && url.length <= 2000;

/** The Slack-compatible body with the links: a row of link buttons, and the bare URLs in the fallback text. */
export function slackWithLinks(body: SlackBody, links: NotificationLinks | null): SlackBody {
  const list = links ? entries(links).filter(([, url]) => safeLink(url)) : [];
  const page = consoleOf(links);
  if (!list.length && !page) return body;
  const until = `each works once, until ${links!.expiresAt}`;
  const buttons = [
    ...list.map(([a, url]) => ({
      type: 'button',
      action_id: `warden-${a}`,
      text: { type: 'plain_text', text: LABELS[a], emoji: false },
      url,
      ...(a === 'resume' ? { style: 'primary' } : a === 'abort' ? { style: 'danger' } : {}),
    })),
    ...(page ? [{ type: 'button', action_id: 'warden-console', text: { type: 'plain_text', text: 'Open in the console', emoji: false }, url: page }] : []),
  ];
  const texts = [
    ...(list.length ? [`${list.map(([a, url]) => `${LABELS[a]}: ${url}`).join(' · ')} (${until})`] : []),
    ...(page ? [`Console: ${page} (log in to the console)`] : []),
  ];
  const context = [...(list.length ? [`Links: ${until}.`] : []), ...(page ? ['The console asks for its login.'] : [])].join(' ');
  return {
    text: `${body.text} — ${texts.join(' · ')}`,
    blocks: [...body.blocks, { type: 'actions', elements: buttons }, { type: 'context', elements: [{ type: 'mrkdwn', text: context }] }],
  };
}

/** The body of a `json` webhook with links: `actions: {resume: url, …}` and `actionsExpireAt`; `links: {console: url}`. */
export type WebhookJsonBodyWithLinks = WebhookJsonBody & { actions?: NotificationLinks['actions']; actionsExpireAt?: string; links?: { console: string } };

/** The webhook body for a channel's format, with the links when there are any (the signature covers exactly these bytes). */
export function webhookBodyWithLinks(
  format: 'json' | 'slack' | undefined,
  event: NotificationEvent,
  deliveryId: string,
  links: NotificationLinks | null,
): string {
  if (format === 'slack') return JSON.stringify(slackWithLinks(slackBody(event, deliveryId), links));
  const list = links ? entries(links) : [];
  const body: WebhookJsonBodyWithLinks = {
    ...event,
    deliveryId,
    ...(list.length ? { actions: Object.fromEntries(list), actionsExpireAt: links!.expiresAt } : {}),
    ...(links?.console ? { links: { console: links.console } } : {}),
  };
  return JSON.stringify(body);
}

/**
 * The links as IRC lines, one per link so that each stays one clickable URL (never split):
 * `[warden] resume agent-x: https://…`. A line over IRC_LINE_MAX bytes is left out, and said so.
 */
export function ircLinkLines(agentId: string, links: NotificationLinks | null): string[] {
  if (!links) return [];
  const lines: string[] = [];
  let tooLong = 0;
  for (const [a, url] of entries(links)) {
    const line = `[warden] ${a} ${agentId}: ${url}`;
    if (!safeLink(url) || byteLength(line) > IRC_LINE_MAX) tooLong += 1;
    else lines.push(line);
  }
  if (lines.length) lines.push(`[warden] each link works once, until ${links.expiresAt}`);
  if (links.console) {
    const line = `[warden] console ${agentId}: ${links.console}`;
    if (!safeLink(links.console) || byteLength(line) > IRC_LINE_MAX) tooLong += 1;
    else lines.push(line);
  }
  if (tooLong) lines.push(`[warden] ${tooLong} link${tooLong > 1 ? 's' : ''} too long for IRC: see the webhook`);
  return lines;
}
