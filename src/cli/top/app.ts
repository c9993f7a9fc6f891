/**
 * The `warden top` terminal UI (Ink). It draws the roster from `src/roster/rows.ts` and `table.ts`, asks
 * `src/roster/source.ts` for data, and sends verbs through the warden client. It owns no agent state: every
 * refresh is a projection of what visibility and the `status` query say.
 */
import { Box, Text, render, useApp, useInput, useStdout } from 'ink';
import { createElement as h, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { WardenClient } from '../../client/index.js';
import { visible } from '../../text/sanitize.js';
import { checkVerb, refusalSince, statusBarLabels, verbForKey, VERBS, type Verb } from './verbs.js';
import {
  badge,
  buildRow,
  DEFAULT_ROW_OPTIONS,
  DEFAULT_SORT,
  formatCost,
  formatElapsed,
  formatFleetTotals,
  formatRate,
  fleetTotals,
  roster,
  SORT_KEYS,
  type RosterEntry,
  type Row,
  type Sort,
} from '../../roster/rows.js';
import { cells, headerCells, layoutColumns, longestId } from './table.js';
import { fetchFocus, listMeshes, listRoster, MeshCache, StatusCache, type FocusDetails } from '../../roster/source.js';
import {
  buildMeshRow,
  meshDeclined,
  meshFocusLines,
  meshKey,
  meshOutcome,
  meshPending,
  meshVerbRefusal,
  type MeshAction,
  type MeshEntry,
} from '../../roster/meshes.js';
import { applyMesh, cancelMesh, resumeMesh } from '../../client/mesh.js';
import { formatEvaluatorSpend } from '../../domain/judgement/tiered.js';

export interface TopOptions {
  /** Status queries for rows in view, this often (ms). */
  pollMs: number;
  /** The roster from visibility, this often (ms). */
  listMs: number;
  concurrency: number;
  showFinished: boolean;
  title: string;
}

type Mode =
  | { kind: 'normal' }
  | { kind: 'filter' }
  | { kind: 'steer'; agentId: string; text: string }
  | { kind: 'confirm'; agentId: string; verb: Verb }
  | { kind: 'confirm-mesh'; action: 'apply' | 'cancel'; runId: string; prompt: string }
  | { kind: 'help' };
interface Message {
  text: string;
  tone: 'info' | 'ok' | 'error';
}

/** Data outside React: the roster, the status cache, the focused agent's details. */
class Feed {
  entries: RosterEntry[] = [];
  meshes: MeshEntry[] = [];
  listError: string | null = null;
  focus: FocusDetails | null = null;
  focusError: string | null = null;
  visible: RosterEntry[] = [];
  focusId: string | null = null;
  readonly cache: StatusCache;
  readonly meshCache: MeshCache;
  private timers: NodeJS.Timeout[] = [];
  private listing = false;
  private polling = false;
  private listeners = new Set<() => void>();

  constructor(
    readonly client: WardenClient,
    readonly opts: TopOptions,
  ) {
    this.cache = new StatusCache(client, { intervalMs: opts.pollMs, concurrency: opts.concurrency });
    this.meshCache = new MeshCache(client, Math.max(1, opts.concurrency >> 2));
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  private emit() {
    for (const fn of this.listeners) fn();
  }

  start() {
    void this.list();
    this.timers.push(setInterval(() => void this.list(), this.opts.listMs));
    this.timers.push(setInterval(() => void this.poll(), Math.max(100, Math.floor(this.opts.pollMs / 2))));
  }
  stop() {
    for (const t of this.timers) clearInterval(t);
  }

  async list() {
    if (this.listing) return;
    this.listing = true;
    try {
      [this.entries, this.meshes] = await Promise.all([listRoster(this.client), listMeshes(this.client)]);
      this.listError = null;
      // Meshes are few: their status is asked at the roster's cadence, every live one (not awaited:
      // a query that hangs, with no worker running, must not hold up the roster).
      void this.meshCache.poll(this.meshes).then(() => this.emit());
    } catch (err) {
      this.listError = err instanceof Error ? err.message : String(err);
    } finally {
      this.listing = false;
    }
    this.emit();
    void this.poll();
  }

  async poll() {
    if (this.polling) return;
    this.polling = true;
    try {
      const focus = this.focusId ? this.entries.find((e) => e.agentId === this.focusId) : undefined;
      const rows = this.visible.length ? this.visible : this.entries.slice(0, 50);
      await Promise.all([
        this.cache.poll(focus && !rows.includes(focus) ? [...rows, focus] : rows),
        focus
          ? fetchFocus(this.client, focus).then(
              (f) => ((this.focus = f), (this.focusError = null)),
              (err) => (this.focusError = err instanceof Error ? err.message : String(err)),
            )
          : Promise.resolve(),
      ]);
    } finally {
      this.polling = false;
    }
    this.emit();
  }
}

/**
 * State whose latest value the key handler can read at once: keys typed faster than a frame arrive
 * as several events before React renders again, and each must see what the one before it did.
 */
function useSyncState<T>(initial: T): [T, (v: T | ((prev: T) => T)) => void, { current: T }] {
  const ref = useRef(initial);
  const [value, setValue] = useState(initial);
  const set = (v: T | ((prev: T) => T)) => {
    ref.current = typeof v === 'function' ? (v as (prev: T) => T)(ref.current) : v;
    setValue(ref.current);
  };
  return [value, set, ref];
}

function useFeed(feed: Feed): number {
  const [n, setN] = useState(0);
  useEffect(() => feed.onChange(() => setN((x) => x + 1)), [feed]);
  return n;
}

/**
 * One line of the screen. Text from agents (tasks, turns, tool calls, whispers, reasons, errors) may
 * carry escape sequences: a string child is shown with every terminal control as visible text, as
 * one line. Nested <Text> children are built with `seg`, which does the same.
 */
function line(key: string | number, children: ReactNode, props: Record<string, unknown> = {}) {
  const safe =
    typeof children === 'string' ? visible(children) : Array.isArray(children) ? children.map((c) => (typeof c === 'string' ? visible(c) : c)) : children;
  return h(Text, { key, wrap: 'truncate', ...props }, safe);
}
function seg(key: string | number, text: string, props: Record<string, unknown> = {}) {
  return h(Text, { key, ...props }, visible(text));
}

function FocusPane({ row, feed, height, width }: { row: Row; feed: Feed; height: number; width: number }) {
  const st = feed.cache.status(row.agentId);
  const f = feed.focus?.agentId === row.agentId ? feed.focus : null;
  const out: ReactNode[] = [];
  const b = badge(row.state);
  out.push(line('t', [seg('a', `▌${row.agentId} `, { bold: true }), seg('b', `[${b.text}] `, { color: b.color }), seg('c', row.intent ?? '—')]));
  out.push(line('why', `  priority ${row.priority} — ${row.why}`, { dimColor: true }));
  const v = st?.lastVerdict;
  out.push(
    line(
      'v',
      v
        ? `  last verdict: ${v.kind}${v.pattern ? ` [${v.pattern}]` : ''} ${v.message}${v.at ? ` (${v.at.slice(11, 19)})` : ''}`
        : `  last verdict: none yet${st?.lastSkipReason ? ` (last evaluation skipped: ${st.lastSkipReason})` : ''}`,
      { color: v && v.kind !== 'OK' ? 'yellow' : undefined },
    ),
  );
  if (st) {
    const budgets = Object.entries(st.budgets)
      .map(
        ([k, x]) =>
          `${k} ${k === 'costUsd' ? formatCost(x.used) : k === 'wallClockMs' ? formatElapsed(x.used) : x.used}/${x.limit === null ? '∞' : k === 'costUsd' ? formatCost(x.limit) : k === 'wallClockMs' ? formatElapsed(x.limit) : x.limit}`,
      )
      .join(' · ');
    out.push(line('bu', `  budgets: ${budgets || '—'} · escalation ${st.escalationStep}/${st.escalationThreshold}`));
    const es = st.evaluatorSpend;
    if (es && es.calls + es.decided.heuristic + es.decided.model > 0)
      out.push(
        line(
          'es',
          `  evaluator spend: ${formatEvaluatorSpend(es)}${row.supervisionUsdPerHour === null ? '' : `; ${formatRate(row.supervisionUsdPerHour)} per agent-hour`}`,
        ),
      );
    out.push(line('ch', `  children: ${st.children.length ? st.children.map((c) => `${c.agentId} (${c.state})`).join(', ') : 'none'}`));
    const lastRefusal = st.refused.at(-1);
    if (lastRefusal) out.push(line('rf', `  last refusal: ${lastRefusal.what} — ${lastRefusal.reason}`, { dimColor: true }));
  }
  const whispers = f?.whispers ?? [];
  out.push(line('w', `  pending whispers (${whispers.length}): ${whispers.map((w) => `[${w.type}] ${w.text}`).join(' | ') || '—'}`));
  out.push(line('tt', '  transcript tail:', { bold: true }));
  const tail: ReactNode[] = [];
  for (const [i, t] of (f?.window ?? []).entries()) {
    tail.push(line(`turn${i}`, `  › ${t.text.replace(/\s+/g, ' ')}`));
    for (const [j, c] of (t.toolCalls ?? []).entries()) {
      const args = typeof c.args === 'string' ? c.args : c.args === undefined ? '' : JSON.stringify(c.args);
      const res = c.result === undefined ? '' : ` → ${typeof c.result === 'string' ? c.result : JSON.stringify(c.result)}`;
      tail.push(
        line(`turn${i}.${j}`, `      ${c.ok === false ? '✗' : '⚙'} ${c.name} ${args}${res}`.replace(/\s+$/, ''), { color: c.ok === false ? 'red' : 'gray' }),
      );
    }
  }
  if (feed.focusError) tail.push(line('fe', `  (${feed.focusError})`, { color: 'red' }));
  if (!tail.length) tail.push(line('none', '  (no turns in the window yet)', { dimColor: true }));
  const room = Math.max(1, height - out.length - 1);
  out.push(...tail.slice(-room));
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'single', borderTop: true, borderBottom: false, borderLeft: false, borderRight: false, width, height },
    out,
  );
}

