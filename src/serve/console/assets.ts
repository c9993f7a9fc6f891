/**
 * The console's script and style sheet, served as files (`/console/static/…`) so the pages carry
 * no inline script or style and the Content-Security-Policy can say `script-src 'self'`.
 *
 * The script renders the fleet from `/console/api/agents` with DOM text nodes only (`textContent`,
 * never `innerHTML`): every agent-written string stays text. On an agent's page it polls
 * `/console/api/agents/<id>` and swaps in each section whose markup changed: markup the server
 * rendered and escaped as it renders the page itself (html.ts), parsed inert with DOMParser (no
 * script in it runs, and the policy allows none); an entry the reader opened stays open.
 */
export const CONSOLE_JS = `'use strict';
(function () {
  var body = document.body;
  if (body.dataset.page !== 'fleet') return;
  var rowsEl = document.getElementById('rows');
  var filter = document.getElementById('filter');
  var finished = document.getElementById('show-finished');
  var summary = document.getElementById('summary');
  var totals = document.getElementById('totals');
  var pollMs = Number(body.dataset.pollMs) || 3000;
  var timer = null;
  var seq = 0;
  function cell(tr, text, cls) {
    var td = document.createElement('td');
    td.textContent = text === null || text === undefined || text === '' ? '\\u2014' : String(text);
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function render(a) {
    var titles = {};
    a.groups.forEach(function (g) { titles[g.priority] = g.title; });
    var frag = document.createDocumentFragment();
    var group = null;
    a.rows.forEach(function (r) {
      if (r.group !== group) {
        group = r.group;
        var gtr = document.createElement('tr');
        gtr.className = 'group g-' + group;
        gtr.dataset.group = group;
        var th = document.createElement('th');
        th.colSpan = 9;
        th.textContent = titles[group] || group;
        gtr.appendChild(th);
        frag.appendChild(gtr);
      }
      var tr = document.createElement('tr');
      tr.className = 'agent p-' + r.priority;
      tr.dataset.agent = r.agentId;
      tr.dataset.priority = r.priority;
      var id = document.createElement('td');
      id.className = 'id depth-' + Math.min(r.depth, 6);
      if (r.mesh) id.textContent = r.shortId;
      else {
        var link = document.createElement('a');
        link.href = '/console/agents/' + encodeURIComponent(r.agentId);
        link.textContent = r.shortId;
        id.appendChild(link);
      }
      tr.appendChild(id);
      var st = cell(tr, r.state, 'state s-' + r.priority);
      st.title = r.why;
      cell(tr, r.task, 'task');
      cell(tr, r.step, 'step');
      var v = r.lastVerdict;
      cell(tr, v ? v.kind + (v.pattern ? ' ' + v.pattern : '') + (v.message ? ': ' + v.message : '') : null, 'verdict');
      cell(tr, r.cost, 'num');
      cell(tr, r.supervision, 'num supervision');
      cell(tr, r.supervisionRate, 'num rate');
      cell(tr, r.age, 'num');
      frag.appendChild(tr);
    });
    rowsEl.replaceChildren(frag);
    summary.textContent = a.agents + ' agents' + (a.meshes ? ', ' + a.meshes + ' meshes' : '') + ' \\u00b7 ' + a.shown + ' shown \\u00b7 ' +
      new Date(a.at).toLocaleTimeString() + (a.error ? ' \\u00b7 visibility: ' + a.error : '');
    totals.textContent = a.totals ? a.totals.text : '';
  }
  function load() {
    var mine = ++seq;
    clearTimeout(timer);
    var q = new URLSearchParams({ q: filter.value, finished: finished.checked ? '1' : '0' });
    fetch('/console/api/agents?' + q.toString(), { credentials: 'same-origin', cache: 'no-store' })
      .then(function (res) {
        if (res.status === 401) throw new Error('logged out: open the console address warden serve printed');
        if (!res.ok) throw new Error('the server answered ' + res.status);
        return res.json();
      })
      .then(function (a) { if (mine === seq) render(a); })
      .catch(function (err) { summary.textContent = String(err.message || err); })
      .finally(function () { if (mine === seq) timer = setTimeout(load, pollMs); });
  }
  var debounce = null;
  filter.addEventListener('input', function () { clearTimeout(debounce); debounce = setTimeout(load, 150); });
  finished.addEventListener('change', load);
  load();
})();
(function () {
  var body = document.body;
  if (body.dataset.page !== 'agent') return;
  var agentId = body.dataset.agent;
  var pollMs = Number(body.dataset.pollMs) || 3000;
  var updated = document.getElementById('updated');
  var last = {};
  document.querySelectorAll('section[data-section]').forEach(function (el) { last[el.dataset.section] = null; });
  function swap(name, html) {
    var el = document.getElementById(name + '-section');
    if (!el || last[name] === html) return;
    var open = {};
    el.querySelectorAll('li[data-key] details[open]').forEach(function (d) { open[d.closest('li').dataset.key] = true; });
    var doc = new DOMParser().parseFromString('<!doctype html><body>' + html, 'text/html');
    el.replaceChildren.apply(el, Array.prototype.slice.call(doc.body.childNodes));
    el.querySelectorAll('li[data-key]').forEach(function (li) {
      var d = li.querySelector('details');
      if (d && open[li.dataset.key]) d.open = true;
    });
    last[name] = html;
  }
  function load() {
    fetch('/console/api/agents/' + encodeURIComponent(agentId), { credentials: 'same-origin', cache: 'no-store' })
      .then(function (res) {
        if (res.status === 401) throw new Error('logged out: open the console address warden serve printed');
        return res.json().then(function (a) {
          if (!res.ok) throw new Error(a && a.error ? a.error : 'the server answered ' + res.status);
          return a;
        });
      })
      .then(function (a) {
        Object.keys(a.sections).forEach(function (name) { swap(name, a.sections[name]); });
        updated.textContent = '\u00b7 updated ' + new Date(a.at).toLocaleTimeString();
        body.dataset.updatedAt = a.at;
      })
      .catch(function (err) { updated.textContent = '\u00b7 ' + String(err.message || err); })
      .finally(function () { setTimeout(load, pollMs); });
  }
  setTimeout(load, pollMs);
})();
`;

