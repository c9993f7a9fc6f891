/**
 * The console's pages. Every string that came from an agent, a request or Temporal goes through
 * `escapeHtml` (src/serve/page.ts: control and bidi characters made visible, then HTML-escaped).
 * The pages carry no inline script or style: one script and one style sheet, served by the console
 * itself (assets.ts), under a Content-Security-Policy that allows nothing else.
 */
import { escapeHtml, SECURITY_HEADERS } from '../page.js';
import { MAX_STEER_CHARS } from '../page.js';
import { formatCost, formatRate } from '../../roster/rows.js';
import type { AgentStatus } from '../../domain/contract/status.js';
import type { ConsoleRole } from './tokens.js';
import type { AgentTimeline, TimelineEntry, TimelineTurn } from '../../timeline/agent-timeline.js';

/** The console's headers: SECURITY_HEADERS with a policy that allows the console's own script and style only. */
export const CONSOLE_HEADERS: Record<string, string> = {
  ...SECURITY_HEADERS,
  // Same-origin requests name their origin (with no-referrer, Chromium posts forms with `Origin: null`).
  'referrer-policy': 'same-origin',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const e = escapeHtml;

function shell(title: string, role: ConsoleRole, page: string, bodyHtml: string, attrs = ''): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex"><title>${e(title)}</title><link rel="stylesheet" href="/console/static/console.css">` +
    `<script src="/console/static/console.js" defer></script></head><body data-page="${page}" data-role="${role}"${attrs}>` +
    `<header><a href="/console">warden console</a><span class="role" id="role">${role === 'operator' ? 'operator' : 'read-only'}</span></header>` +
    `<main>${bodyHtml}</main></body></html>`
  );
}

/** The fleet page: a shell the script fills from `/console/api/agents`. */
export function fleetPage(role: ConsoleRole, pollMs: number): string {
  return shell(
    'warden: fleet',
    role,
    'fleet',
    `<h1>Fleet</h1><p id="totals" class="totals"></p><div class="controls"><input id="filter" type="search" placeholder="filter: id, state, task, pattern… (fuzzy, as in warden top)" aria-label="filter" autocomplete="off">` +
      `<label><input id="show-finished" type="checkbox" checked> show finished</label><span id="summary">loading…</span></div>` +
      `<table id="fleet"><thead><tr><th>agent</th><th>state</th><th>task</th><th>step</th><th>last verdict</th><th>spend</th><th>supervision $</th><th>$/agent-hour</th><th>age</th></tr></thead><tbody id="rows"></tbody></table>`,
    ` data-poll-ms="${Math.max(500, Math.floor(pollMs))}"`,
  );
}

const FLASH: Record<string, string> = {
  applied: 'done',
  raised: 'the new limits are set',
  resumed: 'the new limits are set, and the agent runs again',
  refused: 'refused by the agent',
  pending: 'sent; the agent has not answered yet',
  unchecked: 'sent; no worker answered, so the effect was not checked',
};

function turnHtml(t: TimelineTurn): string {
  return (
    `<div class="turn${t.evidence ? ' evidence' : ''}"><span class="muted">${t.number !== null ? `turn ${t.number}` : 'turn'}${t.evidence ? ' · evidence' : ''}</span>` +
    `<pre>${e(t.untrusted.text)}</pre>${t.untrusted.tools.length ? `<pre class="muted">${t.untrusted.tools.map((x) => e(x)).join('\n')}</pre>` : ''}</div>`
  );
}

/** One line of the page's timeline: its style, title, detail and turns (every string escaped where it is written). */
interface Shown {
  at: string;
  cls: string;
  title: string;
  /** Extra markup after the title, already escaped. */
  meta?: string;
  detail: string | null;
  turns?: TimelineTurn[];
}

const sumVerdict = (v: { kind: string; pattern: string | null }) => `${v.kind}${v.pattern ? ` ${v.pattern}` : ''}`;

function whisperMeta(x: Extract<TimelineEntry, { kind: 'whisper' }>): string {
  return x.deliveredAt
    ? `<span class="whisper-delivered">queued ${e(x.at)} · delivered ${e(x.deliveredAt)}${x.beforeTurn !== null ? ` (before turn ${x.beforeTurn})` : ''}</span>`
    : `<span class="whisper-waiting">queued ${e(x.at)} · waiting for the agent's next turn</span>`;
}

