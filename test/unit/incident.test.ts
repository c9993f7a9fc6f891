/** One alert for one cause: the cause's fingerprint, the incident's joins and notifications, and when an agent joins one. */
import { describe, expect, it } from 'vitest';
import { reportTurn } from '../helpers/report.js';
import { startEvaluation } from '../../src/domain/agent/supervision.js';
import { applyEvaluation } from '../helpers/evaluation.js';
import type { EvaluateResult, NotificationEvent } from '../../src/domain/contract/activity-types.js';
import type { Turn } from '../../src/domain/contract/schemas.js';
import { causeFingerprint, causeOf, incidentWorkflowId, normaliseCause, type Cause } from '../../src/domain/notify/cause.js';
import { freshIncident, incidentNotifyId, joinIncident, takeNotifications, unannounced } from '../../src/domain/notify/incident.js';
import { incidentIrcLines, incidentJsonBody, incidentSlackBody } from '../../src/domain/notify/incident-text.js';
import { IRC_LINE_MAX, NotifyWorkflowInputSchema, byteLength, type NotifyWorkflowInput } from '../../src/domain/notify/notify.js';
import { failingTurn, testAgent, turn } from '../helpers/core.js';

const cause = (over: Partial<Cause> = {}): Cause => ({
  command: 'npm run build',
  error: "error TS2307: Cannot find module './config'",
  repo: '/home/dev/shop',
  branch: 'main',
  ...over,
});

describe('the cause fingerprint', () => {
  it('is the same for every agent hitting the same failure in the same repository and branch', () => {
    const a = causeFingerprint(cause({ error: "src/app.ts(12,3): error TS2307: Cannot find module './config' at 2026-11-28T14:03:11.123Z" }));
    const b = causeFingerprint(cause({ error: "src/app.ts(40,9): error TS2307: Cannot find module './config' at 2026-11-28T14:03:52.900Z" }));
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(b).toBe(a);
    expect(incidentWorkflowId(a)).toBe(`warden-incident-${a}`);
  });

  it('differs when the error, the command, the repository or the branch does', () => {
    const base = causeFingerprint(cause());
    expect(causeFingerprint(cause({ error: 'error TS2304: Cannot find name "x"' }))).not.toBe(base);
    expect(causeFingerprint(cause({ command: 'npm test' }))).not.toBe(base);
    expect(causeFingerprint(cause({ repo: '/home/dev/billing' }))).not.toBe(base);
    expect(causeFingerprint(cause({ branch: 'release' }))).not.toBe(base);
  });

  it('strips numbers, temporary paths, timestamps, hashes and ids, and whitespace', () => {
    expect(
      normaliseCause(
        'FAIL  /tmp/warden-a1-Xy12/build.log at 2026-11-28 14:03:11 (commit 3f9a2c1d7e, run 0193bbbb-0000-4000-8000-00000000abcd) after 17.5s   in tmp.AbC123',
      ),
    ).toBe('FAIL <tmp> at <time> (commit <hash>, run <id>) after #s in <tmp>');
    expect(normaliseCause('/var/folders/x1/T/jest_4/out.txt: line 9 at 10:42:07')).toBe('<tmp>: line # at <time>');
    // What names the failure stays: the command, the module, the case of the words.
    expect(normaliseCause("Cannot find module './config'")).toBe("Cannot find module './config'");
  });
});

const callTurn = (id: string, calls: Turn['toolCalls']): Turn => ({ id, text: 'working', toolCalls: calls });

describe('the cause of an escalation', () => {
  const window: Turn[] = [
    callTurn('t8', [{ name: 'shell', args: 'npm test', result: '3 failed', ok: false }]),
    callTurn('t9', [
      { name: 'shell', args: 'npm run build', result: 'TS2307', ok: false },
      { name: 'read', args: 'src/a.ts', ok: true },
    ]),
    callTurn('t10', [{ name: 'shell', args: 'rm -rf dist', result: 'denied', ok: false, denied: true }]),
  ];

  it('is the newest failing call among the verdict evidence turns (by turn number)', () => {
    expect(causeOf(window, 10, [8, 9])).toEqual({ command: 'npm run build', error: 'TS2307' });
    expect(causeOf(window, 10, [8])).toEqual({ command: 'npm test', error: '3 failed' });
  });

  it('skips denied calls and turns without a failing call; none: no cause', () => {
    expect(causeOf(window, 10, [10])).toBeNull();
    expect(causeOf([callTurn('ok', [{ name: 'shell', args: 'ls', ok: true }])], 1, [1])).toBeNull();
    expect(causeOf(window, 10, [99])).toBeNull(); // no longer in the window
  });

  it('without evidence turns (an idle stall) it reads the window last turns', () => {
    expect(causeOf(window, 10, [])).toEqual({ command: 'npm run build', error: 'TS2307' });
    expect(causeOf(window, 10, undefined)).toEqual({ command: 'npm run build', error: 'TS2307' });
  });
});

