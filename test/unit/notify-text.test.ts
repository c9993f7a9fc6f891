import { expect, test } from 'vitest';
import type { NotificationEvent } from '../../src/domain/contract/activity-types.js';
import { TRUNCATION_MARKER } from '../../src/domain/contract/limits.js';
import {
  IRC_CONTINUATION,
  IRC_LINE_MAX,
  IRC_PART_MAX_LINES,
  NotifyWorkflowInputSchema,
  WORD_JOINER,
  deliveryIdFor,
  eventDeliveryId,
  ircAlertLines,
  markdownNeutralise,
  notifyWorkflowId,
  slackBody,
  slackEscape,
  splitIrcLine,
  webhookBody,
} from '../../src/domain/notify/notify.js';
import { AgentSpecSchema, WebhookChannelSchema } from '../../src/domain/contract/schemas.js';

const escalation: NotificationEvent = {
  event: 'escalation',
  agentId: 'fixer',
  workflowId: 'agent-fixer',
  runId: '0193aaaa-bbbb-cccc-dddd-eeeeffff0000',
  task: 'Make `npm run build` pass.\nThen run the tests.',
  step: 3,
  verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'the same failing build 5 times: error TS2307' },
  whisper: 'You are repeating <the same> command & it fails.',
  reason: 'escalated: SPIRALING',
  at: '2026-11-23T09:00:00.000Z',
};

test('IRC alert: what happened, task, verdict with evidence, how to answer; one line each', () => {
  const lines = ircAlertLines(escalation);
  expect(lines).toEqual([
    '[warden] ESCALATION agent fixer (step 3): escalated: SPIRALING',
    'task: Make `npm run build` pass. Then run the tests.',
    'verdict: CORRECTION SPIRALING — the same failing build 5 times: error TS2307',
    'told the agent: You are repeating <the same> command & it fails.',
    'answer: !resume fixer [note] · !steer fixer <text> · !abort fixer [reason] · !status fixer',
  ]);
});

test('IRC alert: no line breaks or control characters get through, lines are bounded', () => {
  const lines = ircAlertLines({ ...escalation, task: `x\r\nPRIVMSG #other :owned\u0002${'y'.repeat(2000)}`, reason: 'a\rb' });
  for (const l of lines) {
    expect(l).not.toMatch(/[\r\n\x00-\x1f]/);
    expect(new TextEncoder().encode(l).length).toBeLessThanOrEqual(IRC_LINE_MAX);
  }
  expect(lines[1]).toMatch(/^task: x PRIVMSG #other :owned y+/);
});

test('IRC alert for the other events says how to answer them', () => {
  expect(ircAlertLines({ ...escalation, event: 'budget-exhausted', verdict: undefined, whisper: undefined, reason: 'costUsd budget 1 reached' })).toEqual([
    '[warden] BUDGET EXHAUSTED agent fixer (step 3): costUsd budget 1 reached',
    'task: Make `npm run build` pass. Then run the tests.',
    'answer: warden budget fixer --cost-usd N (raise it: the agent runs again) · !abort fixer [reason] · !status fixer',
  ]);
  expect(ircAlertLines({ ...escalation, event: 'budget-warning', verdict: undefined }).at(-1)).toMatch(/!pause fixer .*warden budget fixer/);
  expect(ircAlertLines({ ...escalation, event: 'orphaned', verdict: undefined }).at(-1)).toMatch(/!abort fixer/);
  expect(ircAlertLines({ ...escalation, event: 'circuit-open', verdict: undefined })[0]).toMatch(/^\[warden\] CIRCUIT OPEN agent fixer/);
});

test('Slack body: {text, blocks} with escaped mrkdwn', () => {
  const b = slackBody(escalation);
  expect(b.text).toBe('warden: escalation — agent fixer: escalated: SPIRALING');
  expect(b.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'warden: escalation — agent fixer', emoji: false } });
  const section = (b.blocks[1] as { text: { type: string; text: string } }).text;
  expect(section.type).toBe('mrkdwn');
  expect(section.text).toContain('*Verdict:* CORRECTION SPIRALING — the same failing build 5 times: error TS2307');
  expect(section.text).toContain('*Told the agent:* You are repeating &lt;the same&gt; command &amp; it fails.');
  expect(JSON.stringify(b.blocks[2])).toContain('warden resume fixer');
  expect(slackEscape('<!channel> & co')).toBe('&lt;!channel&gt; &amp; co');
});

