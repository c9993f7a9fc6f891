/**
 * Issuing the links of one notification: which actions an event offers, and a signed link for each.
 * Called by the activities that deliver notifications (webhooks, the IRC bot), never by a workflow:
 * token ids are random, so they must not be drawn in deterministic code.
 */
import type { NotificationEvent } from '../domain/contract/activity-types.js';
import type { NotificationLinks } from '../domain/notify/notify-links.js';
import { linkConfig, type LinkConfig } from './config.js';
import { issueToken, linkUrl, newTokenId, type LinkAction } from './token.js';

export type { NotificationLinks } from '../domain/notify/notify-links.js';

/**
 * What a human can do from a notification. An escalation waits for a human: resume, abort,
 * dismiss it as a false alarm, or steer. The other alerts (budget exhausted, circuit open,
 * orphaned) report an agent that has stopped or gone silent: a link could do nothing useful.
 * A new alert that waits for a human (e.g. a permission prompt) belongs here with its actions.
 */
export function actionsFor(event: string): LinkAction[] {
  if (event === 'escalation') return ['resume', 'abort', 'dismiss', 'steer'];
  // Its own CLI waits for its human: the answer is given at that prompt; from afar, guide it or end it.
  if (event === 'awaiting-input') return ['steer', 'abort'];
  return [];
}

/** The links for `event` at `nowMs`, or null when it offers none. */
export function issueLinks(
  event: Pick<NotificationEvent, 'event' | 'agentId'>,
  config: LinkConfig,
  nowMs: number,
  newId: () => string = newTokenId,
): NotificationLinks | null {
  const actions = actionsFor(event.event);
  if (!actions.length) return null;
  const expiresAt = Math.floor(nowMs / 1000) + config.ttlSeconds;
  const out: NotificationLinks = { actions: {}, expiresAt: new Date(expiresAt * 1000).toISOString() };
  for (const action of actions) {
    const claims = { agentId: event.agentId, action, tokenId: newId(), expiresAt };
    out.actions[action] = linkUrl(config.baseUrl, claims, issueToken(config.secret, claims));
  }
  return out;
}

/**
 * The links of a notification being delivered now, from this process's environment: null when the
 * operator has not configured links, or when the configuration is wrong (then `warn` hears why,
 * and the notification goes out without links rather than not at all).
 */
export function linksForDelivery(
  event: Pick<NotificationEvent, 'event' | 'agentId'>,
  warn: (reason: string) => void,
  env = process.env,
): NotificationLinks | null {
  if (!actionsFor(event.event).length) return null;
  const cfg = linkConfig(env);
  if (!cfg.ok) {
    if (!cfg.off) warn(cfg.reason);
    return null;
  }
  try {
    return issueLinks(event, cfg.config, Date.now());
  } catch (err) {
    warn(err instanceof Error ? err.message : String(err));
    return null;
  }
}