const alert = (agentId: string, escalation = 1, webhooks = ['http://127.0.0.1:1/hook'], irc?: string): NotifyWorkflowInput =>
  NotifyWorkflowInputSchema.parse({
    event: {
      event: 'escalation',
      agentId,
      workflowId: `agent-${agentId}`,
      runId: 'run-1',
      task: `task of ${agentId}`,
      step: 3,
      escalation,
      verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'same failing build', evidence: [4, 5] },
      reason: 'escalated: SPIRALING — same failing build',
      at: '2026-11-28T14:00:00.000Z',
    },
    webhooks: webhooks.map((url) => ({ url })),
    ...(irc ? { irc: { channel: irc } } : {}),
  }) as NotifyWorkflowInput;

const place = { fingerprint: '0123456789abcdef', cause: cause(), workflowId: 'warden-incident-0123456789abcdef', runId: 'incident-run-1' };
const AT = '2026-11-28T14:01:00.000Z';

describe('the incident', () => {
  it('five joins in a window give one notification naming five; a repeated join is dropped', () => {
    const s = freshIncident();
    for (const id of ['a1', 'a2', 'a3', 'a4', 'a5']) expect(joinIncident(s, alert(id))).toBe(true);
    expect(joinIncident(s, alert('a3'))).toBe(false); // a retried join: same agent, same escalation
    expect(joinIncident(s, alert('a3', 2))).toBe(true); // its next escalation is a new join
    const out = takeNotifications(s, place, AT);
    expect(out).toHaveLength(1);
    const e = out[0]!.event;
    expect(e.incident).toMatchObject({ id: place.fingerprint, command: 'npm run build', repo: '/home/dev/shop', branch: 'main', total: 6, followUp: false });
    expect(e.incident!.agents.map((a) => `${a.agentId}#${a.escalation}`)).toEqual(['a1#1', 'a2#1', 'a3#1', 'a4#1', 'a5#1', 'a3#2']);
    expect(e).toMatchObject({
      event: 'escalation',
      agentId: 'a1',
      workflowId: place.workflowId,
      reason: expect.stringMatching(/^6 agents escalated on one cause: npm run build/),
    });
    expect(out[0]!.webhooks).toEqual([{ url: 'http://127.0.0.1:1/hook' }]);
    // What the notify workflow accepts.
    expect(NotifyWorkflowInputSchema.safeParse(out[0]).success).toBe(true);
    expect(unannounced(s)).toBe(0);
    expect(takeNotifications(s, place, AT)).toEqual([]);
  });

  it('a later agent gets one follow-up naming it (and the total)', () => {
    const s = freshIncident();
    joinIncident(s, alert('a1'));
    takeNotifications(s, place, AT);
    joinIncident(s, alert('a6'));
    joinIncident(s, alert('a7'));
    const [follow] = takeNotifications(s, place, AT);
    expect(follow!.event.incident).toMatchObject({ followUp: true, total: 3 });
    expect(follow!.event.incident!.agents.map((a) => a.agentId)).toEqual(['a6', 'a7']);
    expect(follow!.event.reason).toMatch(/^2 more agents escalated on the same cause \(3 in all\)/);
  });

  it('each channel hears only of the agents that configured it; agents sharing channels share one notification', () => {
    const s = freshIncident();
    joinIncident(s, alert('a1', 1, ['http://team/hook'], '#alerts'));
    joinIncident(s, alert('a2', 1, ['http://team/hook'], '#alerts'));
    joinIncident(s, alert('b1', 1, ['http://other/hook']));
    const out = takeNotifications(s, place, AT);
    const named = out
      .slice(0, 1)
      .map((n) => [n.webhooks.map((w) => w.url).join(','), n.irc?.channel ?? '', n.event.incident!.agents.map((a) => a.agentId).join(',')]);
    expect(named.slice(0, 1)).toEqual([['http://team/hook', '#alerts', 'a1,a2']]);
    // A channel that hears of one agent only gets that agent's own alert, as if it were alone.
    expect(out[1]!.webhooks).toEqual([{ url: 'http://other/hook' }]);
    expect(out[1]!.event).toEqual(alert('b1').event);
  });

  it('notification ids are fixed by the incident run and count up', () => {
    expect(incidentNotifyId(place.fingerprint, 'abcdef0123456789', 2)).toBe('notify-incident-0123456789abcdef-abcdef01-2');
  });
});

