/**
 * Action links end to end, all real: a Temporal dev server, warden workers as processes (SIGKILLed
 * in one test), a real HTTP listener receiving the webhooks, a real `warden serve` process, curl,
 * and Debian's Chromium driven by playwright-core.
 *
 * An agent spirals until its ladder escalates; the escalation webhook (json and slack format)
 * carries signed links; opening the resume link shows a confirmation page with the finding and
 * changes nothing; pressing its button (curl POST, or a click in Chromium) resumes the agent. Each
 * link answers the escalation it was issued for only: refused once that escalation was answered
 * (from the CLI, or by a sibling link) or after a later one. A replayed, expired,
 * tampered, malformed, wrong-agent or no-such-agent link is refused with a clear page and the
 * right status, and nothing changes. Links issued before a worker SIGKILL still work once after it,
 * and a replay after another SIGKILL is still refused. The real `warden irc` bot, on a real IRC
 * server, prints the links one per line, and a link read from the channel works.
 */
import { execa, type ResultPromise } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from '../../src/devserver/ports.js';
import { issueToken, newTokenId, type LinkAction } from '../../src/serve/token.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { reportWithEvaluations, spiralTurn, waitForStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { ircPerson, startIrcd } from '../helpers/ircd.js';
import { ROOT, eventually, useWorkerProcesses } from '../helpers/stack.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

const MAIN = join(ROOT, 'dist/src/cli/main.js');
const SECRET = 'links-test-secret-0123456789abcdef0123456789';
const PORT = await freePort();
const BASE = `http://127.0.0.1:${PORT}`;
const env = { WARDEN_LINK_SECRET: SECRET, WARDEN_LINK_BASE_URL: BASE };
const stack = useWorkerProcesses(env);
const TASK = 'Make `npm run build` pass.';

let hook: WebhookListener;
let serve: ResultPromise;
let browser: Browser;

beforeAll(async () => {
  hook = await startWebhookListener();
  serve = execa('node', [MAIN, 'serve', '--listen', `127.0.0.1:${PORT}`], {
    env: {
      TEMPORAL_ADDRESS: stack.server.address,
      TEMPORAL_NAMESPACE: stack.server.namespace,
      WARDEN_LOG_LEVEL: 'warn',
      WARDEN_HOME: mkdtempSync(join(tmpdir(), 'warden-links-home-')), // its hook endpoint file, not the user's
      ...env,
    },
    stdin: 'ignore',
    reject: false,
  });
  await eventually(async () => (await fetch(`${BASE}/healthz`)).ok, { what: 'warden serve listening', timeoutMs: 30_000 });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  serve?.kill('SIGTERM');
  await serve;
  await hook?.close();
});

/** curl, as a human or a script would: the status code and the page. */
async function curl(url: string, args: string[] = []): Promise<{ status: number; body: string; headers: string }> {
  const headersFile = join(mkdtempSync(join(tmpdir(), 'warden-curl-')), 'h');
  const r = await execa('curl', ['-sS', '-D', headersFile, '-o', '-', '-w', '\n%{http_code}', ...args, url], { reject: false });
  const i = r.stdout.lastIndexOf('\n');
  const { readFileSync } = await import('node:fs');
  return { status: Number(r.stdout.slice(i + 1)), body: r.stdout.slice(0, i), headers: readFileSync(headersFile, 'utf8') };
}
const post = (url: string, args: string[] = []) => curl(url, ['-X', 'POST', ...args]);
const message = (html: string) => /<h1>(.*?)<\/h1>.*?<p id="message">(.*?)<\/p>/s.exec(html)?.slice(1, 3).join(': ') ?? html;

interface JsonBody {
  event: string;
  agentId: string;
  actions?: Record<LinkAction, string>;
  actionsExpireAt?: string;
  links?: { console?: string };
}
/** The json webhook deliveries of escalations of `agentId` (newest last). */
const escalations = (agentId: string) =>
  hook
    .accepted()
    .filter((d) => (d.json as JsonBody)?.agentId === agentId && (d.json as JsonBody).event === 'escalation')
    .map((d) => d.json as JsonBody);