function deliveryMeta(x: Extract<TimelineEntry, { kind: 'notification' }>): string {
  const id = x.deliveryId ? `<code class="delivery-id">${e(x.deliveryId)}</code>` : '<span class="muted">with its incident (one alert for one cause)</span>';
  const state = x.delivery ? x.delivery.state : x.deliveryId ? 'unknown' : 'with its incident';
  return `<span class="delivery">delivery ${id} · <span class="delivery-state d-${e(state.replace(/\s+/g, '-'))}">${e(state)}</span></span>`;
}

/** A timeline entry as the page shows it. */
function shown(x: TimelineEntry): Shown {
  switch (x.kind) {
    case 'transition':
      return { at: x.at, cls: 'state', title: `${x.from} → ${x.to}`, detail: `${x.event}${x.untrusted.cause ? `: ${x.untrusted.cause}` : ''}` };
    case 'refused':
      return { at: x.at, cls: 'refused', title: `refused: ${x.what}`, detail: x.untrusted.reason };
    case 'verdict': {
      const v = x.verdict;
      const evidence = v.evidenceTurns.length ? ` — evidence: turn${v.evidenceTurns.length > 1 ? 's' : ''} ${v.evidenceTurns.join(', ')}` : '';
      if (x.seq === null) return { at: x.at, cls: 'evaluation', title: `last verdict: ${sumVerdict(v)}`, detail: v.untrusted.message || null };
      return {
        at: x.at,
        cls: v.escalated ? 'escalation' : 'evaluation',
        title: `${v.escalated ? 'escalated: ' : ''}${sumVerdict(v)} (flagged verdict #${x.seq})`,
        detail: `${v.untrusted.message}${evidence}`,
        ...(x.turns ? { turns: x.turns } : {}),
      };
    }
    case 'decision':
      return { at: x.at, cls: 'decision', title: `human ${x.decision} flagged verdict${x.seq !== null ? ` #${x.seq}` : ''}`, detail: x.untrusted.note };
    case 'dismissal':
      return { at: x.at, cls: 'decision', title: 'human dismissed a finding as a false alarm', detail: x.untrusted.note ?? x.untrusted.message };
    case 'compaction':
      return { at: x.at, cls: 'compaction', title: 'compacted', detail: x.untrusted.reason };
    case 'verification': {
      const u = x.untrusted;
      return {
        at: x.at,
        cls: 'verification',
        title: `done-claim check: ${x.skipped ? 'skipped' : x.passed ? 'passed' : 'failed'}`,
        detail: [u.command, u.skipReason, u.rewardHacking, u.outputTail].filter(Boolean).join('\n') || null,
      };
    }
    case 'whisper':
      return { at: x.at, cls: 'whisper', title: `whisper ${x.type}`, meta: whisperMeta(x), detail: x.untrusted.text };
    case 'notification':
      return { at: x.at, cls: 'notification', title: `notification: ${x.event} → ${x.channels.join(', ')}`, meta: deliveryMeta(x), detail: x.untrusted.reason };
  }
}

function entryHtml(x: Shown, key: string): string {
  const turns = x.turns?.length
    ? `<details><summary>${x.turns.length} turn${x.turns.length > 1 ? 's' : ''}</summary>${x.turns.map(turnHtml).join('')}</details>`
    : '';
  return (
    `<li class="k-${x.cls}" data-key="${e(key)}"><span class="when">${e(x.at || '—')}</span><span class="kind">${x.cls}</span><strong>${e(x.title)}</strong>` +
    `${x.meta ? ` ${x.meta}` : ''}${x.detail ? `<pre>${e(x.detail)}</pre>` : ''}${turns}</li>`
  );
}

/** The page's timeline, newest first: the entries and the latest turns (entries without a time last). */
function timelineHtml(t: AgentTimeline): string {
  const rows: Shown[] = [
    ...t.entries.map(shown),
    ...t.recentTurns.map((turn) => ({ at: turn.at ?? '', cls: 'turn', title: `turn ${turn.number ?? '?'}`, detail: null, turns: [turn] })),
  ];
  // Newest first, stable (the model is oldest first).
  const ordered = rows.map((r, i) => ({ r, i })).sort((a, b) => (b.r.at || '').localeCompare(a.r.at || '') || b.i - a.i);
  // A key per entry that stays with it across refreshes, so an opened entry stays open.
  const seen = new Map<string, number>();
  const items = ordered.map(({ r }) => {
    const base = `${r.cls}@${r.at}:${r.title}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return entryHtml(r, `${base}#${n}`);
  });
  const cut = t.truncated.length ? `<p class="muted">Cut to fit: ${e(t.truncated.join(', '))}.</p>` : '';
  return `<h2>Timeline</h2>${items.length ? `<ol class="timeline" id="timeline">${items.join('')}</ol>` : '<p class="muted">Nothing recorded yet.</p>'}${cut}`;
}

/** The notifications the agent sent, newest first: when, event, why, channels, delivery id, how it went. */
function notificationsHtml(t: AgentTimeline): string {
  const list = t.entries.filter((x): x is Extract<TimelineEntry, { kind: 'notification' }> => x.kind === 'notification').reverse();
  if (!list.length) return '<h2>Notifications</h2><p class="muted" id="no-notifications">None sent (or no channel configured).</p>';
  const rows = list
    .map(
      (x) =>
        `<tr><td class="when">${e(x.at)}</td><td>${e(x.event)}</td><td class="reason">${e(x.untrusted.reason)}</td><td>${e(x.channels.join(', '))}</td>` +
        `<td>${x.deliveryId ? `<code class="delivery-id">${e(x.deliveryId)}</code>` : '<span class="muted">with its incident</span>'}</td>` +
        `<td class="delivery-state d-${e((x.delivery?.state ?? (x.deliveryId ? 'unknown' : 'incident')).replace(/\s+/g, '-'))}">${e(x.delivery?.state ?? (x.deliveryId ? 'unknown' : '—'))}` +
        `${x.delivery?.untrusted.detail ? `<br><span class="muted">${e(x.delivery.untrusted.detail)}</span>` : ''}</td></tr>`,
    )
    .join('');
  return (
    `<h2>Notifications</h2><table id="notifications"><thead><tr><th>when</th><th>event</th><th>why</th><th>channels</th><th>delivery id</th><th>delivery</th></tr></thead>` +
    `<tbody>${rows}</tbody></table>`
  );
}

function actionsHtml(agentId: string, csrf: string): string {
  const at = (a: string) => `/console/agents/${encodeURIComponent(agentId)}/${a}`;
  const hidden = `<input type="hidden" name="csrf" value="${e(csrf)}">`;
  const form = (a: string, inner: string) => `<form method="post" action="${e(at(a))}" id="form-${a}">${hidden}${inner}</form>`;
  return (
    `<h2>Actions</h2><div class="actions">` +
    form('resume', '<button type="submit" id="resume">Resume</button>') +
    form('pause', '<button type="submit" id="pause">Pause</button>') +
    form(
      'steer',
      `<textarea name="text" rows="3" maxlength="${MAX_STEER_CHARS}" required placeholder="what the agent should do next" aria-label="steering text"></textarea><button type="submit" id="steer">Steer</button>`,
    ) +
    form(
      'dismiss',
      '<textarea name="note" rows="2" maxlength="500" placeholder="why this is a false alarm (optional)" aria-label="dismiss note"></textarea><button type="submit" id="dismiss">Dismiss as a false alarm</button>',
    ) +
    form('abort', '<button type="submit" id="abort" class="danger">Abort</button>') +
    form(
      'raise',
      '<input name="tokens" id="raise-tokens" inputmode="numeric" placeholder="tokens" aria-label="new token budget">' +
        '<input name="cost_usd" id="raise-cost" inputmode="decimal" placeholder="cost, USD" aria-label="new cost budget in US dollars">' +
        '<input name="turns" id="raise-turns" inputmode="numeric" placeholder="turns" aria-label="new turn budget">' +
        '<input name="wall_clock" id="raise-wall" placeholder="wall clock, e.g. 2h" aria-label="new wall-clock budget">' +
        '<button type="submit" id="raise">Set new budget limits</button>',
    ) +
    `</div>`
  );
}

const n = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(3));