test('schemas: webhook format and notify.irc are additive and validated', () => {
  expect(WebhookChannelSchema.parse({ url: 'http://127.0.0.1/h' })).toEqual({ url: 'http://127.0.0.1/h' });
  expect(WebhookChannelSchema.parse({ url: 'http://127.0.0.1/h', format: 'slack' }).format).toBe('slack');
  expect(() => WebhookChannelSchema.parse({ url: 'http://127.0.0.1/h', format: 'xml' })).toThrow();
  const spec = AgentSpecSchema.parse({ agentId: 'a', task: 't', notify: { irc: { channel: '#alerts' } } });
  expect(spec.notify).toEqual({ webhooks: [], log: true, irc: { channel: '#alerts' } });
  expect(AgentSpecSchema.parse({ agentId: 'a', task: 't' }).notify).toEqual({ webhooks: [], log: true });
  const bad = AgentSpecSchema.safeParse({ agentId: 'a', task: 't', notify: { irc: { channel: 'alerts now' } } });
  expect(bad.success).toBe(false);
  expect(JSON.stringify(bad.error?.issues[0]?.path)).toBe('["notify","irc","channel"]');
});

test('notify workflow input and id', () => {
  expect(NotifyWorkflowInputSchema.parse({ event: escalation })).toEqual({ event: escalation, webhooks: [] });
  expect(NotifyWorkflowInputSchema.safeParse({ event: { ...escalation, event: 'nope' } }).success).toBe(false);
  expect(notifyWorkflowId('fixer', escalation.runId, 2)).toBe('notify-fixer-0193aaaa-2');
});

// ---------------------------------------------------------------------------------------------
// Untrusted text in chat bodies, IRC line splitting, delivery ids.

const HOSTILE = '<!channel> <@U123> <http://evil|click> @channel @here @all [x](http://evil) ![i](http://evil/i.png) [r][1] &amp;';