function MeshPane({ row, feed, height, width }: { row: Row; feed: Feed; height: number; width: number }) {
  const m = row.mesh!;
  const e = feed.meshes.find((x) => x.workflowId === m.workflowId);
  const b = badge(row.state);
  const out: ReactNode[] = [
    line('t', [seg('a', `▌${row.agentId} `, { bold: true }), seg('b', `[${b.text}] `, { color: b.color }), seg('c', m.progress ?? '—')]),
  ];
  const body = meshFocusLines(m.runId, e ? feed.meshCache.status(e) : null, m.error);
  out.push(...body.slice(0, Math.max(1, height - 1)).map((l, i) => line(`m${i}`, l, { dimColor: i === body.length - 1 })));
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'single', borderTop: true, borderBottom: false, borderLeft: false, borderRight: false, width, height },
    out,
  );
}

function HelpPane() {
  const lines = [
    'warden top — keys',
    '  ↑/↓ or j/k  move      PgUp/PgDn  page      ⏎  focus pane on/off      esc  close / clear',
    ...VERBS.map((v) => `  ${v.key}  ${v.label}${v.confirm ? ' (asks y/N)' : ''}${v.prompt ? ' (prompts for text)' : ''}`),
    '  /  fuzzy filter (⏎ keeps it, esc clears)      < >  sort by the previous / next column      !  reverse the sort',
    '  h  show/hide finished agents      ?  this help      q  quit',
    'Default order: awaiting input, runaway cost, flagged (last verdict not OK), stuck, the rest, finished.',
    'A live mesh is a row (mesh-<run>: phase, tasks through, reason) with its workers under it. On a mesh row:',
    '  a  apply: merge its integration branch into your branch (asks y/N; a mesh not ready refuses, with its reason)',
    '  x  cancel: stop every worker and end the mesh, merging nothing (asks y/N)      r  resume a mesh awaiting input',
    '  the other verbs act on agents only (select a worker).',
    'A verb the state table refuses is not sent; the reason shows in the status bar. A refusal the workflow records shows too.',
  ];
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'round', paddingX: 1 },
    lines.map((l, i) => line(i, l)),
  );
}