async function startEscalated(agentId: string, from = 1): Promise<Record<LinkAction, string>> {
  await stack.warden.start({ agentId, task: TASK, notify: { webhooks: [{ url: hook.url }, { url: `${hook.url}?format=slack`, format: 'slack' }] } });
  return escalate(agentId, from, 0);
}
async function escalate(agentId: string, from: number, evaluations: number): Promise<Record<LinkAction, string>> {
  const seen = escalations(agentId).length;
  await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 15 }, (_, i) => spiralTurn(from + i)),
    5,
    evaluations,
  );
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'awaiting-input', 'escalated');
  const body = await eventually(async () => escalations(agentId)[seen], { what: 'the escalation webhook', timeoutMs: 60_000 });
  expect(body.actions, 'links in the json webhook').toBeDefined();
  return body.actions!;
}
const snapshot = (s: AgentStatus) => ({
  state: s.state,
  step: s.escalationStep,
  transitions: s.transitions.length,
  whispers: s.pendingWhispers,
  dismissals: s.dismissals,
});

test('resume from a link with curl, steer from Chromium; every bad link refused with a clear page, nothing changed', { timeout: 600_000 }, async () => {
  const worker = stack.spawnWorker();
  const id = 'linked';
  const other = 'bystander';
  await stack.warden.start({ agentId: other, task: TASK });
  const links = await startEscalated(id);

  // The webhooks carry the links: json as fields, slack as link buttons.
  for (const a of ['resume', 'abort', 'dismiss', 'steer'] as const) expect(links[a]).toMatch(new RegExp(`^${BASE}/agents/${id}/${a}\\?token=w2\\.`));
  // And the agent's page in the web console: no token in it (the console asks for its login).
  expect(escalations(id)[0]!.links).toEqual({ console: `${BASE}/console/agents/${id}` });
  // The two channels are delivered independently: wait for the slack one too.
  const slackDelivery = await eventually(
    async () => hook.accepted().find((d) => d.json && (d.json as { blocks?: unknown[] }).blocks && JSON.stringify(d.json).includes(`agent ${id}`)),
    { what: 'the slack webhook', timeoutMs: 60_000 },
  );
  const slack = slackDelivery.json as { blocks: { type: string; elements?: { url: string }[] }[]; text: string };
  const buttons = slack.blocks.find((b) => b.type === 'actions')!.elements!.map((e) => new URL(e.url).pathname);
  expect(buttons).toEqual([`/agents/${id}/resume`, `/agents/${id}/steer`, `/agents/${id}/dismiss`, `/agents/${id}/abort`, `/console/agents/${id}`]);
  expect(slack.text).toContain(`Resume: ${BASE}/agents/${id}/resume?token=`);

  const before = snapshot(await stack.warden.status(id));
  const bystander = snapshot(await stack.warden.status(other));
  expect(before.state).toBe('awaiting-input');
  const token = new URL(links.resume).searchParams.get('token')!;

  // Opening the link (GET) shows what it will do; nothing happens yet.
  const shown = await curl(links.resume);
  expect(shown.status).toBe(200);
  expect(shown.body).toContain(`Resume agent ${id}?`);
  expect(shown.body).toContain('<form method="post">');
  expect(shown.body).toMatch(/<p id="finding">Escalation #1: <strong>SPIRALING<\/strong> — /);
  expect(shown.headers).toMatch(/content-security-policy: default-src 'none'/i);
  expect(shown.headers).toMatch(/referrer-policy: no-referrer/i);
  expect(shown.headers).not.toMatch(/^location:/im);

  // Refused, each with its page and status, changing nothing.
  const sig = token.split('.').at(-1)!;
  const bound = { escalation: 1, finding: null };
  const expired = issueToken(SECRET, { agentId: id, action: 'resume', tokenId: newTokenId(), expiresAt: Math.floor(Date.now() / 1000) - 1, ...bound });
  const ghost = issueToken(SECRET, { agentId: 'ghost', action: 'resume', tokenId: newTokenId(), expiresAt: Math.floor(Date.now() / 1000) + 600, ...bound });
  const outdated = token.replace(/^w2\.([^.]+\.[^.]+\.[^.]+\.[^.]+)\.[^.]+\.[^.]+\./, 'w1.$1.');
  const refusals: [string, string, number, RegExp][] = [
    ['tampered', links.resume.replace(sig, sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A')), 403, /Link refused: the token was not signed by this warden/],
    ['wrong agent', `${BASE}/agents/${other}/resume?token=${token}`, 403, /Link refused: wrong agent: this link is for another agent/],
    ['wrong action', `${BASE}/agents/${id}/abort?token=${token}`, 403, /wrong action: this link is for resume, not abort/],
    ['expired', `${BASE}/agents/${id}/resume?token=${expired}`, 410, /Link expired: this link expired at/],
    ['malformed', `${BASE}/agents/${id}/resume?token=not-a-token`, 400, /Not a valid link: the token does not have the eight parts/],
    ['outdated', `${BASE}/agents/${id}/resume?token=${outdated}`, 410, /Link outdated: this link comes from an older warden/],
    ['no token', `${BASE}/agents/${id}/resume`, 400, /Not a valid link: no token in the link/],
    ['no such agent', `${BASE}/agents/ghost/resume?token=${ghost}`, 404, /No such agent: there is no agent ghost/],
  ];
  for (const [what, url, status, text] of refusals) {
    for (const r of [await curl(url), await post(url)]) {
      expect(r.status, what).toBe(status);
      expect(message(r.body), what).toMatch(text);
      if (status !== 404) expect(r.body, what).toContain('Nothing was changed.');
    }
  }
  expect(snapshot(await stack.warden.status(id))).toEqual(before);
  expect(snapshot(await stack.warden.status(other))).toEqual(bystander);

  // Pressing the button (a POST to the same link) resumes the agent.
  const done = await post(links.resume);
  expect(done.status, done.body).toBe(200);
  expect(message(done.body)).toMatch(new RegExp(`Resumed: agent ${id}: resume applied: awaiting-input → running \\(now running\\)`));
  const resumed = await stack.warden.status(id);
  expect(resumed).toMatchObject({ state: 'running', escalationStep: 0 });
  expect(resumed.transitions.at(-1)).toMatchObject({ from: 'awaiting-input', to: 'running', event: 'resume' });

  // The same link again: used up, refused, nothing changes.
  const again = await post(links.resume);
  expect(again.status, again.body).toBe(410);
  expect(message(again.body)).toMatch(/Link already used: this link was already used: a link works once\. Nothing was changed\./);
  expect(snapshot(await stack.warden.status(id))).toEqual(snapshot(resumed));

  // The steer link of the same escalation is void now: one link answers an escalation.
  const sibling = await post(links.steer, ['--data-urlencode', 'text=too late']);
  expect(sibling.status, sibling.body).toBe(410);
  expect(message(sibling.body)).toMatch(/a link of escalation #1 was already used.*Nothing was changed\./);
  expect(snapshot(await stack.warden.status(id))).toEqual(snapshot(resumed));

  // Escalate again; the first resume link, while the agent waits again: still used up, and the agent stays paused.
  const second = await escalate(id, 16, 3);
  expect(second.resume).not.toBe(links.resume);
  const paused = snapshot(await stack.warden.status(id));
  const stale = await post(links.resume);
  expect(stale.status, stale.body).toBe(410);
  expect(message(stale.body)).toMatch(/already used/);
  expect(snapshot(await stack.warden.status(id))).toEqual(paused);

  // Steering from a link: a form; empty text is refused (the link stays unused); a human types
  // text in Chromium and presses the button: it is queued for the agent's next turn.
  const empty = await post(second.steer, ['--data-urlencode', 'text=   ']);
  expect(empty.status).toBe(400);
  expect(empty.body).toContain('text: write what the agent should do');
  expect(empty.body).toContain('Escalation #2:');
  const page = await browser.newPage();
  try {
    const shownInBrowser = await page.goto(second.steer);
    expect(shownInBrowser!.status()).toBe(200);
    expect(await page.title()).toBe(`Steer agent ${id}?`);
    expect(await page.textContent('#finding')).toMatch(/^Escalation #2: SPIRALING — /);
    expect(snapshot(await stack.warden.status(id))).toEqual(paused); // opening it did nothing
    await page.fill('#text', 'Look at tsconfig <paths> & the "config" module first');
    const [answer] = await Promise.all([page.waitForNavigation(), page.click('#confirm')]);
    expect(answer!.status()).toBe(200);
    expect(await page.textContent('h1')).toBe(`Steering sent: agent ${id}`);
    expect(await page.textContent('#message')).toMatch(/steering queued/);
    expect((await stack.warden.pendingWhispers(id)).at(-1)).toMatchObject({ type: 'STEERING', text: 'Look at tsconfig <paths> & the "config" module first' });
    // Back to the used link: refused on opening, no button.
    const replayed = await page.goto(second.steer);
    expect(replayed!.status()).toBe(410);
    expect(await page.textContent('#message')).toMatch(/already used/);
    expect(await page.$('#confirm')).toBeNull();
  } finally {
    await page.close();
  }
  // Its resume sibling is void too; the agent still waits for a human (the CLI answers it).
  const voided = await post(second.resume);
  expect(voided.status, voided.body).toBe(410);
  expect((await stack.warden.status(id)).state).toBe('awaiting-input');

  await stack.warden.signal(id, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  await stack.warden.signal(other, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  await stack.kill(worker);
});

test('a link issued before a worker SIGKILL works once after it; a replay after another SIGKILL is refused', { timeout: 600_000 }, async () => {
  let worker = stack.spawnWorker();
  const id = 'linked-crash';
  const links = await startEscalated(id);

  // SIGKILL the worker that issued the links; a new one picks the agent up by replay.
  await stack.kill(worker);
  worker = stack.spawnWorker();
  await eventually(async () => (await stack.warden.status(id)).state === 'awaiting-input', { timeoutMs: 120_000, what: 'status from the new worker' });
  const done = await post(links.resume);
  expect(done.status, done.body).toBe(200);
  expect(message(done.body)).toMatch(/resume applied: awaiting-input → running/);
  const after = await stack.warden.status(id);
  expect(after.state).toBe('running');

  // The agent escalates again, then SIGKILL again: the next worker rebuilds the used ids from
  // history and refuses the replay, though the agent waits for a human once more.
  const second = await escalate(id, 16, 3);
  await stack.kill(worker);
  worker = stack.spawnWorker();
  await eventually(async () => (await stack.warden.status(id)).state === 'awaiting-input', { timeoutMs: 120_000, what: 'status from the third worker' });
  const paused = snapshot(await stack.warden.status(id));
  const again = await post(links.resume);
  expect(again.status, again.body).toBe(410);
  expect(message(again.body)).toMatch(/Link already used: this link was already used/);
  expect(snapshot(await stack.warden.status(id))).toEqual(paused);
  // The other links of the first alert do not answer the second escalation.
  const old = await post(links.abort);
  expect(old.status, old.body).toBe(410);
  expect(message(old.body)).toMatch(/a link of escalation #1 was already used/);
  expect(snapshot(await stack.warden.status(id))).toEqual(paused);
  // The second alert's abort link ends the agent.
  const aborted = await post(second.abort);
  expect(aborted.status, aborted.body).toBe(200);
  expect(message(aborted.body)).toMatch(/Aborted: agent linked-crash: abort applied: awaiting-input → failed/);
  await eventually(async () => (await stack.warden.handle(id).describe()).status.name !== 'RUNNING', { what: 'the agent ended', timeoutMs: 60_000 });
  await recordHistory(stack.server.address, stack.warden.handle(id), 'links-sigkill-replay-refused');
  await stack.kill(worker);
});

test('a link answers its own escalation only: refused once answered elsewhere or after a later one, voided by a used sibling; the confirm page shows the finding', {
  timeout: 600_000,
}, async () => {
  const worker = stack.spawnWorker();
  const id = 'linked-bound';
  const first = await startEscalated(id);
  expect((await stack.warden.status(id)).escalations).toBe(1);

  // Escalation #1 is answered from the CLI: its abort link no longer acts (it used to abort the running agent).
  await stack.warden.signal(id, 'resume', { note: 'from the CLI' });
  await waitForStatus(stack.warden, id, (s) => s.state === 'running', 'resumed from the CLI');
  const running = snapshot(await stack.warden.status(id));
  const lateAbort = await post(first.abort);
  expect(lateAbort.status, lateAbort.body).toBe(409);
  expect(message(lateAbort.body)).toMatch(/Escalation already answered: escalation #1 was already answered \(the agent is running\)\. Nothing was changed\./);
  expect(snapshot(await stack.warden.status(id))).toEqual(running);

  // The agent escalates again (#2). Escalation #1's dismiss link does not answer it (it used to dismiss #2).
  const second = await escalate(id, 16, 3);
  const waiting = await stack.warden.status(id);
  expect(waiting).toMatchObject({ state: 'awaiting-input', escalations: 2 });
  const lateDismiss = await post(first.dismiss);
  expect(lateDismiss.status, lateDismiss.body).toBe(409);
  expect(message(lateDismiss.body)).toMatch(/this link is for escalation #1, and the agent has escalated again since \(#2\).*Nothing was changed\./);
  expect(snapshot(await stack.warden.status(id))).toEqual(snapshot(waiting));
  // Opening it says so too, before any button.
  const lateShown = await curl(first.dismiss);
  expect(lateShown.status).toBe(409);
  expect(lateShown.body).not.toContain('<form');

  // The confirm page of #2's dismiss link shows the finding it answers, escaped.
  const shown = await curl(second.dismiss);
  expect(shown.status, shown.body).toBe(200);
  const verdict = waiting.lastVerdict!;
  const finding = /<p id="finding">(.*?)<\/p>/s.exec(shown.body)?.[1];
  expect(finding).toContain(`Escalation #2: <strong>${verdict.pattern}</strong>`);
  expect(finding).toContain(
    verdict.message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;').slice(0, 80),
  );
  expect(snapshot(await stack.warden.status(id))).toEqual(snapshot(waiting));

  // Dismiss from #2's link; its abort and steer links are void from then on.
  const dismissed = await post(second.dismiss);
  expect(dismissed.status, dismissed.body).toBe(200);
  expect(message(dismissed.body)).toMatch(/Dismissed as a false alarm: agent linked-bound: dismiss applied: awaiting-input → running/);
  const after = snapshot(await stack.warden.status(id));
  expect(after).toMatchObject({ state: 'running', dismissals: 1 });
  for (const [what, url, args] of [
    ['abort', second.abort, []],
    ['steer', second.steer, ['--data-urlencode', 'text=keep going']],
  ] as const) {
    const void_ = await post(url, [...args]);
    expect(void_.status, `${what}: ${void_.body}`).toBe(410);
    expect(message(void_.body), what).toMatch(
      /Link already used: a link of escalation #2 was already used: once one of an escalation&#39;s links is used, the others stop working\. Nothing was changed\./,
    );
  }
  expect(snapshot(await stack.warden.status(id))).toEqual(after);
  expect((await stack.warden.handle(id).describe()).status.name).toBe('RUNNING');

  await stack.warden.signal(id, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  await stack.kill(worker);
});

test('the IRC bot prints the links, one whole link per line; one read from the channel resumes the agent', { timeout: 600_000 }, async () => {
  const ircd = await startIrcd();
  const watcher = await ircPerson(ircd, 'watcher', '#alerts');
  const bot = execa(
    'node',
    [MAIN, 'irc', '--server', ircd.host, '--port', String(ircd.port), '--nick', 'linkbot', '--channel', '#alerts', '--address', stack.server.address],
    {
      env: { WARDEN_LOG_LEVEL: 'warn', TEMPORAL_NAMESPACE: stack.server.namespace, ...env },
      stdin: 'ignore',
      reject: false,
    },
  );
  const worker = stack.spawnWorker();
  try {
    const id = 'linked-irc';
    await stack.warden.start({ agentId: id, task: TASK, notify: { irc: { channel: '#alerts' } } });
    await reportWithEvaluations(
      stack.warden,
      id,
      Array.from({ length: 15 }, (_, i) => spiralTurn(1 + i)),
      5,
      0,
    );
    await waitForStatus(stack.warden, id, (s) => s.state === 'awaiting-input', 'escalated');
    const lines: Record<string, string> = {};
    for (const a of ['resume', 'steer', 'dismiss', 'abort']) {
      const h = await watcher.waitFor('linkbot', new RegExp(`^\\[warden\\] ${a} ${id}: `), { timeoutMs: 120_000 });
      lines[a] = h.message.slice(h.message.indexOf(': ') + 2);
      expect(lines[a]).toMatch(new RegExp(`^${BASE}/agents/${id}/${a}\\?token=w2\\.[A-Za-z0-9_.-]+$`));
    }
    await watcher.waitFor('linkbot', /^\[warden\] each link works once, until \d{4}-/);
    const page = await watcher.waitFor('linkbot', new RegExp(`^\\[warden\\] console ${id}: `), { timeoutMs: 60_000 });
    expect(page.message).toBe(`[warden] console ${id}: ${BASE}/console/agents/${id}`);
    const done = await post(lines.resume!);
    expect(done.status, done.body).toBe(200);
    expect(message(done.body)).toMatch(/resume applied: awaiting-input → running/);
    expect((await stack.warden.status(id)).state).toBe('running');
    expect((await post(lines.resume!)).status).toBe(410);
    await stack.warden.signal(id, 'stop', { reason: 'test over', drainTimeoutMs: 0 });
  } finally {
    bot.kill('SIGTERM');
    await bot;
    await watcher.quit();
    await stack.kill(worker);
    await ircd.stop();
  }
});

test('warden serve refuses a weak secret and says why; without one it answers hook events only', async () => {
  const r = await execa('node', [MAIN, 'serve', '--listen', '127.0.0.1:0'], {
    env: { TEMPORAL_ADDRESS: stack.server.address, WARDEN_LINK_SECRET: 'short' },
    extendEnv: false,
    reject: false,
  });
  expect(r.exitCode).toBe(2);
  expect(r.stderr).toMatch(/warden serve refuses to start: WARDEN_LINK_SECRET is too short: at least 32 characters/);

  // No secret: links are off (a link is answered 404 and says why), the hook endpoint runs.
  const home = mkdtempSync(join(tmpdir(), 'warden-serve-nolinks-'));
  const serve = execa('node', [MAIN, 'serve', '--listen', '127.0.0.1:0', '--json'], {
    env: { TEMPORAL_ADDRESS: stack.server.address, WARDEN_HOME: home, HOME: home, PATH: process.env.PATH ?? '' },
    extendEnv: false,
    reject: false,
  });
  try {
    const ready = await new Promise<{ url: string; links: boolean }>((resolve, reject) => {
      serve.stdout!.once('data', (d: Buffer) => resolve(JSON.parse(d.toString())));
      serve.once('exit', () => reject(new Error('serve exited')));
    });
    expect(ready.links).toBe(false);
    const link = await fetch(`${ready.url}/agents/x/resume?token=abc`);
    expect(link.status).toBe(404);
    expect(await link.text()).toMatch(/Action links are off/);
    const hook = await fetch(`${ready.url}/hooks/claude`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(hook.status).toBe(401); // the hook endpoint is there, and wants its token
  } finally {
    serve.kill('SIGTERM');
    await serve;
    rmSync(home, { recursive: true, force: true });
  }
});