function budgetsHtml(s: AgentStatus): string {
  const rows = Object.entries(s.budgets ?? {})
    .map(([k, b]) => `<tr><td>${e(k)}</td><td class="num">${e(n(b.used))}</td><td class="num">${b.limit === null ? '—' : e(n(b.limit))}</td></tr>`)
    .join('');
  const ev = s.evaluatorSpend;
  const evaluator = ev
    ? `<p class="muted" id="evaluator-spend">evaluator: ${ev.calls} model calls (${ev.failed} failed), ${ev.tokens.total} tokens, ${e(formatCost(ev.costUsd))}; decided by heuristics ${ev.decided.heuristic}, by a model ${ev.decided.model}</p>`
    : '';
  return `<h2>Budgets and spend</h2><table id="budgets"><thead><tr><th>budget</th><th>used</th><th>limit</th></tr></thead><tbody>${rows}</tbody></table>${evaluator}`;
}

/** The facts' supervision line: the evaluator's dollars and per agent-hour (absent on agents from older versions). */
function supervisionFact(s: AgentStatus): string {
  const ev = s.evaluatorSpend;
  if (!ev) return '';
  const rate = s.supervision?.costUsdPerHour ?? null;
  return `<dt>supervision $</dt><dd id="supervision">${e(formatCost(ev.costUsd))}${rate === null ? '' : `, ${e(formatRate(rate))} per agent-hour`}</dd>`;
}

