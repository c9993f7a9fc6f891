/**
 * Action links in the agent: the `link` update's validator refuses a replay, an expired link, an
 * action the agent cannot take and bad input before anything changes; the handler records the token
 * id (bounded, carried) and applies the same control as the signal. And how notifications show links.
 */
import { describe, expect, it } from 'vitest';
import { LinkRefused, escalationProblem, escalationView, validateLink } from '../../src/domain/agent/links.js';
import { applyLink } from '../helpers/signal.js';
import { findingId, findingSignature } from '../../src/domain/judgement/finding.js';
import type { Verdict } from '../../src/domain/contract/schemas.js';
import { MAX_USED_LINKS } from '../../src/domain/agent/link-state.js';
import { carriedForContinueAsNew } from '../../src/domain/agent/bytes.js';
import { ircLinkLines, slackWithLinks, webhookBodyWithLinks } from '../../src/domain/notify/notify-links.js';
import { consoleLinkFor, linksForDelivery } from '../../src/serve/issue.js';
import { IRC_LINE_MAX, byteLength, slackBody, webhookBody } from '../../src/domain/notify/notify.js';
import type { NotificationEvent } from '../../src/domain/contract/activity-types.js';
import { T0, testAgent } from '../helpers/core.js';
import { signal } from '../helpers/signal.js';

const id = (n: number) => `tok${String(n).padStart(19, '0')}`;
const VERDICT: Verdict = { kind: 'ESCALATION', pattern: 'SPIRALING', message: 'retries the build' };
const FINDING = findingId(findingSignature(VERDICT));
const req = (n: number, action = 'resume', extra: Record<string, unknown> = {}) => ({
  action,
  tokenId: id(n),
  expiresAt: T0 / 1000 + 3600,
  escalation: 1,
  finding: FINDING,
  ...extra,
});

/** An agent waiting on its escalation #`n`, raised for VERDICT (its case recorded as escalated). */
function escalated(n = 1, verdict = VERDICT) {
  const a = testAgent();
  a.core.s.state = 'awaiting-input';
  a.core.s.awaitingCause = 'escalation';
  a.core.s.ladder = { step: 3, escalations: n };
  a.core.s.cases = [
    { seq: n, at: 'x', verdict, signature: findingSignature(verdict), reason: 'interval', turns: [], evidenceFrom: 0, escalated: true, decision: null },
  ];
  a.core.s.flaggedSeq = n;
  return a;
}
const refusal = (fn: () => void): { name: string; message: string } => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LinkRefused);
    return e as LinkRefused;
  }
  throw new Error('not refused');
};

