/**
 * postIrc: posts one alert to an IRC channel through the `warden irc` bot's connection. Only the
 * bot registers it, on the `warden-irc` task queue, so each alert is one activity execution of one
 * notify workflow and appears once however many warden workers run. While the bot is away the task
 * waits on the queue; while its connection is down the activity waits a little, then fails
 * retryably (the notify workflow retries it for up to 24 hours).
 *
 * Each alert carries its delivery id (the notify workflow's id, shown at the end of its last line).
 * A retry of the same alert is not posted again if this bot already sent its lines on the
 * connection that is still up (they are in the server's stream, in order, ahead of anything sent
 * later): the retry only waits for the server to confirm them. Only when the connection went down
 * in between are the lines sent again.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from 'pino';
import { currentDeliveryId } from './notify.js';
import { ircAlertLines, type PostIrcInput, type PostIrcResult } from '../src/domain/notify/notify.js';
import { ircLinkLines } from '../src/domain/notify/notify-links.js';
import { incidentLinksForDelivery, linksForDelivery } from '../src/serve/issue.js';
import { incidentIrcLines } from '../src/domain/notify/incident-text.js';
import { IRC_CHANNEL_RE } from '../src/domain/contract/schemas.js';

/** What the activity needs from the bot's IRC connection. */
export interface IrcPoster {
  /** Resolves once registered on the server and in `channel` (joining it if needed); rejects after `timeoutMs`. */
  ready(channel: string, timeoutMs: number): Promise<void>;
  say(channel: string, line: string): void;
  /** A PING/PONG round trip: the server has read every line sent before it. */
  roundTrip(timeoutMs: number): Promise<void>;
  /** Counts connections: changes whenever the bot registers anew (lines sent on an older one may be lost). */
  connection(): number;
}

export const READY_TIMEOUT_MS = 15_000;
/** How many delivery ids the bot remembers (the most recent ones). */
export const POSTED_MEMORY = 2_000;

interface Sent {
  connection: number;
  lines: number;
  confirmed: boolean;
}

export function makePostIrc(poster: IrcPoster, log: Logger) {
  const sent = new Map<string, Sent>();
  const remember = (id: string, s: Sent) => {
    sent.delete(id);
    sent.set(id, s);
    while (sent.size > POSTED_MEMORY) sent.delete(sent.keys().next().value!);
  };
  return async function postIrc(input: PostIrcInput): Promise<PostIrcResult> {
    const { channel, event } = input;
    if (!IRC_CHANNEL_RE.test(channel)) throw ApplicationFailure.nonRetryable(`not an IRC channel: ${JSON.stringify(channel)}`, 'IrcBadChannel');
    const deliveryId = currentDeliveryId(event);
    const key = `${channel.toLowerCase()} ${deliveryId}`;
    const alog = log.child({ agentId: event.agentId, event: event.event, channel, deliveryId });
    const before = sent.get(key);
    if (before?.confirmed) {
      alog.info('alert already posted to IRC: not posting it again');
      return { channel, lines: before.lines };
    }
    try {
      await poster.ready(channel, READY_TIMEOUT_MS);
    } catch (err) {
      throw ApplicationFailure.retryable(`IRC bot not ready for ${channel}: ${(err as Error).message}`, 'IrcNotConnected');
    }
    let record = sent.get(key);
    if (record && record.connection === poster.connection()) {
      alog.info('alert already sent on this connection: waiting for the server to confirm it');
    } else {
      // Action links from the bot's environment (WARDEN_LINK_SECRET, WARDEN_LINK_BASE_URL), one per line.
      const warn = (reason: string) => alog.warn({ reason }, 'alert posted without action links');
      // An incident names several agents, each with its own links (one alert for one cause).
      const lines = event.incident
        ? incidentIrcLines(event, deliveryId, incidentLinksForDelivery(event, warn))
        : [...ircAlertLines(event, deliveryId), ...ircLinkLines(event.agentId, linksForDelivery(event, warn))];
      for (const line of lines) poster.say(channel, line);
      record = { connection: poster.connection(), lines: lines.length, confirmed: false };
      remember(key, record);
    }
    try {
      await poster.roundTrip(10_000);
    } catch (err) {
      // The lines may or may not have reached the server: a retry on the same connection only
      // waits for them; after a reconnect it sends them again (a rare repeat beats a lost alert).
      throw ApplicationFailure.retryable(`IRC server did not confirm the post: ${(err as Error).message}`, 'IrcUnconfirmed');
    }
    record.confirmed = true;
    alog.info({ lines: record.lines }, 'alert posted to IRC');
    return { channel, lines: record.lines };
  };
}
