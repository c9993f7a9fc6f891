import { expect, test } from 'vitest';
import type { NotificationEvent } from '../../src/domain/activity-types.js';
import { IRC_LINE_MAX, NotifyWorkflowInputSchema, ircAlertLines, notifyWorkflowId, slackBody, slackEscape } from '../../src/domain/notify.js';
import { AgentSpecSchema, WebhookChannelSchema } from '../../src/domain/schemas.js';

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
    expect(l.length).toBeLessThanOrEqual(IRC_LINE_MAX);
  }
  expect(lines[1]).toMatch(/^task: x PRIVMSG #other :owned y+/);
});

test('IRC alert for the other events says how to answer them', () => {
  expect(ircAlertLines({ ...escalation, event: 'budget-exhausted', verdict: undefined, whisper: undefined, reason: 'costUsd budget 1 reached' })).toEqual([
    '[warden] BUDGET EXHAUSTED agent fixer (step 3): costUsd budget 1 reached',
    'task: Make `npm run build` pass. Then run the tests.',
    'answer: !status fixer (the agent has stopped; start a new attempt to continue)',
  ]);
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
