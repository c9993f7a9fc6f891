/**
 * postIrc's once-only posting, against a recording IrcPoster (the real one is the bot's IRC
 * connection, exercised end to end in test/integration/irc.test.ts): a retry of an alert whose
 * lines went out on the connection that is still up only waits for the server's confirmation; after
 * a reconnect the lines go out again; a confirmed alert is never posted twice.
 */
import { pino } from 'pino';
import { expect, test } from 'vitest';
import { makePostIrc, type IrcPoster } from '../../activities/irc.js';
import type { NotificationEvent } from '../../src/domain/contract/activity-types.js';

const event: NotificationEvent = {
  event: 'escalation',
  agentId: 'fixer',
  workflowId: 'agent-fixer',
  runId: '0193aaaa-0000-0000-0000-000000000000',
  task: 'Fix the parser.',
  step: 3,
  reason: 'escalated: SPIRALING',
  at: '2026-11-23T09:00:00.000Z',
};

function recordingPoster() {
  const said: string[] = [];
  let connection = 1;
  const roundTrips: ('ok' | 'fail')[] = [];
  const poster: IrcPoster = {
    ready: async () => {},
    say: (_ch, line) => void said.push(line),
    roundTrip: async () => {
      if (roundTrips.shift() === 'fail') throw new Error('no PONG within 10000 ms');
    },
    connection: () => connection,
  };
  return { poster, said, roundTrips, reconnect: () => (connection += 1) };
}

const quiet = pino({ level: 'silent' });

test('a retry after an unconfirmed post on the same connection does not send the lines again', async () => {
  const p = recordingPoster();
  const post = makePostIrc(p.poster, quiet);
  p.roundTrips.push('fail', 'ok');
  await expect(post({ channel: '#alerts', event })).rejects.toThrow(/did not confirm/);
  const first = p.said.length;
  expect(first).toBeGreaterThan(0);
  expect(await post({ channel: '#alerts', event })).toEqual({ channel: '#alerts', lines: first });
  expect(p.said).toHaveLength(first);
  // Confirmed: a further retry (e.g. the completion was lost) posts nothing either.
  await post({ channel: '#alerts', event });
  expect(p.said).toHaveLength(first);
});

test('after a reconnect an unconfirmed alert is sent again; another alert is its own', async () => {
  const p = recordingPoster();
  const post = makePostIrc(p.poster, quiet);
  p.roundTrips.push('fail');
  await expect(post({ channel: '#alerts', event })).rejects.toThrow();
  const n = p.said.length;
  p.reconnect();
  await post({ channel: '#alerts', event });
  expect(p.said).toHaveLength(2 * n);
  expect(p.said.slice(n)).toEqual(p.said.slice(0, n));
  await post({ channel: '#alerts', event: { ...event, step: 4 } });
  expect(p.said).toHaveLength(3 * n);
  // The same alert to another channel is posted there too.
  await post({ channel: '#other', event });
  expect(p.said).toHaveLength(4 * n);
});