describe('the link update', () => {
  it("pause from a budget warning's link (bound to no escalation) pauses a running agent; a paused one refuses it", () => {
    const a = testAgent();
    a.core.s.state = 'running';
    const pause = req(1, 'pause', { escalation: 0, finding: undefined });
    validateLink(a, pause);
    expect(applyLink(a, pause)).toEqual({ action: 'pause', applied: true, state: 'paused-by-user', detail: 'pause applied: running → paused-by-user' });
    expect(a.core.s.pauseReason).toBe('paused from an action link');
    expect(refusal(() => validateLink(a, req(2, 'pause', { escalation: 0, finding: undefined })))).toMatchObject({
      name: 'LinkNotApplicable',
      message: 'the agent is paused-by-user: nothing to pause',
    });
  });

  it('resume from a link resumes an escalated agent and records the token id; a replay is refused before it changes anything', () => {
    const a = escalated();
    validateLink(a, req(1));
    expect(applyLink(a, req(1))).toEqual({ action: 'resume', applied: true, state: 'running', detail: 'resume applied: awaiting-input → running' });
    expect(a.core.s.usedLinks).toEqual([{ id: id(1), until: T0 / 1000 + 3600 }]);
    a.core.s.state = 'awaiting-input'; // escalated again
    a.core.s.awaitingCause = 'escalation';
    a.core.s.ladder = { step: 3, escalations: 2 };
    expect(refusal(() => validateLink(a, req(1)))).toMatchObject({ name: 'LinkUsed', message: /already used/ });
    validateLink(a, req(2, 'resume', { escalation: 2 })); // a link of the new escalation is fine
  });

  it('refuses an expired link, a malformed request, and an action the agent cannot take now', () => {
    const a = escalated();
    expect(refusal(() => validateLink(a, req(1, 'resume', { expiresAt: T0 / 1000 })))).toMatchObject({ name: 'LinkExpired' });
    expect(refusal(() => validateLink(a, { ...req(1), tokenId: 'x' }))).toMatchObject({ name: 'LinkInvalid', message: /tokenId/ });
    expect(refusal(() => validateLink(a, req(1, 'delete')))).toMatchObject({ name: 'LinkInvalid', message: /action/ });
    expect(refusal(() => validateLink(a, req(1, 'steer')))).toMatchObject({ name: 'LinkInvalid', message: /text: steering needs text/ });
    expect(refusal(() => validateLink(a, { ...req(1), extra: 1 }))).toMatchObject({ name: 'LinkInvalid' });
    a.core.s.cases = [];
    expect(refusal(() => validateLink(a, req(1, 'dismiss')))).toMatchObject({ name: 'LinkNotApplicable', message: /nothing to dismiss/ });
    a.core.s.state = 'running';
    expect(refusal(() => validateLink(a, req(1, 'resume', { escalation: 0 })))).toMatchObject({
      name: 'LinkNotApplicable',
      message: /the agent is running: nothing to resume/,
    });
    a.core.s.state = 'done';
    expect(refusal(() => validateLink(a, req(1, 'steer', { text: 'x', escalation: 0 })))).toMatchObject({ name: 'LinkNotApplicable', message: /done/ });
    expect(a.core.s.usedLinks).toEqual([]);
  });

  it('steer and abort apply the same control as their signals', () => {
    const a = escalated();
    expect(applyLink(a, req(1, 'steer', { text: 'Check the tsconfig paths' }))).toMatchObject({ applied: true, detail: /steering queued/ });
    expect(a.core.s.pendingWhispers.at(-1)).toMatchObject({ type: 'STEERING', text: 'Check the tsconfig paths' });
    expect(applyLink(a, req(2, 'abort'))).toMatchObject({ applied: true, state: 'failed' });
    expect(a.rec.cancels).toBe(1);
  });

  it('used ids are forgotten when their links expire, bounded meanwhile, and carried across continue-as-new', () => {
    const a = escalated();
    a.core.s.usedLinks = Array.from({ length: MAX_USED_LINKS }, (_, i) => ({ id: id(i + 100), until: T0 / 1000 + 60 }));
    expect(refusal(() => validateLink(a, req(1)))).toMatchObject({ name: 'LinkLimit' });
    a.clock.advance(61_000); // all of those links have expired
    validateLink(a, req(1));
    applyLink(a, req(1));
    expect(a.core.s.usedLinks).toEqual([{ id: id(1), until: T0 / 1000 + 3600 }]);
    expect(carriedForContinueAsNew(a, {}).usedLinks).toEqual(a.core.s.usedLinks);
    const next = testAgent({}, { carried: carriedForContinueAsNew(a, {}) });
    next.core.s.state = 'awaiting-input';
    expect(refusal(() => validateLink(next, req(1)))).toMatchObject({ name: 'LinkUsed' });
  });
});