export const CONSOLE_CSS = `body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{display:flex;gap:1em;align-items:baseline;padding:.6em 1.2em;background:#1d2733;color:#fff}
header a{color:#fff;text-decoration:none;font-weight:600}
header .role{margin-left:auto;font-size:.85em;opacity:.8}
main{padding:1em 1.2em}
h1{font-size:1.3em;margin:.2em 0 .6em}
h2{font-size:1.1em;margin:1.4em 0 .4em}
.controls{display:flex;gap:1em;align-items:center;margin-bottom:.6em}
#filter{font:inherit;padding:.3em .5em;width:24em}
#summary{color:#666;font-size:.9em}
#totals{margin:.2em 0 .6em;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.25em .6em;border-bottom:1px solid #e6e6e6;vertical-align:top}
thead th{background:#f0f0f0;font-weight:600}
tr.group th{background:#eef2f7;font-size:.9em;text-transform:uppercase;letter-spacing:.04em}
tr.g-awaiting-input th{background:#fbe3f3;color:#7a0e5c}
tr.g-runaway th,tr.g-flagged th{background:#fdeedd;color:#7a3e00}
tr.g-stuck th{background:#fde2e2;color:#7a0000}
td.task,td.verdict{max-width:24em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.id a{font-weight:600}
.depth-1{padding-left:1.8em}.depth-2{padding-left:3em}.depth-3{padding-left:4.2em}.depth-4,.depth-5,.depth-6{padding-left:5.4em}
.s-awaiting-input{color:#a1127a;font-weight:600}.s-flagged,.s-runaway{color:#a35200}.s-stuck{color:#b00000}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:0}
dl.facts dt{color:#666}
dl.facts dd{margin:0}
pre{white-space:pre-wrap;word-break:break-word;margin:.2em 0;font:13px/1.35 ui-monospace,monospace}
.actions{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
.actions form{background:#fff;border:1px solid #ddd;padding:.6em;border-radius:4px}
.actions textarea{display:block;width:18em;font:inherit;margin-bottom:.4em}
button{font:inherit;padding:.3em 1em;cursor:pointer}
button.danger{color:#fff;background:#b00000;border:1px solid #800}
#flash{padding:.5em .8em;background:#e8f5e9;border:1px solid #b5dcb8}
#flash.refused{background:#fdeedd;border-color:#e8c39a}
ol.timeline{list-style:none;padding:0;margin:0}
ol.timeline li{background:#fff;border:1px solid #e6e6e6;border-left:4px solid #bbb;padding:.4em .7em;margin-bottom:.4em}
ol.timeline li.k-escalation{border-left-color:#a1127a}ol.timeline li.k-evaluation{border-left-color:#d08000}
ol.timeline li.k-decision{border-left-color:#2e7d32}ol.timeline li.k-whisper{border-left-color:#1565c0}
ol.timeline li.k-refused{border-left-color:#b00000}ol.timeline li.k-notification{border-left-color:#6a1b9a}
.whisper-delivered,.whisper-waiting,.delivery{font-size:.85em;color:#555;margin-left:.6em}
.d-delivered{color:#2e7d32;font-weight:600}.d-failed{color:#b00000;font-weight:600}.d-sending{color:#a35200}
code.delivery-id{font:12px ui-monospace,monospace;background:#f3f3f3;padding:0 .3em}
.when{color:#666;font-size:.85em;margin-right:.6em}.kind{font-size:.8em;text-transform:uppercase;color:#555;margin-right:.6em}
.turn{border-top:1px dashed #ddd;padding-top:.2em}.turn.evidence{background:#fff8e1}
.muted{color:#666}
`;