/** Every string anywhere in a JSON value. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

/** What Slack, Mattermost or Rocket.Chat would interpret in a string. */
function interpretable(s: string): string[] {
  const found: string[] = [];
  if (/[<>]/.test(s)) found.push('raw < or > (Slack <!channel>, <@U…>, <url|label>)');
  for (const m of s.matchAll(/@(channel|here|all)\b/gi)) found.push(m[0]);
  if (/\]\s*[([]/.test(s)) found.push('Markdown link');
  if (/!\[/.test(s)) found.push('Markdown image');
  return found;
}

test('chat body: nothing an agent writes is interpretable in any field (Slack, Mattermost, Rocket.Chat)', () => {
  const e: NotificationEvent = {
    ...escalation,
    reason: HOSTILE,
    task: HOSTILE,
    whisper: HOSTILE,
    verdict: { kind: 'CORRECTION', pattern: 'DRIFT', message: HOSTILE },
  };
  const body = slackBody(e, 'notify-fixer-0193aaaa-1');
  for (const s of strings(body)) expect(interpretable(s), s).toEqual([]);
  // The fallback text reads the same to a human: escaped and joined, not deleted.
  expect(body.text).toBe(
    `warden: escalation — agent fixer: &lt;!channel&gt; &lt;@${WORD_JOINER}U123&gt; &lt;http://evil|click&gt; @${WORD_JOINER}channel @${WORD_JOINER}here @${WORD_JOINER}all ` +
      `[x]${WORD_JOINER}(http://evil) !${WORD_JOINER}[i]${WORD_JOINER}(http://evil/i.png) [r]${WORD_JOINER}[1] &amp;amp;`,
  );
  expect(body.text.replaceAll(WORD_JOINER, '')).toBe(`warden: escalation — agent fixer: ${slackEscape(HOSTILE)}`);
  expect(JSON.stringify(body.blocks[2])).toContain('delivery notify-fixer-0193aaaa-1');
});

test('markdownNeutralise: mentions and link syntax get a word joiner; ordinary text is untouched', () => {
  expect(markdownNeutralise('ping @channel and @alice')).toBe(`ping @${WORD_JOINER}channel and @${WORD_JOINER}alice`);
  expect(markdownNeutralise('a plain sentence (with parens) and [brackets] and !bang')).toBe('a plain sentence (with parens) and [brackets] and !bang');
  expect(markdownNeutralise('[a](b)')).toBe(`[a]${WORD_JOINER}(b)`);
  expect(markdownNeutralise('![a](b)')).toBe(`!${WORD_JOINER}[a]${WORD_JOINER}(b)`);
  expect(markdownNeutralise('a lone @ sign')).toBe('a lone @ sign');
});

test('splitIrcLine: at most IRC_LINE_MAX bytes, never mid-character, continuations marked, nothing starts with !', () => {
  const enc = new TextEncoder();
  const text = `task: ${'é€😀 '.repeat(60)}`;
  const lines = splitIrcLine(text, IRC_LINE_MAX, 10);
  expect(lines.length).toBeGreaterThan(1);
  for (const [i, l] of lines.entries()) {
    expect(enc.encode(l).length).toBeLessThanOrEqual(IRC_LINE_MAX);
    if (i > 0) expect(l.startsWith(IRC_CONTINUATION)).toBe(true);
  }
  // Nothing lost: the pieces put back together are the text.
  expect(
    lines
      .map((l, i) => (i ? l.slice(IRC_CONTINUATION.length) : l))
      .join(' ')
      .replace(/ +/g, ' ')
      .trimEnd(),
  ).toBe(text.trimEnd());
  // Lone surrogates are not produced: every line is well-formed UTF-16.
  for (const l of lines) expect(l).toBe(Buffer.from(l, 'utf8').toString('utf8'));
  expect(splitIrcLine('!abort victim')).toEqual([`${IRC_CONTINUATION}!abort victim`]);
});

test('splitIrcLine: text built so that a 350-byte split would start a line with !abort cannot start one', () => {
  const prefix = 'told the agent: ';
  const filler = 'a'.repeat(350 - prefix.length);
  const lines = ircAlertLines({ ...escalation, whisper: `${filler}!abort victim now` });
  for (const l of lines) expect(l.startsWith('!')).toBe(false);
  expect(lines.some((l) => l.includes('!abort victim'))).toBe(true);
  // Long parts are cut with a marker after IRC_PART_MAX_LINES lines.
  const long = ircAlertLines({ ...escalation, task: 'word '.repeat(2000) });
  expect(long.filter((l) => l.startsWith('task: ') || l.startsWith(IRC_CONTINUATION + 'word')).length).toBe(IRC_PART_MAX_LINES);
  expect(long.find((l) => l.includes(TRUNCATION_MARKER))).toBeDefined();
});

test('ircAlertLines with a delivery id ends the answer line with it', () => {
  expect(ircAlertLines(escalation, 'notify-fixer-0193aaaa-2').at(-1)).toBe(
    'answer: !resume fixer [note] · !steer fixer <text> · !abort fixer [reason] · !status fixer · alert notify-fixer-0193aaaa-2',
  );
});

test('delivery ids: the notify workflow id per alert; otherwise workflow, run and activity; printable', () => {
  const src = { workflowType: 'notifyWorkflow', workflowId: 'notify-fixer-0193aaaa-2', runId: 'abcdef0123456789', activityId: '1' };
  expect(deliveryIdFor(src)).toBe('notify-fixer-0193aaaa-2');
  expect(deliveryIdFor({ ...src, activityId: '2' })).toBe('notify-fixer-0193aaaa-2');
  expect(deliveryIdFor({ ...src, workflowType: 'meshWorkflow', workflowId: 'mesh-r1' })).toBe('mesh-r1/abcdef01/1');
  expect(deliveryIdFor({ ...src, workflowId: 'notify é 1' })).toBe('notify%20%C3%A9%201');
  expect(eventDeliveryId(escalation)).toBe('agent-fixer/0193aaaa/escalation-3-2026-11-23T09:00:00.000Z');
  expect(eventDeliveryId(escalation)).not.toBe(eventDeliveryId({ ...escalation, step: 4 }));
});

test('webhookBody: json carries deliveryId beside the event; slack names it in the context line', () => {
  expect(JSON.parse(webhookBody(undefined, escalation, 'id-1'))).toEqual({ ...escalation, deliveryId: 'id-1' });
  expect(JSON.parse(webhookBody('json', escalation, 'id-1')).deliveryId).toBe('id-1');
  expect(webhookBody('slack', escalation, 'id-1')).toContain('delivery id-1');
});

// ---- the mesh's own alerts: titled as a mesh, answered with `warden mesh` verbs, no agent links ----
const meshEvent = (event: NotificationEvent['event'], reason: string): NotificationEvent => ({
  event,
  agentId: 'mesh-demo',
  workflowId: 'mesh-demo',
  runId: 'abcdef0123',
  task: 'mesh demo',
  step: 0,
  reason,
  at: '2026-11-23T09:00:00.000Z',
});

test.each([
  [
    'mesh-ready',
    'mesh ready: 2 of 2 tasks through; `warden mesh apply demo` merges',
    '[warden] MESH READY mesh demo: 2 of 2 tasks through; `warden mesh apply demo` merges',
    'next: warden mesh apply demo (merge) · warden mesh cancel demo · warden mesh status demo',
  ],
  [
    'mesh-failed',
    'mesh failed: meshIntegrate failed: disk full',
    '[warden] MESH FAILED mesh demo: meshIntegrate failed: disk full',
    'see: warden mesh status demo (the mesh has ended; its workers were stopped)',
  ],
  [
    'mesh-awaiting-input',
    'conflict budget spent (3 of 3)',
    '[warden] MESH AWAITING INPUT mesh demo: conflict budget spent (3 of 3)',
    'answer: warden mesh resume demo [--note text] · warden mesh cancel demo · warden mesh status demo',
  ],
] as const)('IRC %s: its own title and the warden mesh command that answers it', (kind, reason, title, hint) => {
  const lines = ircAlertLines(meshEvent(kind, reason), 'd-1');
  expect(lines).toEqual([title, `${hint} · alert d-1`]);
  expect(lines.join('\n')).not.toMatch(/ESCALATION|!resume|agent mesh-demo/);
});

test('Slack mesh alert: the title names the mesh and its phase; the context gives the warden mesh commands', () => {
  const b = slackBody(meshEvent('mesh-ready', 'mesh ready: 1 of 2 tasks through, 1 failed'), 'd-2');
  expect(b.text).toBe('warden: mesh ready — demo: 1 of 2 tasks through, 1 failed');
  expect(b.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'warden: mesh ready — demo', emoji: false } });
  expect(b.blocks[1]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: '*What happened:* 1 of 2 tasks through, 1 failed' } });
  const ctx = JSON.stringify(b.blocks[2]);
  expect(ctx).toContain('`warden mesh apply demo (merge)` · `warden mesh cancel demo` · `warden mesh status demo`');
  expect(ctx).toContain('delivery d-2');
  expect(JSON.stringify(b)).not.toMatch(/escalation|warden resume|!resume/i);
  const waiting = slackBody(meshEvent('mesh-awaiting-input', 'conflict budget spent'));
  expect(waiting.text).toBe('warden: mesh awaiting input — demo: conflict budget spent');
  expect(JSON.stringify(waiting.blocks[2])).toContain('`warden mesh resume demo [--note text]`');
});

test('JSON webhook body of a mesh alert: its event kind, the reason as sent', () => {
  const body = JSON.parse(webhookBody('json', meshEvent('mesh-failed', 'mesh failed: x'), 'd-3'));
  expect(body).toMatchObject({ event: 'mesh-failed', agentId: 'mesh-demo', reason: 'mesh failed: x', deliveryId: 'd-3' });
  expect(NotifyWorkflowInputSchema.parse({ event: meshEvent('mesh-awaiting-input', 'r') }).event.event).toBe('mesh-awaiting-input');
});