export function TopApp({ client, opts }: { client: WardenClient; opts: TopOptions }) {
  const { exit } = useApp();
  const { stdout } = useStdout();
  const feed = useMemo(() => new Feed(client, opts), [client, opts]);
  useEffect(() => {
    feed.start();
    return () => feed.stop();
  }, [feed]);
  useFeed(feed);
  const [size, setSize] = useState({ cols: stdout.columns || 120, rows: stdout.rows || 40 });
  useEffect(() => {
    const on = () => setSize({ cols: stdout.columns || 120, rows: stdout.rows || 40 });
    stdout.on('resize', on);
    return () => void stdout.off('resize', on);
  }, [stdout]);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);

  const [sort, setSort] = useState<Sort>(DEFAULT_SORT);
  const [filter, setFilter, filterRef] = useSyncState('');
  const [showFinished, setShowFinished] = useState(opts.showFinished);
  const [selected, setSelected] = useState<string | null>(null);
  const [focusOpen, setFocusOpen] = useState(false);
  const [mode, setMode, modeRef] = useSyncState<Mode>({ kind: 'normal' });
  const [message, setMessage] = useState<Message | null>(null);
  const pendingVerb = useRef<{ agentId: string; verb: Verb['signal']; at: string } | null>(null);

  const rowOpts = { ...DEFAULT_ROW_OPTIONS, nowMs: now };
  const all = [
    ...feed.entries.map((e) => buildRow(e, feed.cache.status(e.agentId), feed.cache.intent(e.agentId), rowOpts)),
    ...feed.meshes.map((m) => buildMeshRow(m, feed.meshCache.status(m), feed.meshCache.error(m), rowOpts)),
  ];
  const rows = roster(all, { sort, filter, showFinished });
  let selIndex = rows.findIndex((r) => r.agentId === selected);
  if (selIndex < 0) selIndex = 0;
  const sel = rows[selIndex] ?? null;
  // Selection follows the agent, not the line: a re-sort never moves a verb onto another agent.
  useEffect(() => {
    if (sel && sel.agentId !== selected) setSelected(sel.agentId);
  });

  // Layout: title, header, roster, (focus pane), prompt/message, status bar.
  const focusHeight = focusOpen && sel ? Math.max(8, Math.floor((size.rows - 4) * 0.5)) : 0;
  const listHeight = Math.max(1, size.rows - 4 - focusHeight - 1);
  const offset = Math.min(Math.max(0, selIndex - listHeight + 1), Math.max(0, rows.length - listHeight));
  const start = Math.min(selIndex, offset);
  const view = rows.slice(start, start + listHeight);
  const byId = new Map(feed.entries.map((e) => [e.agentId, e]));
  feed.visible = view.map((r) => byId.get(r.agentId)).filter((e): e is RosterEntry => !!e);
  feed.focusId = focusOpen && sel ? sel.agentId : null;

  // A verb the workflow refused after we sent it: show its reason (status.refused).
  useEffect(() => {
    const p = pendingVerb.current;
    if (!p) return;
    const st = feed.cache.status(p.agentId);
    if (!st) return;
    const reason = refusalSince(st.refused, p.verb, p.at);
    if (reason) {
      setMessage({ text: `${p.verb} ${p.agentId}: refused by the workflow — ${reason}`, tone: 'error' });
      pendingVerb.current = null;
    }
  });

  const send = (agentId: string, verb: Verb, payload: Record<string, unknown> = {}) => {
    const at = new Date(Date.now() - 1000).toISOString();
    setMessage({ text: `${verb.label} → ${agentId}…`, tone: 'info' });
    client.signal(agentId, verb.signal, payload as never).then(
      () => {
        pendingVerb.current = { agentId, verb: verb.signal, at };
        feed.cache.invalidate(agentId);
        void feed.poll();
        setMessage({ text: `${verb.label} sent to ${agentId}`, tone: 'ok' });
      },
      (err: unknown) => setMessage({ text: `${verb.label} ${agentId} failed: ${err instanceof Error ? err.message : String(err)}`, tone: 'error' }),
    );
  };

  // A mesh row's own keys: the same client calls as `warden mesh apply|cancel|resume`; the outcome,
  // or the client's error (apply on a mesh that is not ready), goes to the status line.
  const meshAct = (action: MeshAction, runId: string) => {
    setMessage({ text: meshPending(action, runId), tone: 'info' });
    const call: Promise<{ commit?: string; branch?: string }> =
      action === 'apply'
        ? applyMesh(client, runId)
        : action === 'cancel'
          ? cancelMesh(client, runId).then(() => ({}))
          : resumeMesh(client, runId).then(() => ({}));
    call.then(
      (r) => {
        setMessage({ text: meshOutcome(action, runId, { ok: true, ...r }), tone: 'ok' });
        void feed.list();
      },
      (err: unknown) => setMessage({ text: meshOutcome(action, runId, { ok: false, error: err }), tone: 'error' }),
    );
  };

  const tryVerb = (verb: Verb) => {
    if (!sel) return setMessage({ text: 'no agent selected', tone: 'error' });
    if (sel.mesh) {
      const o = meshKey(verb.key, verb.label, sel.mesh, sel.finished);
      if (o.kind === 'refuse') return setMessage({ text: o.message, tone: 'error' });
      if (o.kind === 'confirm') return setMode({ kind: 'confirm-mesh', action: o.action, runId: o.runId, prompt: o.prompt });
      return meshAct(o.action, o.runId);
    }
    const check = checkVerb(verb.signal, sel.state);
    if (!check.ok) return setMessage({ text: `${verb.label} ${sel.agentId} refused: ${check.reason}`, tone: 'error' });
    if (verb.prompt) return setMode({ kind: 'steer', agentId: sel.agentId, text: '' });
    if (verb.confirm) return setMode({ kind: 'confirm', agentId: sel.agentId, verb });
    send(sel.agentId, verb);
  };

  const move = (delta: number) => {
    if (!rows.length) return;
    const i = Math.min(rows.length - 1, Math.max(0, selIndex + delta));
    setSelected(rows[i]!.agentId);
  };

  useInput((input, key) => {
    const mode = modeRef.current;
    const filter = filterRef.current;
    if (key.ctrl && input === 'c') {
      exit();
      return;
    }
    const erase = key.backspace || key.delete;
    if (mode.kind === 'filter') {
      if (key.return) return setMode({ kind: 'normal' });
      if (key.escape) return (setFilter(''), setMode({ kind: 'normal' }));
      if (erase) return setFilter((f) => f.slice(0, -1));
      if (input && !key.ctrl && !key.meta) {
        // Text and Enter in one chunk: keep the text, then close the prompt.
        setFilter((f) => f + input.replace(/[\r\n]+$/, ''));
        if (/[\r\n]$/.test(input)) setMode({ kind: 'normal' });
      }
      return;
    }
    if (mode.kind === 'steer') {
      if (key.escape) return (setMode({ kind: 'normal' }), setMessage({ text: 'steer cancelled', tone: 'info' }));
      const enter = key.return || (input.length > 1 && /[\r\n]$/.test(input));
      if (enter) {
        const text = (key.return ? mode.text : mode.text + input).trim();
        setMode({ kind: 'normal' });
        if (!text) return setMessage({ text: 'steer needs text; nothing sent', tone: 'error' });
        send(mode.agentId, verbForKey('s')!, { text });
        return;
      }
      if (erase) return setMode({ ...mode, text: mode.text.slice(0, -1) });
      if (input && !key.ctrl && !key.meta) setMode({ ...mode, text: mode.text + input });
      return;
    }
    if (mode.kind === 'confirm') {
      setMode({ kind: 'normal' });
      if (input === 'y' || input === 'Y') send(mode.agentId, mode.verb);
      else setMessage({ text: `${mode.verb.label} ${mode.agentId} cancelled`, tone: 'info' });
      return;
    }
    if (mode.kind === 'confirm-mesh') {
      setMode({ kind: 'normal' });
      if (input === 'y' || input === 'Y') meshAct(mode.action, mode.runId);
      else setMessage({ text: meshDeclined(mode.action, mode.runId), tone: 'info' });
      return;
    }
    if (mode.kind === 'help') {
      setMode({ kind: 'normal' });
      return;
    }
    if (input === 'q') return exit();
    if (key.upArrow || input === 'k') return move(-1);
    if (key.downArrow || input === 'j') return move(1);
    if (key.pageUp) return move(-listHeight);
    if (key.pageDown) return move(listHeight);
    if (key.home || input === 'g') return move(-rows.length);
    if (key.end || input === 'G') return move(rows.length);
    if (key.return) return setFocusOpen((f) => !f);
    if (key.escape) {
      if (focusOpen) return setFocusOpen(false);
      if (filter) return setFilter('');
      return setMessage(null);
    }
    // Keys typed faster than a frame arrive as one string: the first is the key, the rest is text
    // for the prompt it opens (`/` filter, `s` steer).
    const rest = input.length > 1 ? input.slice(1) : '';
    if (rest && input[0] === '/') {
      setFilter(rest.replace(/[\r\n]+$/, ''));
      return setMode({ kind: /[\r\n]$/.test(rest) ? 'normal' : 'filter' });
    }
    if (rest && input[0] === 's') {
      if (!sel) return setMessage({ text: 'no agent selected', tone: 'error' });
      if (sel.mesh) return setMessage({ text: meshVerbRefusal('steer', sel.mesh.runId), tone: 'error' });
      const check = checkVerb('steer', sel.state);
      if (!check.ok) return setMessage({ text: `steer ${sel.agentId} refused: ${check.reason}`, tone: 'error' });
      return setMode({ kind: 'steer', agentId: sel.agentId, text: rest });
    }
    if (input === '/') return setMode({ kind: 'filter' });
    if (input === '?') return setMode({ kind: 'help' });
    if (input === 'h') return setShowFinished((s) => !s);
    if (input === '<' || input === '>') {
      const i = SORT_KEYS.indexOf(sort.key);
      const next = SORT_KEYS[(i + (input === '>' ? 1 : SORT_KEYS.length - 1)) % SORT_KEYS.length]!;
      return setSort({ key: next, desc: next !== 'priority' && next !== 'id' && next !== 'state' && next !== 'intent' && next !== 'model' && next !== 'tool' });
    }
    if (input === '!') return setSort((s) => ({ ...s, desc: !s.desc }));
    const verb = verbForKey(input);
    if (verb) tryVerb(verb);
  });

  const cols = layoutColumns(size.cols, longestId(rows));
  const live = feed.entries.filter((e) => e.status === 'RUNNING').length;
  const meshes = feed.meshes.length ? ` · ${feed.meshes.length} ${feed.meshes.length === 1 ? 'mesh' : 'meshes'}` : '';
  const title = `warden top · ${opts.title} · ${feed.entries.length} agents (${live} live)${meshes} · ${formatFleetTotals(fleetTotals(all))}${rows.length !== all.length ? ` · showing ${rows.length}` : ''} · sort ${sort.key}${sort.desc ? '↓' : '↑'}${filter ? ` · filter /${filter}` : ''}${showFinished ? '' : ' · finished hidden'}`;
  const children: ReactNode[] = [];
  children.push(line('title', title, { bold: true }));
  children.push(line('header', headerCells(cols, sort).join(' '), { inverse: false, underline: true }));
  if (feed.listError) children.push(line('err', `visibility: ${feed.listError}`, { color: 'red' }));
  const rowEls = view.map((r) => {
    const c = cells(r, cols);
    const b = badge(r.state);
    const isSel = sel?.agentId === r.agentId;
    return line(
      `row-${r.agentId}`,
      c.map((text, i) => {
        const color = cols[i]!.key === 'state' ? b.color : cols[i]!.key === 'burn' ? 'cyan' : undefined;
        return seg(i, i < c.length - 1 ? `${text} ` : text, { color: r.finished ? 'gray' : color });
      }),
      { inverse: isSel, dimColor: r.finished },
    );
  });
  if (!rowEls.length) rowEls.push(line('empty', feed.entries.length ? '  (no agent matches)' : '  (no agents yet)', { dimColor: true }));
  children.push(h(Box, { key: 'roster', flexDirection: 'column', height: listHeight }, rowEls));
  if (mode.kind === 'help') children.push(h(HelpPane, { key: 'help' }));
  else if (focusOpen && sel?.mesh) children.push(h(MeshPane, { key: 'focus', row: sel, feed, height: focusHeight, width: size.cols }));
  else if (focusOpen && sel) children.push(h(FocusPane, { key: 'focus', row: sel, feed, height: focusHeight, width: size.cols }));
  let prompt: ReactNode;
  if (mode.kind === 'filter') prompt = line('prompt', `/${filter}▏  (⏎ keep · esc clear)`, { color: 'cyan' });
  else if (mode.kind === 'steer') prompt = line('prompt', `steer ${mode.agentId}: ${mode.text}▏  (⏎ send · esc cancel)`, { color: 'cyan' });
  else if (mode.kind === 'confirm') prompt = line('prompt', `${mode.verb.label} ${mode.agentId}? y/N`, { color: 'yellow', bold: true });
  else if (mode.kind === 'confirm-mesh') prompt = line('prompt', mode.prompt, { color: 'yellow', bold: true });
  else if (message) prompt = line('prompt', message.text, { color: message.tone === 'error' ? 'red' : message.tone === 'ok' ? 'green' : undefined });
  else prompt = line('prompt', sel ? `${sel.agentId}: ${sel.why}` : '', { dimColor: true });
  children.push(prompt);
  children.push(line('bar', statusBarLabels(sel?.mesh ? 'mesh' : 'agent'), { inverse: true }));
  return h(Box, { flexDirection: 'column', width: size.cols }, children);
}

/** Run the TUI until the operator quits. */
export async function runTop(client: WardenClient, opts: TopOptions): Promise<void> {
  const app = render(h(TopApp, { client, opts }), { exitOnCtrlC: false, patchConsole: true, maxFps: 10 });
  await app.waitUntilExit();
}
