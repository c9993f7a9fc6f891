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
import type { TimelineEntry, TimelineTurn } from './timeline.js';

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
    `<pre>${e(t.text)}</pre>${t.tools.length ? `<pre class="muted">${t.tools.map((x) => e(x)).join('\n')}</pre>` : ''}</div>`
  );
}

function entryHtml(x: TimelineEntry): string {
  const turns = x.turns?.length
    ? `<details><summary>${x.turns.length} turn${x.turns.length > 1 ? 's' : ''}</summary>${x.turns.map(turnHtml).join('')}</details>`
    : '';
  return (
    `<li class="k-${x.kind}"><span class="when">${e(x.at || '—')}</span><span class="kind">${x.kind}</span><strong>${e(x.title)}</strong>` +
    `${x.detail ? `<pre>${e(x.detail)}</pre>` : ''}${turns}</li>`
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

/** The agent page: facts, actions (operator only), budgets, the timeline. */
export function agentPage(
  s: AgentStatus,
  entries: TimelineEntry[],
  opts: { role: ConsoleRole; csrf: string; flash?: { action: string; result: string } | null },
): string {
  const flash =
    opts.flash && FLASH[opts.flash.result]
      ? `<p id="flash" class="${opts.flash.result === 'refused' ? 'refused' : ''}">${e(opts.flash.action)}: ${FLASH[opts.flash.result]}</p>`
      : '';
  const children = (s.children ?? []).length
    ? `<dt>children</dt><dd>${s.children.map((c) => `<a href="/console/agents/${e(encodeURIComponent(c.agentId))}">${e(c.agentId)}</a> (${e(c.state)})`).join(', ')}</dd>`
    : '';
  const facts =
    `<dl class="facts">` +
    `<dt>state</dt><dd id="state">${e(s.state)}</dd>` +
    (s.stateReason ? `<dt>why</dt><dd id="state-reason">${e(s.stateReason)}</dd>` : '') +
    `<dt>task</dt><dd><pre id="task">${e(s.task ?? '')}</pre></dd>` +
    `<dt>escalation step</dt><dd id="step">${s.escalationStep}/${s.escalationThreshold} (${s.escalations} escalation${s.escalations === 1 ? '' : 's'})</dd>` +
    `<dt>evaluations</dt><dd>${s.evaluations.total} (${s.evaluations.ok} OK, ${s.evaluations.flagged} flagged, ${s.evaluations.skipped} skipped)</dd>` +
    `<dt>whispers</dt><dd>${s.whispersDelivered} delivered, ${s.pendingWhispers} waiting</dd>` +
    `<dt>turns</dt><dd>${s.turns}</dd>` +
    `<dt>spend</dt><dd id="spend">${s.tokens.total} tokens, ${e(formatCost(s.costUsd))}</dd>` +
    supervisionFact(s) +
    (s.parent ? `<dt>parent</dt><dd><a href="/console/agents/${e(encodeURIComponent(s.parent))}">${e(s.parent)}</a></dd>` : '') +
    children +
    `</dl>`;
  const timeline = entries.length ? `<ol class="timeline" id="timeline">${entries.map(entryHtml).join('')}</ol>` : '<p class="muted">Nothing recorded yet.</p>';
  return shell(
    `warden: ${s.agentId}`,
    opts.role,
    'agent',
    `<p><a href="/console">← fleet</a></p><h1>Agent <span id="agent-id">${e(s.agentId)}</span></h1>${flash}${facts}` +
      (opts.role === 'operator' ? actionsHtml(s.agentId, opts.csrf) : '<p class="muted" id="read-only">Read-only: actions need the operator token.</p>') +
      budgetsHtml(s) +
      `<h2>Timeline</h2>${timeline}`,
  );
}
