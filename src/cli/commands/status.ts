/** `warden status <agentId>` and `warden list`. */
import type { Command } from 'commander';
import type { AgentSummary } from '../../client/index.js';
import { groupsOf } from '../../domain/contract/labels.js';
import type { AgentStatus } from '../../domain/contract/status.js';
import { formatVerdict } from '../../domain/judgement/verdict-text.js';
import { formatEvaluatorSpend } from '../../domain/judgement/tiered.js';
import { treeSummary } from '../../domain/judgement/tree.js';
import { withClient, globals } from '../context.js';
import { print, printJson } from '../output.js';
import { visibleDeep } from '../../text/sanitize.js';

/** The last failed turn of a driven agent (until a turn succeeds); absent on agents from older versions. */
function lastTurnError(s: AgentStatus): string | null {
  const e = (s as Partial<AgentStatus>).lastTurnError;
  if (!e) return null;
  return s.restarts > 0 ? `${e} (${s.restarts} failed turn${s.restarts === 1 ? '' : 's'} in the restart window)` : e;
}

/** What supervision costs per agent-hour, after the evaluator spend (absent on agents from older versions, and in an agent's first minute). */
function supervisionRateText(s: AgentStatus): string {
  const r = s.supervision;
  if (!r || r.costUsdPerHour === null) return '';
  return `; $${r.costUsdPerHour.toFixed(4)} and ${Math.round(r.tokensPerHour ?? 0)} tokens per agent-hour over ${r.hours.toFixed(2)} h`;
}

/** A token count as people read it: 950, 14.2k, 3.1M. */
export function shortCount(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1e6) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

/** What the sub-agents spent (their transcripts), after their counts; nothing before one was counted. */
function subagentSpendText(spend: NonNullable<AgentStatus['subagents']>['spend']): string {
  if (!spend || spend.counted === 0) return '';
  return `, ${shortCount(spend.tokens.total)} tokens, $${spend.costUsd.toFixed(spend.costUsd > 0 && spend.costUsd < 0.01 ? 4 : 3)}`;
}

/**
 * An agent that reports its own turns (a hooked session) with a cost budget, tokens spent and no
 * cost reported: its cost budget never fills (neither Claude Code nor Codex writes a cost per
 * model call, and the user's config gives no price for a Claude model; Codex is not priced), so
 * status says so rather than show a budget that cannot hold.
 */
export function noPriceWarning(s: Pick<AgentStatus, 'driver' | 'budgets' | 'model'>): string | null {
  const b = s.budgets;
  if (s.driver !== null || !b?.costUsd || b.costUsd.limit === null || b.costUsd.used > 0 || !(b.tokens?.used > 0)) return null;
  return (
    `cost budget cannot be enforced: no price for ${s.model ? `model ${s.model}` : "this session's model"} ` +
    "(its CLI reports no cost: give the model's price under prices: in your own warden.yaml); the token budget is counted"
  );
}