describe("an escalation's links answer that escalation only", () => {
  it('a link of escalation #1 is refused once the agent escalated again (#2), and changes nothing', () => {
    const a = escalated(2);
    const before = structuredClone(a.core.s);
    for (const action of ['dismiss', 'resume', 'abort'])
      expect(refusal(() => validateLink(a, req(1, action)))).toMatchObject({
        name: 'LinkAnswered',
        message: 'this link is for escalation #1, and the agent has escalated again since (#2): use the links of the newest notification',
      });
    expect(a.core.s).toEqual(before);
    validateLink(a, req(2, 'dismiss', { escalation: 2 }));
  });

  it('a link is refused once its escalation was answered elsewhere (resume, dismiss or abort from the CLI, IRC, Temporal)', () => {
    for (const answer of ['resume', 'dismiss', 'abort'] as const) {
      const a = escalated();
      signal(a, answer, {});
      expect(a.core.s.state).not.toBe('awaiting-input');
      const problem = refusal(() => validateLink(a, req(1, answer === 'abort' ? 'steer' : 'abort', { text: 'x' })));
      expect(problem.name, answer).toMatch(/LinkAnswered|LinkNotApplicable/);
      if (answer !== 'abort') expect(problem).toMatchObject({ name: 'LinkAnswered', message: 'escalation #1 was already answered (the agent is running)' });
    }
  });

  it('a used link voids its siblings (every other action of the same escalation), steer included', () => {
    const a = escalated();
    validateLink(a, req(1, 'steer', { text: 'look at the config' }));
    applyLink(a, req(1, 'steer', { text: 'look at the config' }));
    expect(a.core.s).toMatchObject({ state: 'awaiting-input', linkedEscalation: 1 });
    for (const action of ['resume', 'abort', 'dismiss'])
      expect(refusal(() => validateLink(a, req(2, action)))).toMatchObject({
        name: 'LinkUsed',
        message: /a link of escalation #1 was already used: once one of an escalation's links is used, the others stop working/,
      });
    // The next escalation's links work.
    a.core.s.ladder = { step: 3, escalations: 2 };
    validateLink(a, req(3, 'resume', { escalation: 2 }));
    // The voiding survives continue-as-new.
    const next = testAgent({}, { carried: carriedForContinueAsNew(a, {}) });
    expect(next.core.s.linkedEscalation).toBe(1);
  });

  it("a link for another finding than the escalation's is refused; a request that names no escalation is refused as outdated", () => {
    const a = escalated();
    expect(refusal(() => validateLink(a, req(1, 'resume', { finding: '0123456789abcdef' })))).toMatchObject({
      name: 'LinkAnswered',
      message: /another finding/,
    });
    const { escalation: _e, finding: _f, ...old } = req(1);
    expect(refusal(() => validateLink(a, old))).toMatchObject({ name: 'LinkInvalid', message: /does not say which escalation/ });
    // Still decoded by the handler (a history recorded before links named their escalation replays).
    expect(applyLink(a, old)).toMatchObject({ applied: true });
    expect(a.core.s.linkedEscalation).toBe(0);
  });

  it('the view the confirm page shows: the escalation, whether it waits, its finding', () => {
    expect(escalationView(escalated(3).core.s)).toEqual({
      escalations: 3,
      open: true,
      linked: 0,
      state: 'awaiting-input',
      finding: { id: FINDING, pattern: 'SPIRALING', message: 'retries the build' },
    });
    const fresh = testAgent();
    expect(escalationView(fresh.core.s)).toMatchObject({ escalations: 0, open: false, finding: null });
    // Links of other alerts (the agent's own CLI waiting for its human) are bound to no escalation.
    expect(escalationProblem(escalationView(fresh.core.s), { escalation: 0 })).toBeNull();
    expect(escalationProblem({ ...escalationView(escalated().core.s), linked: 0 }, { escalation: 2 })).toMatchObject({ kind: 'LinkAnswered' });
  });
});

describe('links in notifications', () => {
  const event: NotificationEvent = {
    event: 'escalation',
    agentId: 'fixer',
    workflowId: 'agent-fixer',
    runId: 'r1',
    task: 'x',
    step: 3,
    reason: 'stuck',
    at: '2026-11-25T01:00:00Z',
  };
  const links = {
    actions: { resume: 'https://w.example/agents/fixer/resume?token=t1', abort: 'https://w.example/agents/fixer/abort?token=t2' },
    expiresAt: '2026-11-25T02:00:00.000Z',
  };

  it('json: the links as fields; no links, no fields', () => {
    const body = JSON.parse(webhookBodyWithLinks('json', event, 'd1', links));
    expect(body).toMatchObject({ agentId: 'fixer', deliveryId: 'd1', actions: links.actions, actionsExpireAt: links.expiresAt });
    expect(JSON.parse(webhookBodyWithLinks(undefined, event, 'd1', null))).toEqual({ ...event, deliveryId: 'd1' });
    // Without links, every body is byte for byte what it was (signatures and receivers unchanged).
    for (const f of [undefined, 'json', 'slack'] as const) expect(webhookBodyWithLinks(f, event, 'd1', null)).toBe(webhookBody(f, event, 'd1'));
  });

  it('slack: link buttons and the bare URLs in the fallback text', () => {
    const body = JSON.parse(webhookBodyWithLinks('slack', event, 'd1', links));
    const actions = body.blocks.find((b: { type: string }) => b.type === 'actions');
    expect(actions.elements.map((e: { url: string; text: { text: string } }) => [e.text.text, e.url])).toEqual([
      ['Resume', links.actions.resume],
      ['Abort', links.actions.abort],
    ]);
    expect(body.text).toContain(`Resume: ${links.actions.resume}`);
    expect(slackWithLinks(slackBody(event), null)).toEqual(slackBody(event));
    // A URL that could bend chat link syntax is never rendered.
    expect(JSON.stringify(slackWithLinks(slackBody(event), { ...links, actions: { resume: 'https://x/|<!channel>' } }))).not.toContain('<!channel>');
  });

  it('IRC: one line per link, each whole, none starting with "!", none over the line limit', () => {
    const lines = ircLinkLines('fixer', links);
    expect(lines).toEqual([
      `[warden] resume fixer: ${links.actions.resume}`,
      `[warden] abort fixer: ${links.actions.abort}`,
      '[warden] each link works once, until 2026-11-25T02:00:00.000Z',
    ]);
    const long = ircLinkLines('fixer', { ...links, actions: { resume: `https://w.example/${'a'.repeat(400)}` } });
    expect(long).toEqual(['[warden] 1 link too long for IRC: see the webhook']);
    for (const l of [...lines, ...long]) expect(byteLength(l) <= IRC_LINE_MAX && !l.startsWith('!')).toBe(true);
    expect(ircLinkLines('fixer', null)).toEqual([]);
  });
});

