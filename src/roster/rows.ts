/**
 * The roster of `warden top` as plain data: what visibility and the `status` query say about each
 * agent, folded into one row model; the default order puts first what needs a human (awaiting
 * input, runaway cost, flagged, stuck); column sorts; the `/` fuzzy filter; lineage by indentation. Pure — no Temporal, no
 * terminal — so the TUI and `--once` print the same roster in the same order.
 */
import { z } from 'zod';
import { STATES, isTerminal, type AgentState } from '../domain/contract/states.js';
import type { MeshInfo } from './meshes.js';
import { SORT_KEYS, type SortKey } from './sort-keys.js';
import { burnSeries, isRunaway, sparkline, SPARK_BUCKETS, type RunawayOptions, DEFAULT_RUNAWAY } from './sparkline.js';

/** One agent as visibility lists it (search attributes; no query needed). */
export interface RosterEntry {
  agentId: string;
  workflowId: string;
  runId: string;
  /** The workflow's execution status: RUNNING, COMPLETED, FAILED, TERMINATED, … */
  status: string;
  state: string | null;
  parent: string | null;
  escalationStep: number | null;
  paused: boolean | null;
  costUsd: number | null;
  tokens: number | null;
  /** What supervising it cost so far (its evaluator's model calls), as last published; null on older agents. */
  evaluatorCostUsd: number | null;
  startTime: string;
  closeTime: string | null;
  /** The task's first line from the memo (agents started by this client); shown until the row's status is read. */
  task?: string | null;
}

const num = z.number().catch(0);
/**
 * The part of the `status` query `top` reads, validated leniently: a field an older agent lacks
 * (spend history, current tool, model, task) comes back as null and renders as "—".
 */
export const TopStatusSchema = z.object({
  agentId: z.string(),
  state: z.enum(STATES),
  stateReason: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  paused: z.boolean().catch(false),
  escalationStep: num,
  escalationThreshold: z.number().catch(3),
  turns: num,
  lastVerdict: z
    .object({ kind: z.string(), pattern: z.string().nullable().catch(null), message: z.string().catch(''), at: z.string().catch('') })
    .nullish()
    .transform((v) => v ?? null),
  lastSkipReason: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  /** The last `dismiss` (false alarm): a flagged verdict at or before it is no longer a flag. */
  lastDismissal: z
    .object({ at: z.string().catch('') })
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  pendingWhispers: num,
  tokens: z.object({ in: num, out: num, total: num }).catch({ in: 0, out: 0, total: 0 }),
  costUsd: num,
  /** What its CLI's sub-agents spent (a hooked session's), counted with the agent's own spend as visibility publishes it. */
  subagents: z
    .object({ spend: z.object({ tokens: z.object({ in: num, out: num }), costUsd: num }).nullish() })
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  lastTurnAt: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  lastHeartbeatAt: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  turnRunning: z.boolean().catch(false),
  refused: z.array(z.object({ what: z.string(), reason: z.string(), at: z.string() })).catch([]),
  budgets: z.record(z.string(), z.object({ used: z.number(), limit: z.number().nullable() })).catch({}),
  parent: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  children: z.array(z.object({ agentId: z.string(), state: z.string(), reason: z.string().nullable().catch(null) })).catch([]),
  // Fields the agent core adds for top; absent on older agents.
  spend: z
    .object({ bucketMs: z.number().positive(), buckets: z.array(z.object({ at: z.string(), tokens: num, costUsd: num })).max(SPARK_BUCKETS * 2) })
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  currentTool: z
    .string()
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  model: z
    .string()
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  task: z
    .string()
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  evaluatorSpend: z
    .object({ calls: num, failed: num, tokens: z.object({ in: num, out: num, total: num }), costUsd: num, decided: z.object({ heuristic: num, model: num }) })
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
  /** Supervision per agent-hour over the hours the agent has been supervised (all its runs); absent on older agents. */
  supervision: z
    .object({ hours: num, costUsdPerHour: z.number().nullable().catch(null) })
    .nullish()
    .catch(null)
    .transform((v) => v ?? null),
});
export type TopStatus = z.output<typeof TopStatusSchema>;

