/**
 * An agent's timeline as the console shows it: what warden knows about the agent, from the answers
 * of its `status`, `cases`, `window` and `pendingWhispers` queries, as one list of dated entries,
 * newest first. Pure (the queries are made by the caller); every string in it may be
 * agent-written and is escaped where it is rendered.
 */
import type { AgentStatus } from '../../domain/contract/status.js';
import type { Turn, Whisper } from '../../domain/contract/schemas.js';
import type { AgentCases } from '../../domain/judgement/cases.js';

export type TimelineKind = 'state' | 'evaluation' | 'escalation' | 'whisper' | 'decision' | 'refused' | 'turn' | 'verification' | 'compaction';

export interface TimelineTurn {
  number: number | null;
  text: string;
  tools: string[];
  evidence: boolean;
}

export interface TimelineEntry {
  at: string;
  kind: TimelineKind;
  title: string;
  detail: string | null;
  /** Turns behind the entry (an evaluation's window, with its evidence marked; a turn itself). */
  turns?: TimelineTurn[];
}

export interface AgentFacts {
  status: AgentStatus;
  cases: AgentCases | null;
  window: Turn[] | null;
  whispers: Whisper[] | null;
}

const toolLine = (t: NonNullable<Turn['toolCalls']>[number]): string =>
  `${t.name}${t.args ? ` ${String(t.args).slice(0, 200)}` : ''}${t.ok === false ? ' (failed)' : ''}${t.denied ? ' (denied)' : ''}`;

function timelineTurn(t: Turn, number: number | null, evidence: boolean): TimelineTurn {
  return { number, text: t.text, tools: (t.toolCalls ?? []).map(toolLine), evidence };
}

/** Every entry, newest first (entries without a time sort last). */
export function timeline(f: AgentFacts): TimelineEntry[] {
  const s = f.status;
  const out: TimelineEntry[] = [];
  for (const t of s.transitions ?? []) {
    out.push({ at: t.at, kind: 'state', title: `${t.from} → ${t.to}`, detail: `${t.event}${t.cause ? `: ${t.cause}` : ''}` });
  }
  for (const r of s.refused ?? []) out.push({ at: r.at, kind: 'refused', title: `refused: ${r.what}`, detail: r.reason });
  const caseAts = new Set<string>();
  for (const c of f.cases?.cases ?? []) {
    caseAts.add(c.at);
    const v = c.verdict;
    const first = c.firstTurnNumber ?? null;
    const evidence = new Set(v.evidence ?? []);
    out.push({
      at: c.at,
      kind: c.escalated ? 'escalation' : 'evaluation',
      title: `${c.escalated ? 'escalated: ' : ''}${v.kind}${v.pattern ? ` ${v.pattern}` : ''} (flagged verdict #${c.seq})`,
      detail: `${v.message}${v.evidence?.length ? ` — evidence: turn${v.evidence.length > 1 ? 's' : ''} ${v.evidence.join(', ')}` : ''}`,
      turns: c.turns.map((t, i) => {
        const n = first === null ? null : first + i;
        return timelineTurn(t, n, n !== null && evidence.size ? evidence.has(n) : i >= c.evidenceFrom);
      }),
    });
    if (c.decision) {
      out.push({
        at: c.decision.at,
        kind: 'decision',
        title: `human ${c.decision.kind} flagged verdict #${c.seq}`,
        detail: c.decision.note,
      });
    }
  }
  if (s.lastVerdict && !caseAts.has(s.lastVerdict.at)) {
    const v = s.lastVerdict;
    out.push({ at: v.at, kind: 'evaluation', title: `last verdict: ${v.kind}${v.pattern ? ` ${v.pattern}` : ''}`, detail: v.message || null });
  }
  if (s.lastDismissal && !(f.cases?.cases ?? []).some((c) => c.decision?.kind === 'dismissed' && c.decision.at === s.lastDismissal!.at)) {
    out.push({
      at: s.lastDismissal.at,
      kind: 'decision',
      title: 'human dismissed a finding as a false alarm',
      detail: s.lastDismissal.note ?? s.lastDismissal.message,
    });
  }
  for (const w of f.whispers ?? []) out.push({ at: w.createdAt, kind: 'whisper', title: `whisper ${w.type} (waiting for the next turn)`, detail: w.text });
  if (s.lastVerification) {
    const v = s.lastVerification;
    out.push({
      at: v.at,
      kind: 'verification',
      title: `done-claim check: ${v.skipped ? 'skipped' : v.passed ? 'passed' : 'failed'}`,
      detail: [v.command, v.skipped, v.rewardHacking, v.outputTail].filter(Boolean).join('\n') || null,
    });
  }
  if (s.lastCompaction) out.push({ at: s.lastCompaction.at, kind: 'compaction', title: 'compacted', detail: s.lastCompaction.reason });
  const win = f.window ?? [];
  win.forEach((t, i) => {
    const number = s.turns - win.length + i + 1;
    out.push({
      at: t.at ?? '',
      kind: 'turn',
      title: `turn ${number > 0 ? number : '?'}`,
      detail: null,
      turns: [timelineTurn(t, number > 0 ? number : null, false)],
    });
  });
  return out.sort((a, b) => (b.at || '').localeCompare(a.at || ''));
}

/** The actions the console offers, and the ones that apply in a state (the workflow decides anyway). */
export const CONSOLE_ACTIONS = ['resume', 'steer', 'pause', 'dismiss', 'abort', 'raise'] as const;
export type ConsoleAction = (typeof CONSOLE_ACTIONS)[number];
export const isConsoleAction = (x: string): x is ConsoleAction => (CONSOLE_ACTIONS as readonly string[]).includes(x);

/** The new limits the raise form asks for (blank fields are left as they are), or what is wrong with one (its field named). */
export function raiseFromForm(
  form: URLSearchParams,
): { ok: true; raise: { tokens?: number; costUsd?: number; turns?: number; wallClockMs?: number } } | { ok: false; message: string } {
  const raise: { tokens?: number; costUsd?: number; turns?: number; wallClockMs?: number } = {};
  const field = (name: string) => (form.get(name) ?? '').trim();
  for (const [name, key] of [
    ['tokens', 'tokens'],
    ['turns', 'turns'],
  ] as const) {
    const v = field(name);
    if (!v) continue;
    if (!/^\d{1,15}$/.test(v) || Number(v) < 1) return { ok: false, message: `${name}: a whole number of at least 1` };
    raise[key] = Number(v);
  }
  const cost = field('cost_usd');
  if (cost) {
    if (!/^\d{1,9}(\.\d{1,6})?$/.test(cost) || Number(cost) <= 0) return { ok: false, message: 'cost_usd: an amount in US dollars above 0, like 20 or 7.50' };
    raise.costUsd = Number(cost);
  }
  const wall = field('wall_clock');
  if (wall) {
    const m = /^(\d{1,9})(ms|s|m|h)$/.exec(wall);
    if (!m || Number(m[1]) < 1) return { ok: false, message: 'wall_clock: a duration like 90m or 2h' };
    raise.wallClockMs = Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  }
  if (Object.keys(raise).length === 0) return { ok: false, message: 'give at least one new limit: tokens, cost_usd, turns or wall_clock' };
  return { ok: true, raise };
}