describe("the console link: the agent's page, when the address of warden serve is known", () => {
  const event: NotificationEvent = {
    event: 'orphaned',
    agentId: 'fixer.1',
    workflowId: 'agent-fixer.1',
    runId: 'r1',
    task: 'x',
    step: 0,
    reason: 'silent',
    at: '2026-11-25T01:00:00Z',
  };
  const SECRET = 'k'.repeat(40);

  it('every agent alert carries it; a mesh alert, or no WARDEN_LINK_BASE_URL, none; never a token', () => {
    const warned: string[] = [];
    const warn = (r: string) => warned.push(r);
    const base = { WARDEN_LINK_BASE_URL: 'https://warden.example/' };
    // No action links for an orphaned agent, and no secret: the page link alone.
    expect(linksForDelivery(event, warn, base)).toEqual({ actions: {}, expiresAt: '', console: 'https://warden.example/console/agents/fixer.1' });
    // An escalation with the secret set: its action links and the page.
    const esc = linksForDelivery({ ...event, event: 'escalation', escalation: 1 }, warn, { ...base, WARDEN_LINK_SECRET: SECRET })!;
    expect(Object.keys(esc.actions)).toEqual(['resume', 'abort', 'dismiss', 'steer']);
    expect(esc.console).toBe('https://warden.example/console/agents/fixer.1');
    expect(esc.console).not.toContain('token');
    expect(consoleLinkFor({ event: 'mesh-ready', agentId: 'mesh-r1' }, base)).toBeNull();
    expect(linksForDelivery(event, warn, {})).toBeNull();
    expect(consoleLinkFor(event, { WARDEN_LINK_BASE_URL: 'ftp://x' })).toBeNull();
    // The secret missing for an escalation: said once, and the page link still goes out.
    expect(linksForDelivery({ ...event, event: 'escalation', escalation: 1 }, warn, base)).toMatchObject({ actions: {}, console: expect.any(String) });
    expect(warned).toEqual([expect.stringMatching(/WARDEN_LINK_SECRET/)]);
  });

  it('json: links.console beside the rest; slack: a button and the URL in the text; IRC: one line', () => {
    const links = { actions: {}, expiresAt: '', console: 'https://warden.example/console/agents/fixer.1' };
    const body = JSON.parse(webhookBodyWithLinks('json', event, 'd1', links));
    expect(body).toEqual({ ...event, deliveryId: 'd1', links: { console: links.console } });
    const slack = JSON.parse(webhookBodyWithLinks('slack', event, 'd1', links));
    const buttons = slack.blocks.find((b: { type: string }) => b.type === 'actions').elements;
    expect(buttons.map((b: { url: string; text: { text: string } }) => [b.text.text, b.url])).toEqual([['Open in the console', links.console]]);
    expect(slack.text).toContain(`Console: ${links.console}`);
    expect(ircLinkLines('fixer.1', links)).toEqual([`[warden] console fixer.1: ${links.console}`]);
  });
});