/** Parse a status answer; a wrong shape is an error that names the field. */
export function parseTopStatus(raw: unknown): TopStatus {
  const r = TopStatusSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`status answer: ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data;
}

/**
 * The conditions an operator watches for, loudest first; the default sort key. `blocked` (waiting on the
 * system: a rate-limited model, delegated children) needs no human, but is not making progress
 * either: after the conditions that need one, before the agents that are simply working.
 */
export const PRIORITIES = ['awaiting-input', 'runaway', 'flagged', 'stuck', 'blocked', 'normal', 'finished'] as const;
export type Priority = (typeof PRIORITIES)[number];

export interface Row {
  agentId: string;
  shortId: string;
  parent: string | null;
  depth: number;
  state: string;
  finished: boolean;
  priority: Priority;
  /** Why the row has its priority, in words (shown in --once and the focus pane). */
  why: string;
  intent: string | null;
  model: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  costUsd: number | null;
  tool: string | null;
  burn: number[];
  burnMetric: 'costUsd' | 'tokens';
  spark: string;
  startedAt: string;
  elapsedMs: number;
  escalationStep: number | null;
  escalationThreshold: number | null;
  pendingWhispers: number | null;
  lastVerdict: TopStatus['lastVerdict'];
  /** The evaluator's own model spend (null: not queried, or an older agent). */
  evaluatorSpend: TopStatus['evaluatorSpend'];
  /** What supervision cost so far: the evaluator's dollars, from the status answer, else from visibility (null: not known). */
  supervisionUsd: number | null;
  /** Those dollars per agent-hour (null: not known, or under a minute supervised). */
  supervisionUsdPerHour: number | null;
  /** A status answer is behind this row (else only visibility). */
  detailed: boolean;
  /** Set on a mesh's row (meshes.ts); its worker agents are its children. */
  mesh?: MeshInfo;
}

export interface RowOptions {
  nowMs: number;
  /** A live agent with no turn and no heartbeat for this long is stuck. */
  stuckAfterMs: number;
  runaway: RunawayOptions;
}
export const DEFAULT_ROW_OPTIONS: Omit<RowOptions, 'nowMs'> = { stuckAfterMs: 5 * 60_000, runaway: DEFAULT_RUNAWAY };

/** "Supervising fixer: make the build pass" → "make the build pass". */
export function intentFromSummary(summary: string | null | undefined): string | null {
  if (!summary) return null;
  return (
    summary
      .replace(/^(Supervising|Delegated by) [^:]+:\s*/, '')
      .split('\n')[0]!
      .trim() || null
  );
}

export function shortId(agentId: string, parent: string | null): string {
  // A child's id is "<parent>.<child>"; under its parent the prefix is noise.
  return parent && agentId.startsWith(`${parent}.`) ? agentId.slice(parent.length + 1) : agentId;
}

/** A human dismissed the last flagged verdict as a false alarm (at or after the verdict). */
export function dismissedSince(st: Pick<TopStatus, 'lastVerdict' | 'lastDismissal'>): boolean {
  const v = st.lastVerdict?.at ? Date.parse(st.lastVerdict.at) : Number.NaN;
  const d = st.lastDismissal?.at ? Date.parse(st.lastDismissal.at) : Number.NaN;
  return Number.isFinite(v) && Number.isFinite(d) && d >= v;
}

function isState(s: string | null): s is AgentState {
  return !!s && (STATES as readonly string[]).includes(s);
}

function classify(
  state: string,
  finished: boolean,
  st: TopStatus | null,
  saStep: number,
  runaway: boolean,
  o: RowOptions,
): { priority: Priority; why: string } {
  if (finished) return { priority: 'finished', why: state };
  if (state === 'awaiting-input') return { priority: 'awaiting-input', why: st?.stateReason ?? 'waiting for a human' };
  if (runaway) return { priority: 'runaway', why: 'burn-rate spike' };
  // Summarising, not thinking: warden's last resort (flagged: the verdict that led to it) or the agent's own CLI.
  if (state === 'compacting') {
    const flagged = !!st?.lastVerdict && st.lastVerdict.kind !== 'OK' && /^compacting \(last resort/.test(st.stateReason ?? '');
    return { priority: flagged ? 'flagged' : 'normal', why: st?.stateReason ?? 'compacting its context' };
  }
  if (st?.lastVerdict && st.lastVerdict.kind !== 'OK' && !dismissedSince(st)) {
    return { priority: 'flagged', why: `${st.lastVerdict.kind}${st.lastVerdict.pattern ? ` ${st.lastVerdict.pattern}` : ''}: ${st.lastVerdict.message}` };
  }
  // Without a status answer (a row not yet queried), a climbing ladder is the only sign of a flag.
  if (!st && saStep > 0) return { priority: 'flagged', why: `escalation step ${saStep}` };
  if (state === 'orphaned') return { priority: 'stuck', why: 'orphaned: heartbeat lost' };
  if (state === 'running' && st && !st.turnRunning) {
    const last = Math.max(Date.parse(st.lastTurnAt ?? '') || 0, Date.parse(st.lastHeartbeatAt ?? '') || 0);
    if (last > 0 && o.nowMs - last >= o.stuckAfterMs) return { priority: 'stuck', why: `idle ${formatElapsed(o.nowMs - last)}: no turn, no heartbeat` };
  }
  if (state === 'blocked') return { priority: 'blocked', why: `blocked: ${st?.stateReason ?? 'waiting on the system'}` };
  return { priority: 'normal', why: state };
}

/** One row from visibility and, when the row was queried, its status and intent. */
export function buildRow(e: RosterEntry, st: TopStatus | null, intent: string | null, o: RowOptions): Row {
  const finished = e.status !== 'RUNNING' || (st ? isTerminal(st.state) : isState(e.state) && isTerminal(e.state));
  const state = st?.state ?? e.state ?? (e.status === 'RUNNING' ? 'unknown' : e.status.toLowerCase());
  const series = burnSeries(st?.spend ?? null, o.nowMs, SPARK_BUCKETS);
  const runaway = !finished && isRunaway(series, o.runaway);
  const { priority, why } = classify(state, finished, st, e.escalationStep ?? 0, runaway, o);
  const parent = st?.parent ?? e.parent;
  const end = e.closeTime ? Date.parse(e.closeTime) : o.nowMs;
  return {
    agentId: e.agentId,
    shortId: shortId(e.agentId, parent),
    parent,
    depth: 0,
    state,
    finished,
    priority,
    why,
    intent: st?.task ? intentFromSummary(st.task) : (intent ?? intentFromSummary(e.task)),
    model: st?.model ?? null,
    tokensIn: st ? st.tokens.in + (st.subagents?.spend?.tokens.in ?? 0) : null,
    tokensOut: st ? st.tokens.out + (st.subagents?.spend?.tokens.out ?? 0) : null,
    costUsd: st ? st.costUsd + (st.subagents?.spend?.costUsd ?? 0) : e.costUsd,
    tool: st?.currentTool ?? null,
    burn: series.values,
    burnMetric: series.metric,
    spark: sparkline(series.values),
    startedAt: e.startTime,
    elapsedMs: Math.max(0, end - Date.parse(e.startTime)),
    escalationStep: st ? st.escalationStep : e.escalationStep,
    escalationThreshold: st ? st.escalationThreshold : null,
    pendingWhispers: st ? st.pendingWhispers : null,
    lastVerdict: st?.lastVerdict ?? null,
    evaluatorSpend: st?.evaluatorSpend ?? null,
    ...supervisionOf(e, st, end),
    detailed: !!st,
  };
}

/**
 * Supervision's cost of one row: the status answer's evaluator spend and rate where the row was
 * queried (the rate over every run of the agent), else the visibility listing's figure (published
 * with WardenCostUsd, so at most minutes old) over the hours since this run started.
 */
function supervisionOf(e: RosterEntry, st: TopStatus | null, endMs: number): Pick<Row, 'supervisionUsd' | 'supervisionUsdPerHour'> {
  const usd = st?.evaluatorSpend?.costUsd ?? e.evaluatorCostUsd;
  if (usd === null) return { supervisionUsd: null, supervisionUsdPerHour: null };
  if (st?.evaluatorSpend && st.supervision) return { supervisionUsd: usd, supervisionUsdPerHour: st.supervision.costUsdPerHour };
  const ms = endMs - Date.parse(e.startTime);
  return { supervisionUsd: usd, supervisionUsdPerHour: ms >= 60_000 ? usd / (ms / 3_600_000) : null };
}

/** The fleet's spend: what the agents cost and what supervising them cost (agent rows only: a mesh row sums its workers). */
export interface FleetTotals {
  agents: number;
  costUsd: number;
  supervisionUsd: number;
}

export function fleetTotals(rows: readonly Row[]): FleetTotals {
  let agents = 0;
  let costUsd = 0;
  let supervisionUsd = 0;
  for (const r of rows) {
    if (r.mesh) continue;
    agents++;
    costUsd += r.costUsd ?? 0;
    supervisionUsd += r.supervisionUsd ?? 0;
  }
  return { agents, costUsd, supervisionUsd };
}

/** "agents $1.234 · supervision $0.056": top's title line, `--once`'s last line, the fleet page's header. */
export function formatFleetTotals(t: FleetTotals): string {
  return `agents ${formatCost(t.costUsd)} · supervision ${formatCost(t.supervisionUsd)}`;
}

/** A supervision rate per agent-hour: "$0.42/h", "—" when not known. */
export function formatRate(usdPerHour: number | null): string {
  return usdPerHour === null ? '—' : `${formatCost(usdPerHour)}/h`;
}

// ---------- sorting ----------

export { SORT_KEYS, type SortKey };
export interface Sort {
  key: SortKey;
  desc: boolean;
}
export const DEFAULT_SORT: Sort = { key: 'priority', desc: false };

const recentBurn = (r: Row) => r.burn.slice(-5).reduce((a, b) => a + b, 0);
const cmpNum = (a: number | null, b: number | null) => (a ?? -1) - (b ?? -1);
const cmpStr = (a: string | null, b: string | null) => (a ?? '').localeCompare(b ?? '');

/** Compare two rows by one column; ties fall back to the agent id, so the order is total. */
export function compareRows(a: Row, b: Row, sort: Sort): number {
  let c = 0;
  switch (sort.key) {
    case 'priority':
      c = PRIORITIES.indexOf(a.priority) - PRIORITIES.indexOf(b.priority);
      // Within a class: the longer at escalation and the bigger spender first; then the oldest.
      if (c === 0) c = cmpNum(b.escalationStep, a.escalationStep);
      if (c === 0 && a.priority === 'runaway') c = recentBurn(b) - recentBurn(a);
      if (c === 0) c = cmpStr(a.startedAt, b.startedAt);
      break;
    case 'id':
      c = cmpStr(a.agentId, b.agentId);
      break;
    case 'state':
      c = cmpStr(a.state, b.state);
      break;
    case 'intent':
      c = cmpStr(a.intent, b.intent);
      break;
    case 'model':
      c = cmpStr(a.model, b.model);
      break;
    case 'tokens':
      c = cmpNum(a.tokensIn === null ? null : a.tokensIn + (a.tokensOut ?? 0), b.tokensIn === null ? null : b.tokensIn + (b.tokensOut ?? 0));
      break;
    case 'cost':
      c = cmpNum(a.costUsd, b.costUsd);
      break;
    case 'supervision':
      c = cmpNum(a.supervisionUsd, b.supervisionUsd);
      break;
    case 'tool':
      c = cmpStr(a.tool, b.tool);
      break;
    case 'burn':
      c = recentBurn(a) - recentBurn(b);
      break;
    case 'elapsed':
      c = a.elapsedMs - b.elapsedMs;
      break;
    case 'step':
      c = cmpNum(a.escalationStep, b.escalationStep);
      break;
  }
  if (sort.desc) c = -c;
  return c !== 0 ? c : cmpStr(a.agentId, b.agentId);
}

/**
 * Order rows as a forest: roots sorted by `sort`, each followed by its children (sorted the same way,
 * indented one level deeper). Under the priority sort a subtree ranks by its loudest member, so a
 * parent whose child awaits input rises with it. A row whose parent is not in the roster is a root.
 */
export function arrange(rows: Row[], sort: Sort = DEFAULT_SORT): Row[] {
  const byId = new Map(rows.map((r) => [r.agentId, r]));
  const kids = new Map<string, Row[]>();
  const roots: Row[] = [];
  for (const r of rows) {
    if (r.parent && r.parent !== r.agentId && byId.has(r.parent)) {
      const list = kids.get(r.parent) ?? [];
      list.push(r);
      kids.set(r.parent, list);
    } else roots.push(r);
  }
  // The loudest priority in each subtree (guarding against cycles in bad data).
  const loudest = new Map<string, number>();
  const subtree = (r: Row, seen: Set<string>): number => {
    const cached = loudest.get(r.agentId);
    if (cached !== undefined) return cached;
    let p = PRIORITIES.indexOf(r.priority);
    seen.add(r.agentId);
    for (const k of kids.get(r.agentId) ?? []) if (!seen.has(k.agentId)) p = Math.min(p, subtree(k, seen));
    loudest.set(r.agentId, p);
    return p;
  };
  const cmp = (a: Row, b: Row) => {
    if (sort.key === 'priority') {
      const c = subtree(a, new Set()) - subtree(b, new Set());
      if (c !== 0) return sort.desc ? -c : c;
    }
    return compareRows(a, b, sort);
  };
  const out: Row[] = [];
  const placed = new Set<string>();
  const walk = (r: Row, depth: number) => {
    if (placed.has(r.agentId)) return;
    placed.add(r.agentId);
    out.push({ ...r, depth });
    for (const k of [...(kids.get(r.agentId) ?? [])].sort(cmp)) walk(k, depth + 1);
  };
  for (const r of [...roots].sort(cmp)) walk(r, 0);
  // Rows caught in a parent cycle are nobody's descendants: list them as roots.
  for (const r of rows) if (!placed.has(r.agentId)) walk(r, 0);
  return out;
}

// ---------- filtering ----------

/**
 * fzf-style subsequence match: every character of the pattern appears in order in the text (case-
 * insensitive). Returns a score (higher is better: contiguous runs and word starts score more) or
 * null for no match. Whitespace in the pattern separates terms that must all match.
 */
export function fuzzyScore(pattern: string, text: string): number | null {
  const terms = pattern.toLowerCase().split(/\s+/).filter(Boolean);
  const t = text.toLowerCase();
  let total = 0;
  for (const term of terms) {
    let score = 0;
    let pos = -1;
    let run = 0;
    for (const ch of term) {
      const next = t.indexOf(ch, pos + 1);
      if (next < 0) return null;
      run = next === pos + 1 ? run + 1 : 0;
      const wordStart = next === 0 || /[\s.\-_:/]/.test(t[next - 1]!);
      score += 1 + run * 2 + (wordStart ? 3 : 0);
      pos = next;
    }
    total += score;
  }
  return total;
}

/** What the filter searches in a row: each field on its own, so a match never spans two fields. */
export function haystack(r: Row): string[] {
  return [r.agentId, r.state, r.intent ?? '', r.model ?? '', r.tool ?? '', r.priority].filter(Boolean);
}

/** Every term of the pattern must match (fuzzily) inside one field; the score is the sum of the best. */
export function matchRow(pattern: string, r: Row): number | null {
  const fields = haystack(r);
  let total = 0;
  for (const term of pattern.split(/\s+/).filter(Boolean)) {
    let best: number | null = null;
    for (const f of fields) {
      const sc = fuzzyScore(term, f);
      if (sc !== null && (best === null || sc > best)) best = sc;
    }
    if (best === null) return null;
    total += best;
  }
  return total;
}

/**
 * Keep the rows that match `pattern`, plus their ancestors (so a matching child keeps its lineage
 * visible). An empty pattern keeps everything. Order is preserved: filter after `arrange`.
 */
export function filterRows(arranged: Row[], pattern: string): Row[] {
  if (!pattern.trim()) return arranged;
  const byId = new Map(arranged.map((r) => [r.agentId, r]));
  const keep = new Set<string>();
  for (const r of arranged) {
    if (matchRow(pattern, r) === null) continue;
    let cur: Row | undefined = r;
    while (cur && !keep.has(cur.agentId)) {
      keep.add(cur.agentId);
      cur = cur.parent ? byId.get(cur.parent) : undefined;
    }
  }
  return arranged.filter((r) => keep.has(r.agentId));
}

/** Hide finished rows, except a finished parent that still has a visible live descendant. */
export function hideFinished(arranged: Row[]): Row[] {
  const byId = new Map(arranged.map((r) => [r.agentId, r]));
  const keep = new Set<string>();
  for (const r of arranged) {
    if (r.finished) continue;
    let cur: Row | undefined = r;
    while (cur && !keep.has(cur.agentId)) {
      keep.add(cur.agentId);
      cur = cur.parent ? byId.get(cur.parent) : undefined;
    }
  }
  return arranged.filter((r) => keep.has(r.agentId));
}

/** The whole pipeline: rows → forest order → hide finished → filter. */
export function roster(rows: Row[], view: { sort?: Sort; filter?: string; showFinished?: boolean } = {}): Row[] {
  let out = arrange(rows, view.sort ?? DEFAULT_SORT);
  if (view.showFinished === false) out = hideFinished(out);
  return filterRows(out, view.filter ?? '');
}

// ---------- formatting ----------

export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

export function formatCount(n: number | null): string {
  if (n === null) return '—';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatCost(n: number | null): string {
  if (n === null) return '—';
  return n < 10 ? `$${n.toFixed(3)}` : `$${n.toFixed(2)}`;
}

/** The state badge: a symbol and the state's name (never colour alone), plus the colour to draw it in. */
export function badge(state: string): { text: string; color: string } {
  const table: Record<string, [string, string]> = {
    'awaiting-input': ['‼', 'magentaBright'],
    running: ['▶', 'green'],
    spawning: ['✶', 'cyan'],
    queued: ['…', 'cyan'],
    blocked: ['⧗', 'yellow'],
    'paused-by-user': ['⏸', 'yellow'],
    compacting: ['⇣', 'blue'],
    cancelling: ['✕', 'yellow'],
    done: ['✓', 'gray'],
    failed: ['✗', 'red'],
    orphaned: ['☠', 'redBright'],
    // A mesh's phases (its row in the roster).
    'setting-up': ['✶', 'cyan'],
    validating: ['⚙', 'cyan'],
    ready: ['◆', 'greenBright'],
    applied: ['✓', 'gray'],
    cancelled: ['✕', 'gray'],
  };
  const [sym, color] = table[state] ?? ['?', 'white'];
  return { text: `${sym} ${state}`, color };
}

export function formatStep(r: Row): string {
  if (r.escalationStep === null) return '—';
  return r.escalationThreshold ? `${r.escalationStep}/${r.escalationThreshold}` : String(r.escalationStep);
}

/** What `--once --json` prints per row. */
export function rowJson(r: Row) {
  return {
    agentId: r.agentId,
    parent: r.parent,
    depth: r.depth,
    state: r.state,
    finished: r.finished,
    priority: r.priority,
    why: r.why,
    intent: r.intent,
    model: r.model,
    tokens: { in: r.tokensIn, out: r.tokensOut },
    costUsd: r.costUsd,
    currentTool: r.tool,
    burn: { metric: r.burnMetric, buckets: r.burn },
    startedAt: r.startedAt,
    elapsedMs: r.elapsedMs,
    escalationStep: r.escalationStep,
    escalationThreshold: r.escalationThreshold,
    pendingWhispers: r.pendingWhispers,
    evaluatorSpend: r.evaluatorSpend,
    supervision: { costUsd: r.supervisionUsd, costUsdPerAgentHour: r.supervisionUsdPerHour },
    detailed: r.detailed,
  };
}
