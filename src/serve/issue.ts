/**
 * Issuing the links of one notification: which actions an event offers, and a signed link for each.
 * Called by the activities that deliver notifications (webhooks, the IRC bot), never by a workflow:
 * token ids are random, so they must not be drawn in deterministic code.
 */
import type { NotificationEvent } from '../domain/contract/activity-types.js';
import { consoleLink, type NotificationLinks } from '../domain/notify/notify-links.js';
import { meshRunOf } from '../domain/notify/mesh-text.js';
import { findingId, findingSignature } from '../domain/judgement/finding.js';
import { baseUrlProblem, linkConfig, type LinkConfig } from './config.js';
import { issueToken, linkUrl, newTokenId, type LinkAction } from './token.js';

export type { NotificationLinks } from '../domain/notify/notify-links.js';

/**
 * What a human can do from a notification. An escalation waits for a human: resume, abort,
 * dismiss it as a false alarm, or steer. A budget warning: steer, pause or abort; a budget reached
 * (the agent is paused): abort. The other alerts (circuit open, orphaned) report an agent that has
 * stopped or gone silent: a link could do nothing useful.
 * A new alert that waits for a human (e.g. a permission prompt) belongs here with its actions.
 */
export function actionsFor(event: string): LinkAction[] {
  if (event === 'escalation') return ['resume', 'abort', 'dismiss', 'steer'];
  // Its own CLI waits for its human: the answer is given at that prompt; from afar, guide it or end it.
  if (event === 'awaiting-input') return ['steer', 'abort'];
  // A budget nearly spent: let it finish, or stop it spending (raising needs an amount: `warden budget`).
  if (event === 'budget-warning') return ['steer', 'pause', 'abort'];
  // Paused at a budget: raise it with `warden budget`, or end it.
  if (event === 'budget-exhausted') return ['abort'];
  return [];
}

/**
 * What the links of `event` answer: an escalation's number and the id of its finding (0 and null
 * for an alert that is not an escalation). Throws for an escalation that does not say its number
 * (sent by an older warden): its links could not be bound to it.
 */
export function escalationClaims(event: Pick<NotificationEvent, 'event' | 'escalation' | 'verdict'>): { escalation: number; finding: string | null } {
  if (event.event !== 'escalation') return { escalation: 0, finding: null };
  if (!Number.isSafeInteger(event.escalation) || event.escalation! < 1)
    throw new Error('the escalation does not say its number (an older warden raised it): no action links for it');
  return { escalation: event.escalation!, finding: event.verdict ? findingId(findingSignature(event.verdict)) : null };
}

/** The links for `event` at `nowMs`, or null when it offers none; every action's link answers the same escalation. */
export function issueLinks(
  event: Pick<NotificationEvent, 'event' | 'agentId' | 'escalation' | 'verdict'>,
  config: LinkConfig,
  nowMs: number,
  newId: () => string = newTokenId,
): NotificationLinks | null {
  const actions = actionsFor(event.event);
  if (!actions.length) return null;
  const bound = escalationClaims(event);
  const expiresAt = Math.floor(nowMs / 1000) + config.ttlSeconds;
  const out: NotificationLinks = { actions: {}, expiresAt: new Date(expiresAt * 1000).toISOString() };
  for (const action of actions) {
    const claims = { agentId: event.agentId, action, tokenId: newId(), expiresAt, ...bound };
    out.actions[action] = linkUrl(config.baseUrl, claims, issueToken(config.secret, claims));
  }
  return out;
}

/**
 * The agent's page in the web console for an agent's alert, when humans reach `warden serve` at a
 * known address (WARDEN_LINK_BASE_URL, valid): null otherwise, and for a mesh run's alerts. The
 * page needs the console's login: no token goes into it.
 */
export function consoleLinkFor(event: Pick<NotificationEvent, 'event' | 'agentId'>, env = process.env): string | null {
  const base = env.WARDEN_LINK_BASE_URL;
  if (!base || baseUrlProblem(base) || meshRunOf(event as NotificationEvent) !== null) return null;
  return consoleLink(base, event.agentId);
}

/**
 * The links of a notification being delivered now, from this process's environment: the signed
 * action links when the operator configured them, and the agent's console page when the address
 * humans reach `warden serve` at is known; null when neither. A configuration that asks for links
 * but is wrong: `warn` hears why, and the notification goes out without action links rather than
 * not at all.
 */
export function linksForDelivery(
  event: Pick<NotificationEvent, 'event' | 'agentId' | 'escalation' | 'verdict'>,
  warn: (reason: string) => void,
  env = process.env,
): NotificationLinks | null {
  const page = consoleLinkFor(event, env);
  const withPage = (links: NotificationLinks | null): NotificationLinks | null =>
    page ? { ...(links ?? { actions: {}, expiresAt: '' }), console: page } : links;
  if (!actionsFor(event.event).length) return withPage(null);
  const cfg = linkConfig(env);
  if (!cfg.ok) {
    if (!cfg.off) warn(cfg.reason);
    return withPage(null);
  }
  try {
    return withPage(issueLinks(event, cfg.config, Date.now()));
  } catch (err) {
    warn(err instanceof Error ? err.message : String(err));
    return withPage(null);
  }
}

/**
 * The links of an incident's notification (one alert for one cause): each named agent's own, bound
 * to its own escalation, as if it had been notified alone. Empty when the event names no incident.
 */
export function incidentLinksForDelivery(
  event: Pick<NotificationEvent, 'incident'>,
  warn: (reason: string) => void,
  env = process.env,
): Map<string, NotificationLinks | null> {
  const out = new Map<string, NotificationLinks | null>();
  for (const a of event.incident?.agents ?? []) {
    out.set(a.agentId, linksForDelivery({ event: 'escalation', agentId: a.agentId, escalation: a.escalation, verdict: a.verdict }, warn, env));
  }
  return out;
}
