/**
 * IRC and chat webhooks end to end, all real: a real IRC server (ngircd on a loopback port), the
 * real `warden irc` bot as its own process (so it can be SIGKILLed), a real dev server and
 * workers, real IRC clients reading and typing in the channel, and real HTTP listeners.
 *
 * - notifyWorkflow posts an escalation to #alerts and a Slack-format body to a webhook, and reports
 *   a rejecting webhook as failed with its cause;
 * - `!resume` from an allowlisted nick resumes a real escalated agent; from another nick it is
 *   politely refused; `!status`, `!steer`, `!abort` act through the client;
 * - a SIGKILLed bot, restarted, posts the alert raised while it was away;
 * - with two warden worker processes (and even two bots), each alert appears once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { NotificationEvent } from '../../src/domain/contract/activity-types.js';
import type { DeliveryReport, NotifyWorkflowInput } from '../../src/domain/notify/notify.js';
import { finalStatus, reportWithEvaluations, spiralTurn, waitForStatus } from '../helpers/agents.js';
import { ircPerson, startIrcd, type Ircd, type IrcPerson } from '../helpers/ircd.js';
import { ROOT, eventually, useStack, workerProcess } from '../helpers/stack.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

const CHANNEL = '#alerts';
const BOT = 'wardenbot';
const stack = useStack();
let ircd: Ircd;
let watcher: IrcPerson;
let alice: IrcPerson;
let mallory: IrcPerson;
const procs: Proc[] = [];
/** This machine is shared and often loaded: generous limits; nothing here is a timed assertion. */
const SLOW = { timeout: 300_000 };

interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
  running(): boolean;
}
/** The real `warden irc` process; resolves once it says it is connected and polling. */
async function startBot(nick = BOT): Promise<Proc> {
  const args = [
    'irc',
    '--server',
    ircd.host,
    '--port',
    String(ircd.port),
    '--nick',
    nick,
    '--channel',
    CHANNEL,
    '--allow',
    'alice,ops!*@10.9.8.7',
    '--address',
    stack.server.address,
  ];
  const child = spawn('node', [join(ROOT, 'dist/src/cli/main.js'), ...args], {
    env: { ...process.env, WARDEN_LOG_LEVEL: process.env.WARDEN_TEST_LOG ?? 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const proc = track(child);
  let err = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bot did not get ready: ${err}`)), 120_000);
    child.stderr!.on('data', (d: Buffer) => {
      if (process.env.WARDEN_TEST_LOG) process.stderr.write(d);
      err += d.toString();
      if (err.includes('warden irc: connected')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void proc.exited.then(() => reject(new Error(`bot exited ${child.exitCode ?? child.signalCode}: ${err}`)));
  });
  return proc;
}

/** A bot, started unless one runs (so each test also runs alone with -t). */
async function ensureBot(): Promise<void> {
  if (!procs.some((p) => p.running())) await startBot();
}

function track(child: ChildProcess): Proc {
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const proc = { child, exited, running: () => child.exitCode === null && child.signalCode === null };
  procs.push(proc);
  return proc;
}

async function kill(p: Proc, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (p.running()) p.child.kill(signal);
  await p.exited;
}

function event(agentId: string, over: Partial<NotificationEvent> = {}): NotificationEvent {
  return {
    event: 'escalation',
    agentId,
    workflowId: `agent-${agentId}`,
    runId: '0193aaaa-0000-0000-0000-000000000000',
    task: 'Make `npm run build` pass.',
    step: 3,
    verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: `${agentId}: the same failing build 5 times (error TS2307)` },
    whisper: 'ESCALATION: a human has been asked to look.',
    reason: 'escalated: SPIRALING',
    at: new Date().toISOString(),
    ...over,
  };
}

async function notify(workflowId: string, input: NotifyWorkflowInput, taskQueue = 'warden') {
  return stack.warden.client.workflow.start('notifyWorkflow', { taskQueue, workflowId, args: [input] });
}

beforeAll(async () => {
  ircd = await startIrcd();
  watcher = await ircPerson(ircd, 'watcher', CHANNEL);
  alice = await ircPerson(ircd, 'alice', CHANNEL);
  mallory = await ircPerson(ircd, 'mallory', CHANNEL);
});
afterAll(async () => {
  await Promise.all(procs.map((p) => kill(p)));
  for (const p of [watcher, alice, mallory]) await p?.quit();
  await ircd?.stop();
});

test('an escalation reaches #alerts through notifyWorkflow; a Slack-format webhook gets {text, blocks}; a rejecting one is reported', SLOW, async () => {
  await startBot();
  const slack: WebhookListener = await startWebhookListener();
  const rejecting: WebhookListener = await startWebhookListener({ failFirst: 100, failStatus: 400 });
  try {
    const e = event('fixer');
    const h = await notify('notify-fixer-1', {
      event: e,
      webhooks: [{ url: slack.url, format: 'slack' }, { url: rejecting.url }],
      irc: { channel: CHANNEL },
    });
    const report = (await h.result()) as DeliveryReport;
    expect(report.ok).toBe(false);
    expect(report.deliveries).toEqual([
      { channel: 'webhook', url: slack.url, ok: true, status: 200 },
      { channel: 'webhook', url: rejecting.url, ok: false, cause: expect.stringMatching(/^WebhookRejected: webhook .* answered (HTTP )?400/) },
      { channel: 'irc', target: CHANNEL, ok: true, lines: 5 },
    ]);
    // A 400 is not retried.
    expect(rejecting.deliveries).toHaveLength(1);

    // In the channel: the alert, in order, from the bot.
    await watcher.waitFor(BOT, /how|answer/);
    const lines = watcher.from(BOT).map((l) => l.message);
    expect(lines).toEqual([
      '[warden] ESCALATION agent fixer (step 3): escalated: SPIRALING',
      'task: Make `npm run build` pass.',
      'verdict: CORRECTION SPIRALING — fixer: the same failing build 5 times (error TS2307)',
      'told the agent: ESCALATION: a human has been asked to look.',
      // The alert's delivery id (its notify workflow's id) ends it.
      'answer: !resume fixer [note] · !steer fixer <text> · !abort fixer [reason] · !status fixer · alert notify-fixer-1',
    ]);
    expect(watcher.from(BOT)[0]!.target).toBe(CHANNEL);

    // The Slack body: readable text plus blocks.
    expect(slack.deliveries).toHaveLength(1);
    const body = slack.deliveries[0]!.json as { text: string; blocks: { type: string }[] };
    expect(body.text).toBe('warden: escalation — agent fixer: escalated: SPIRALING');
    expect(body.blocks.map((b) => b.type)).toEqual(['header', 'section', 'context']);
    expect(slack.deliveries[0]!.body).toContain('*Verdict:* CORRECTION SPIRALING');
    expect(slack.deliveries[0]!.headers['x-warden-event']).toBe('escalation');
  } finally {
    await slack.close();
    await rejecting.close();
  }
});

test('!resume from an allowlisted nick resumes a real escalated agent; from anyone else it is refused', SLOW, async () => {
  await ensureBot();
  const agentId = 'irc-spiral';
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.', notify: { irc: { channel: CHANNEL } } });
  await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1)),
  );
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'awaiting-input', 'escalated');

  // Not on the allowlist: refused, politely, and nothing changes.
  let since = watcher.heard.length;
  mallory.say(`!resume ${agentId} trust me`);
  await watcher.waitFor(BOT, /^mallory: sorry, you are not on this bot's allowlist, so I cannot resume agents/, { since });
  const malloryAnswered = Date.now();
  await new Promise((r) => setTimeout(r, 1000));
  expect((await stack.warden.status(agentId)).state).toBe('awaiting-input');

  // Anyone may read; allowlisted nicks as often as they like.
  since = watcher.heard.length;
  alice.say(`!status ${agentId}`);
  await watcher.waitFor(BOT, new RegExp(`^alice: ${agentId} is awaiting-input \\(escalated: SPIRALING.*\\) · step 3/3 · 15 turns`), { since });

  // alice is: the agent resumes, the ladder resets, the record says who.
  since = watcher.heard.length;
  alice.say(`!resume ${agentId} looked at it, go on`);
  await watcher.waitFor(BOT, new RegExp(`^alice: resume sent to ${agentId}; it is now running\\.`), { since });
  const s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ state: 'running', paused: false, escalationStep: 0 });
  expect(s.transitions.at(-1)).toMatchObject({ from: 'awaiting-input', to: 'running', event: 'resume', cause: 'resumed: looked at it, go on (alice on IRC)' });

  // A refused transition gets the state table's reason.
  since = watcher.heard.length;
  alice.say(`!resume ${agentId}`);
  await watcher.waitFor(BOT, new RegExp(`^alice: cannot resume ${agentId}: 'resume' is not allowed while running`), { since });

  // !steer reaches the agent's next turn.
  since = watcher.heard.length;
  alice.say(`!steer ${agentId} look at src/config.ts first`);
  await watcher.waitFor(BOT, new RegExp(`^alice: steering queued for ${agentId}`), { since });
  // The next turn carries it (after the ESCALATION whisper still queued from the pause).
  const reply = await stack.warden.reportTurn(agentId, spiralTurn(100));
  expect(reply.whispers.map((w) => w.type)).toEqual(['ESCALATION', 'STEERING']);
  expect(reply.whispers[1]!.text).toContain('look at src/config.ts first');

  // Unknown agents; mallory again within the minute: no answer, and nothing done.
  since = watcher.heard.length;
  mallory.say(`!abort ${agentId}`);
  mallory.say(`!status ${agentId}`);
  alice.say('!status nobody-here');
  await watcher.waitFor(BOT, /^alice: no such agent: nobody-here/, { since });
  await new Promise((r) => setTimeout(r, 2000));
  expect(watcher.heard.slice(since).filter((l) => l.nick === BOT && l.message.startsWith('mallory'))).toEqual([]);
  expect((await stack.warden.status(agentId)).state).toBe('running');

  // A minute after the bot last answered a nick outside the allowlist, it answers one again.
  await new Promise((r) => setTimeout(r, Math.max(0, malloryAnswered + 61_000 - Date.now())));
  since = watcher.heard.length;
  mallory.say(`!status ${agentId}`);
  await watcher.waitFor(BOT, new RegExp(`^mallory: ${agentId} is running · step 0/3`), { since });

  // alice aborts: the agent ends.
  since = watcher.heard.length;
  alice.say(`!abort ${agentId} enough`);
  await watcher.waitFor(BOT, new RegExp(`^alice: abort sent to ${agentId}`), { since });
  const final = await finalStatus(stack.warden.handle(agentId));
  expect(final.state).toBe('failed');
  expect(final.stateReason).toMatch(/enough \(alice on IRC\)/);
});

test('!dismiss from an allowlisted nick marks a real escalation a false alarm and resumes the agent', SLOW, async () => {
  await ensureBot();
  const agentId = 'irc-dismiss';
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.', notify: { irc: { channel: CHANNEL } } });
  await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1)),
  );
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'awaiting-input', 'escalated');

  let since = watcher.heard.length;
  alice.say(`!dismiss ${agentId} the build is flaky upstream`);
  await watcher.waitFor(BOT, new RegExp(`^alice: ${agentId}: dismissed as a false alarm; the escalation is resumed .*; it is now running\\.`), { since });
  const s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ state: 'running', escalationStep: 0, dismissals: 1 });
  expect(s.lastDismissal?.note).toBe('the build is flaky upstream (alice on IRC)');

  // Nothing flagged since: the workflow refuses, and the bot says why.
  since = watcher.heard.length;
  alice.say(`!dismiss ${agentId}`);
  await watcher.waitFor(BOT, new RegExp(`^alice: cannot dismiss ${agentId}: `), { since });
  expect((await stack.warden.status(agentId)).dismissals).toBe(1);
});

test('a SIGKILLed bot, restarted, posts the alert raised while it was away', SLOW, async () => {
  await ensureBot();
  for (const b of procs.filter((p) => p.running())) await kill(b, 'SIGKILL');
  const since = watcher.heard.length;
  const h = await notify('notify-missed-1', { event: event('missed'), webhooks: [], irc: { channel: CHANNEL } });
  // The alert waits on the warden-irc queue: nothing is posted while the bot is away.
  await new Promise((r) => setTimeout(r, 3000));
  expect(watcher.heard.slice(since).filter((l) => /missed/.test(l.message))).toEqual([]);
  const d = await h.describe();
  expect(d.status.name).toBe('RUNNING');

  await startBot();
  await watcher.waitFor(/^wardenbot/, /^\[warden\] ESCALATION agent missed/, { since });
  const report = (await h.result()) as DeliveryReport;
  expect(report).toMatchObject({ ok: true, deliveries: [{ channel: 'irc', target: CHANNEL, ok: true, lines: 5 }] });
  await watcher.waitFor(/^wardenbot/, /^answer: !resume missed/, { since });
  expect(watcher.heard.slice(since).filter((l) => /^\[warden\] ESCALATION agent missed/.test(l.message))).toHaveLength(1);
});

test('two warden workers (and a second bot): each alert appears once', SLOW, async () => {
  const queue = 'warden-two-workers';
  const workers = [workerProcess(stack.server, { WARDEN_TASK_QUEUE: queue }), workerProcess(stack.server, { WARDEN_TASK_QUEUE: queue })];
  try {
    await ensureBot();
    await startBot('wardenbot2');
    // Both workers poll the queue before the alerts are raised.
    await eventually(
      async () => {
        const d = await stack.warden.client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: queue }, taskQueueType: 1 });
        return (d.pollers?.length ?? 0) >= 2;
      },
      { timeoutMs: 120_000, what: 'two workers polling' },
    );
    const since = watcher.heard.length;
    const ids = Array.from({ length: 6 }, (_, i) => `dup-${i}`);
    const handles = await Promise.all(ids.map((id) => notify(`notify-${id}`, { event: event(id), webhooks: [], irc: { channel: CHANNEL } }, queue)));
    const reports = (await Promise.all(handles.map((h) => h.result()))) as DeliveryReport[];
    expect(reports.every((r) => r.ok)).toBe(true);
    // Let any duplicate that might come arrive before counting.
    await new Promise((r) => setTimeout(r, 2000));
    const heard = watcher.heard.slice(since).filter((l) => /^wardenbot/.test(l.nick));
    for (const id of ids) {
      expect(
        heard.filter((l) => l.message.startsWith(`[warden] ESCALATION agent ${id} `)),
        id,
      ).toHaveLength(1);
      expect(
        heard.filter((l) => l.message.startsWith(`answer: !resume ${id} `)),
        id,
      ).toHaveLength(1);
    }
    // Each alert's lines come from one bot, in order.
    for (const id of ids) {
      const mine = heard.filter((l) => l.message.includes(` ${id} `) || l.message.includes(` ${id}:`));
      expect(new Set(mine.map((l) => l.nick)).size, id).toBe(1);
    }
  } finally {
    for (const w of workers) w.kill('SIGKILL');
    await Promise.allSettled(workers);
  }
});

// Enabled once the agent workflow starts notifyWorkflow for its alerts (issue 7 wiring): an agent
// with `notify.irc` escalates and the alert appears in the channel without anyone calling notify.
test('an agent with notify.irc escalates → the alert appears in #alerts', SLOW, async () => {
  const agentId = 'irc-wired';
  await ensureBot();
  const since = watcher.heard.length;
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.', notify: { irc: { channel: CHANNEL } } });
  await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1)),
  );
  await watcher.waitFor(/^wardenbot/, new RegExp(`^\\[warden\\] ESCALATION agent ${agentId} \\(step 3\\)`), { since });
  await watcher.waitFor(/^wardenbot/, new RegExp(`^answer: !resume ${agentId}`), { since });
  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
  await finalStatus(stack.warden.handle(agentId));
});

test('an alert built so that a 350-byte split would start a line with "!abort victim": no line the bot sends starts with !', SLOW, async () => {
  await ensureBot();
  const since = watcher.heard.length;
  // "told the agent: " and the filler make exactly 350 bytes: the IRC library's own split would put
  // "!abort victim" at the start of the next line, a command to any bot in the channel.
  const whisper = `${'x'.repeat(350 - 'told the agent: '.length)} !abort victim`;
  const h = await notify('notify-inject-1', { event: event('inject', { whisper }), webhooks: [], irc: { channel: CHANNEL } });
  expect(((await h.result()) as DeliveryReport).ok).toBe(true);
  await watcher.waitFor(/^wardenbot/, /^answer: !resume inject/, { since });
  const lines = watcher.heard
    .slice(since)
    .filter((l) => /^wardenbot/.test(l.nick))
    .map((l) => l.message);
  // The text is all there, on a continuation line …
  expect(lines.some((l) => l.includes('!abort victim'))).toBe(true);
  // … and no line starts with the command character.
  expect(lines.filter((l) => l.startsWith('!'))).toEqual([]);
  expect(lines.filter((l) => l.startsWith('[warden] ESCALATION agent inject '))).toHaveLength(1);
});

test('a !help flood from a nick outside the allowlist: at most one reply, the bot stays, an alert raised meanwhile arrives once', SLOW, async () => {
  // A fresh bot, alone in the channel.
  for (const b of procs.filter((p) => p.running())) await kill(b, 'SIGTERM');
  await startBot();
  const since = watcher.heard.length;
  const quitsBefore = watcher.quits.length;
  for (let i = 0; i < 50; i++) mallory.say('!help');
  const h = await notify('notify-flooded-1', { event: event('flooded'), webhooks: [], irc: { channel: CHANNEL } });
  // The server relays mallory's lines slowly; once the watcher has them all, so has the bot.
  await eventually(async () => watcher.heard.slice(since).filter((l) => l.nick === 'mallory').length >= 50, { timeoutMs: 120_000, what: 'the flood relayed' });
  const report = (await h.result()) as DeliveryReport;
  expect(report).toMatchObject({ ok: true, deliveries: [{ channel: 'irc', target: CHANNEL, ok: true }] });
  // Still connected and answering: alice (allowlisted) gets her answer after the flood.
  alice.say('!help');
  await watcher.waitFor(BOT, /^alice: !status <agent>/, { since });
  await new Promise((r) => setTimeout(r, 2000));
  const fromBot = watcher.heard.slice(since).filter((l) => l.nick === BOT);
  expect(fromBot.filter((l) => l.message.startsWith('mallory')).length).toBeLessThanOrEqual(1);
  expect(watcher.quits.slice(quitsBefore).filter((q) => q.nick === BOT)).toEqual([]);
  // The alert: once, and posted on its first attempt (no retry while the bot was busy).
  expect(fromBot.filter((l) => l.message.startsWith('[warden] ESCALATION agent flooded '))).toHaveLength(1);
  expect(fromBot.filter((l) => l.message.startsWith('answer: !resume flooded '))).toHaveLength(1);
  const history = await h.fetchHistory();
  const attempts = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
  expect(attempts).toEqual([1]);
});