describe('how an incident reads', () => {
  const s = freshIncident();
  joinIncident(s, alert('a1'));
  joinIncident(s, alert('a2', 4));
  const event: NotificationEvent = takeNotifications(s, place, AT)[0]!.event;
  const links = new Map([
    ['a1', { actions: { resume: 'https://warden.example/l/r1', abort: 'https://warden.example/l/x1' }, expiresAt: '2026-11-29T14:00:00.000Z' }],
    ['a2', null],
  ]);

  it('json: every agent, each with its own links', () => {
    const body = JSON.parse(incidentJsonBody(event, 'notify-incident-x-1', links)) as { deliveryId: string; incident: { agents: Record<string, unknown>[] } };
    expect(body.deliveryId).toBe('notify-incident-x-1');
    expect(body.incident.agents[0]).toMatchObject({ agentId: 'a1', escalation: 1, actions: { resume: 'https://warden.example/l/r1' } });
    expect(body.incident.agents[1]).toMatchObject({ agentId: 'a2', escalation: 4 });
    expect(body.incident.agents[1]).not.toHaveProperty('actions');
  });

  it('slack and IRC: the cause, where, one line per agent; IRC lines bounded and never a command', () => {
    const slack = JSON.stringify(incidentSlackBody(event, 'd1', links));
    expect(slack).toContain('2 agents escalated on one cause');
    expect(slack).toContain('/home/dev/shop @ main');
    expect(slack).toMatch(/a1.*a2/);
    expect(slack).toContain('<https://warden.example/l/r1|resume>');
    const lines = incidentIrcLines(event, 'd1', links);
    expect(lines[0]).toMatch(/^\[warden\] INCIDENT 2 agents escalated on one cause: npm run build/);
    expect(lines.some((l) => l.startsWith('agent a2 (step 3)'))).toBe(true);
    expect(lines).toContain('[warden] resume a1: https://warden.example/l/r1');
    for (const l of lines) {
      expect(byteLength(l)).toBeLessThanOrEqual(IRC_LINE_MAX);
      expect(l.startsWith('!')).toBe(false);
    }
  });
});

describe('when an escalating agent joins an incident', () => {
  const SPIRAL: EvaluateResult = {
    kind: 'verdict',
    verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'same failing build' },
    evaluator: 'heuristic',
    durationMs: 1,
  } as EvaluateResult;

  function escalated(turnOf: (i: number) => Turn, patches?: { 'incident-grouping': boolean }) {
    const a = testAgent(
      { supervisor: { evalInterval: 1 }, notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] }, verify: { command: 'true', cwd: '/repo' } },
      { patches },
    );
    for (let i = 1; i <= 5; i++) {
      reportTurn(a, turnOf(i));
      applyEvaluation(a, SPIRAL, startEvaluation(a));
    }
    expect(a.core.s.state).toBe('awaiting-input');
    return a;
  }

  it('a failing command in its evidence: it joins, with its alert, the cause and where it works; nothing is sent directly', () => {
    const a = escalated((i) => failingTurn(`f${i}`));
    expect(a.rec.notifications).toEqual([]);
    expect(a.rec.incidents).toHaveLength(1);
    expect(a.rec.incidents[0]).toMatchObject({
      cause: { command: 'npm run build', error: 'error TS2307: Cannot find module' },
      place: { agentId: 'a1', driven: false, cwd: '/repo' },
      alert: { event: { event: 'escalation', agentId: 'a1', escalation: 1 }, webhooks: [{ url: 'http://127.0.0.1:9/hook' }] },
    });
    expect(a.rec.patches).toContain('incident-grouping');
  });

  it('no failing command: it notifies alone, as before', () => {
    const a = escalated((i) => turn(`t${i}`));
    expect(a.rec.incidents).toEqual([]);
    expect(a.rec.notifications).toHaveLength(1);
  });

  it('replaying a history from before grouping (the patch absent): it notifies alone', () => {
    const a = escalated((i) => failingTurn(`f${i}`), { 'incident-grouping': false });
    expect(a.rec.incidents).toEqual([]);
    expect(a.rec.notifications).toHaveLength(1);
  });
});