export function formatStatus(status: AgentStatus): string[] {
  // Reasons, verdict messages and turn errors carry agent and driver text: each shown as one line,
  // every terminal control in it as visible text.
  const s = visibleDeep(status);
  // Why the agent is where it is: the reason of its last transition (unless the pause line says it).
  const why = s.stateReason && !(s.paused && s.pauseReason === s.stateReason) ? s.stateReason : null;
  const turnError = lastTurnError(s);
  const lines = [
    `agent ${s.agentId}: ${s.state}${s.paused ? ` — paused: ${s.pauseReason}` : ''}`,
    ...(why ? [`  reason: ${why}`] : []),
    ...(turnError ? [`  last turn error: ${turnError}`] : []),
    ...(s.driver ? [`  driven by warden (${s.driver})${s.turnRunning ? ', a turn is running' : ''}`] : []),
    `  escalation step ${s.escalationStep}/${s.escalationThreshold} (escalations so far: ${s.escalations})`,
    `  turns ${s.turns}; evaluations ${s.evaluations.total} (ok ${s.evaluations.ok}, flagged ${s.evaluations.flagged}, skipped ${s.evaluations.skipped})`,
    `  last verdict: ${s.lastVerdict ? formatVerdict(s.lastVerdict) : '—'}`,
    `  whispers: ${s.pendingWhispers} pending, ${s.whispersDelivered} delivered`,
    `  tokens ${s.tokens.total} (in ${s.tokens.in}, out ${s.tokens.out}); cost $${s.costUsd.toFixed(4)}`,
    ...(s.labels && Object.keys(s.labels).length
      ? [
          `  labels: ${Object.entries(s.labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}`,
        ]
      : []),
    // Only for evaluators that may call a model (absent on agents from older versions).
    ...(s.evaluatorSpend && s.evaluatorSpend.calls + s.evaluatorSpend.decided.heuristic + s.evaluatorSpend.decided.model > 0
      ? [`  evaluator spend: ${formatEvaluatorSpend(s.evaluatorSpend)}${supervisionRateText(s)}`]
      : []),
    // Sub-agents its CLI ran (Claude Code's or Codex's SubagentStart/SubagentStop hooks), running ones first.
    ...(s.subagents
      ? [
          `  sub-agents: ${s.subagents.running} running, ${s.subagents.seen - s.subagents.running} finished${subagentSpendText(s.subagents.spend)}`,
          ...[...s.subagents.list.filter((r) => r.stoppedAt === null), ...s.subagents.list.filter((r) => r.stoppedAt !== null).slice(-3)].map(
            (r) => `    ${r.type} ${r.id}: ${r.stoppedAt === null ? `running since ${r.startedAt}` : `ended ${r.stoppedAt}`}`,
          ),
        ]
      : []),
    // The working tree as warden read it when the newest turn ended (hooked and driven agents in a git tree).
    ...(s.tree ? [`  tree: ${treeSummary(s.tree)}`] : []),
  ];
  const budgets = Object.entries(s.budgets ?? {}).filter(([, b]) => b.limit !== null);
  if (budgets.length) {
    const warned = s.budgetWarnings ?? [];
    const each = budgets.map(
      ([k, b]) => `${k} ${Math.round(b.used * 10000) / 10000}/${b.limit}${warned.includes(k as (typeof warned)[number]) ? ' (warned)' : ''}`,
    );
    lines.push(`  budgets: ${each.join(', ')}${s.budgetPaused ? ' — paused at a budget: raise it with `warden budget`' : ''}`);
  }
  const cost = noPriceWarning(s);
  if (cost) lines.push(`  warning: ${cost}`);
  for (const r of (s.budgetRaises ?? []).slice(-3)) {
    const changes = Object.entries(r.changes).map(([k, c]) => `${k} ${c?.from ?? 'none'} → ${c?.to}`);
    lines.push(`  budget raised by ${r.by} at ${r.at}: ${changes.join(', ')}`);
  }
  if (s.restarts) lines.push(`  failed turns in the restart window: ${s.restarts}`);
  if (s.lastSkipReason) lines.push(`  last skipped evaluation: ${s.lastSkipReason}`);
  if (s.dismissals) {
    const last = s.lastDismissal;
    const what = last ? ` (last: ${last.pattern ?? 'finding'}${last.note ? `, note: ${last.note}` : ''})` : '';
    lines.push(`  dismissed as false alarms: ${s.dismissals}${what}; repeats not counted since: ${s.suppressed ?? 0}`);
  }
  const v = s.lastVerification;
  if (v) {
    const result = v.skipped
      ? `skipped (${v.skipped})`
      : v.passed
        ? 'passed'
        : `FAILED${v.exitCode !== null ? ` (exit ${v.exitCode}${v.timedOut ? ', timed out' : ''})` : ''}`;
    lines.push(`  last verification: ${result} at ${v.at}${v.command ? ` — ${v.command}` : ' — protected paths'}`);
    if (v.rewardHacking) lines.push(`    reward hacking: ${v.rewardHacking}`);
    for (const c of (v.protectedChanges ?? []).slice(0, 5)) lines.push(`    protected: ${c}`);
    // Split before making controls visible (a newline would show as ␊).
    const tail = visibleDeep((status.lastVerification?.outputTail ?? '').trimEnd().split('\n').slice(-3));
    if (!v.passed && tail.join('').trim()) for (const t of tail) lines.push(`    | ${t}`);
  }
  if (s.verifying) lines.push('  done-claim waiting for its verification');
  const c = s.lastCompaction;
  if (c)
    lines.push(
      `  compacted ${s.compactions ?? 1} time(s); last at ${c.at}: ${c.done ? `its fresh context took its first turn at ${c.doneAt}` : 'under way (the fresh context has not taken a turn yet)'}`,
    );
  if (s.refused.length) lines.push(`  last refused: ${s.refused.at(-1)!.what} — ${s.refused.at(-1)!.reason}`);
  return lines;
}

export const statusAction = async (agentId: string, _o: unknown, cmd: Command) => {
  const s = await withClient(cmd, (c) => c.status(agentId));
  if (globals(cmd).json) return printJson(s);
  for (const l of formatStatus(s)) print(l);
};

/** At most this many characters of an agent's labels in `warden list`'s LABELS column. */
export const LIST_LABELS_WIDTH = 40;

/** An agent's labels as the LABELS column shows them: `k=v` sorted, joined by commas, cut with `…` past the width. */
export function labelsCell(labels: Record<string, string> | undefined, width = LIST_LABELS_WIDTH): string {
  const text = groupsOf(labels).join(',');
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** `warden list`'s table: a header and one line per agent; the LABELS column only when an agent listed has labels. */
export function formatList(rows: readonly AgentSummary[]): string[] {
  const labelled = rows.some((r) => groupsOf(r.labels).length > 0);
  const header = ['AGENT'.padEnd(24), 'WORKFLOW'.padEnd(10), 'STATE'.padEnd(16), 'STEP', 'PAUSED', 'COST'.padEnd(9), 'STARTED'.padEnd(24)];
  const lines = [[...header, ...(labelled ? ['LABELS'] : [])].join(' ').trimEnd()];
  for (const r of rows)
    lines.push(
      [
        r.agentId.padEnd(24),
        r.status.toLowerCase().padEnd(10),
        (r.state ?? '?').padEnd(16),
        String(r.escalationStep ?? '?').padEnd(4),
        String(r.paused ?? '?').padEnd(6),
        (r.costUsd === null ? '?' : `$${r.costUsd.toFixed(4)}`).padEnd(9),
        r.startTime.padEnd(24),
        ...(labelled ? [labelsCell(r.labels)] : []),
      ]
        .join(' ')
        .trimEnd(),
    );
  return lines;
}

export const listAction = async (o: { query?: string; limit: string }, cmd: Command) => {
  const rows = await withClient(cmd, (c) => c.list({ query: o.query, limit: Number(o.limit) || 100 }));
  if (globals(cmd).json) return printJson(rows);
  if (!rows.length) return print('no agents');
  for (const l of formatList(visibleDeep(rows))) print(l);
};