function factsHtml(s: AgentStatus): string {
  const children = (s.children ?? []).length
    ? `<dt>children</dt><dd>${s.children.map((c) => `<a href="/console/agents/${e(encodeURIComponent(c.agentId))}">${e(c.agentId)}</a> (${e(c.state)})`).join(', ')}</dd>`
    : '';
  return (
    `<dl class="facts">` +
    `<dt>state</dt><dd id="state">${e(s.state)}</dd>` +
    (s.stateReason ? `<dt>why</dt><dd id="state-reason">${e(s.stateReason)}</dd>` : '') +
    `<dt>task</dt><dd><pre id="task">${e(s.task ?? '')}</pre></dd>` +
    `<dt>escalation step</dt><dd id="step">${s.escalationStep}/${s.escalationThreshold} (${s.escalations} escalation${s.escalations === 1 ? '' : 's'})</dd>` +
    `<dt>evaluations</dt><dd>${s.evaluations.total} (${s.evaluations.ok} OK, ${s.evaluations.flagged} flagged, ${s.evaluations.skipped} skipped)</dd>` +
    `<dt>whispers</dt><dd id="whispers">${s.whispersDelivered} delivered, ${s.pendingWhispers} waiting</dd>` +
    `<dt>turns</dt><dd>${s.turns}</dd>` +
    `<dt>spend</dt><dd id="spend">${s.tokens.total} tokens, ${e(formatCost(s.costUsd))}</dd>` +
    supervisionFact(s) +
    (s.parent ? `<dt>parent</dt><dd><a href="/console/agents/${e(encodeURIComponent(s.parent))}">${e(s.parent)}</a></dd>` : '') +
    children +
    `</dl>`
  );
}

/** What the agent page's script refreshes: each section's markup, escaped as the page itself. */
export type AgentSections = Record<'facts' | 'budgets' | 'notifications' | 'timeline', string>;

/** The agent page's sections, from the agent's status and timeline (the page, and `/console/api/agents/<id>` for its refreshes). */
export function agentSections(s: AgentStatus, t: AgentTimeline): AgentSections {
  return { facts: factsHtml(s), budgets: budgetsHtml(s), notifications: notificationsHtml(t), timeline: timelineHtml(t) };
}

const section = (name: keyof AgentSections, html: string) => `<section id="${name}-section" data-section="${name}">${html}</section>`;

/** The agent page: facts, actions (operator only), budgets, notifications, the timeline; its script refreshes all but the actions every `pollMs`. */
export function agentPage(
  s: AgentStatus,
  t: AgentTimeline,
  opts: { role: ConsoleRole; csrf: string; flash?: { action: string; result: string } | null; pollMs?: number },
): string {
  const flash =
    opts.flash && FLASH[opts.flash.result]
      ? `<p id="flash" class="${opts.flash.result === 'refused' ? 'refused' : ''}">${e(opts.flash.action)}: ${FLASH[opts.flash.result]}</p>`
      : '';
  const parts = agentSections(s, t);
  return shell(
    `warden: ${s.agentId}`,
    opts.role,
    'agent',
    `<p><a href="/console">← fleet</a> <span class="muted" id="updated"></span></p><h1>Agent <span id="agent-id">${e(s.agentId)}</span></h1>${flash}` +
      section('facts', parts.facts) +
      (opts.role === 'operator' ? actionsHtml(s.agentId, opts.csrf) : '<p class="muted" id="read-only">Read-only: actions need the operator token.</p>') +
      section('budgets', parts.budgets) +
      section('notifications', parts.notifications) +
      section('timeline', parts.timeline),
    ` data-agent="${e(s.agentId)}" data-poll-ms="${Math.max(500, Math.floor(opts.pollMs ?? 3_000))}"`,
  );
}
