/**
 * postIrc: posts one alert to an IRC channel through the `warden irc` bot's connection. Only the
 * bot registers it, on the `warden-irc` task queue, so each alert is one activity execution of one
 * notify workflow and appears once however many warden workers run. While the bot is away the task
 * waits on the queue; while its connection is down the activity waits a little, then fails
 * retryably (the notify workflow retries it for up to 24 hours).
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from 'pino';
import { ircAlertLines, type PostIrcInput, type PostIrcResult } from '../src/domain/notify.js';
import { IRC_CHANNEL_RE } from '../src/domain/schemas.js';

/** What the activity needs from the bot's IRC connection. */
export interface IrcPoster {
  /** Resolves once registered on the server and in `channel` (joining it if needed); rejects after `timeoutMs`. */
  ready(channel: string, timeoutMs: number): Promise<void>;
  say(channel: string, line: string): void;
  /** A PING/PONG round trip: the server has read every line sent before it. */
  roundTrip(timeoutMs: number): Promise<void>;
}

export const READY_TIMEOUT_MS = 15_000;

export function makePostIrc(poster: IrcPoster, log: Logger) {
  return async function postIrc({ channel, event }: PostIrcInput): Promise<PostIrcResult> {
    if (!IRC_CHANNEL_RE.test(channel)) throw ApplicationFailure.nonRetryable(`not an IRC channel: ${JSON.stringify(channel)}`, 'IrcBadChannel');
    try {
      await poster.ready(channel, READY_TIMEOUT_MS);
    } catch (err) {
      throw ApplicationFailure.retryable(`IRC bot not ready for ${channel}: ${(err as Error).message}`, 'IrcNotConnected');
    }
    const lines = ircAlertLines(event);
    for (const line of lines) poster.say(channel, line);
    try {
      await poster.roundTrip(10_000);
    } catch (err) {
      // The lines may or may not have reached the server: retry (a rare repeat beats a lost alert).
      throw ApplicationFailure.retryable(`IRC server did not confirm the post: ${(err as Error).message}`, 'IrcUnconfirmed');
    }
    log.info({ agentId: event.agentId, event: event.event, channel, lines: lines.length }, 'alert posted to IRC');
    return { channel, lines: lines.length };
  };
}
