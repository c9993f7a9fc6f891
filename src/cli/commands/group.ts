/** `warden group budget|status <key=value>` (src/cli/verbs/group.ts; the counter: src/domain/group/budget.ts). */
import type { Command } from 'commander';
import { groupStatus, setGroupBudget } from '../../client/groups.js';
import type { GroupView } from '../../domain/group/budget.js';
import { withClient, globals } from '../context.js';
import { UsageError } from '../exit.js';
import { print, printJson } from '../output.js';

interface BudgetOptions {
  costUsd?: number;
  tokens?: number;
  period: 'day' | 'month';
  webhook?: string[];
  irc?: string;
  pollInterval?: number;
}

const capsText = (b: { costUsd?: number; tokens?: number }) =>
  [b.costUsd !== undefined && `$${b.costUsd}`, b.tokens !== undefined && `${b.tokens} tokens`].filter(Boolean).join(' and ');

export const groupBudgetAction = async (group: string, o: BudgetOptions, cmd: Command) => {
  if (o.costUsd === undefined && o.tokens === undefined) throw new UsageError('warden group budget needs --cost-usd or --tokens');
  const budget = {
    ...(o.costUsd !== undefined && { costUsd: o.costUsd }),
    ...(o.tokens !== undefined && { tokens: o.tokens }),
    per: o.period,
    ...(o.webhook?.length && { webhooks: o.webhook.map((url) => ({ url })) }),
    ...(o.irc !== undefined && { irc: { channel: o.irc } }),
  };
  const r = await withClient(cmd, (c) => setGroupBudget(c, group, budget, { ...(o.pollInterval !== undefined && { pollIntervalMs: o.pollInterval }) }));
  if (globals(cmd).json) return printJson({ group, workflowId: r.workflowId, budget: r.budget });
  print(`group ${group}: at most ${capsText(budget)} per ${o.period} (counter ${r.workflowId})`);
};

export function formatGroup(v: GroupView): string[] {
  const b = v.budget;
  const money = (x: number) => `$${x.toFixed(4)}`;
  return [
    `group ${v.group}: ${v.exhausted ? `EXHAUSTED — ${v.exhausted}` : b ? `at most ${capsText(b)} per ${b.per}` : 'no budget'}`,
    `  period ${v.period.start} → ${v.period.end}: spent ${money(v.spent.costUsd)}, ${v.spent.tokens} tokens (last poll ${v.lastPollAt ?? '—'})`,
    `  supervision (the evaluators' own model calls): ${money(v.supervision?.costUsd ?? 0)}, not counted against the cap`,
    `  agents running (${v.agents.length}): ${v.agents.map((a) => `${a.agentId} ${money(a.costUsd)}${a.paused ? ' (paused)' : ''}`).join(', ') || '—'}`,
    ...(v.pausedByGroup.length ? [`  paused by the group: ${v.pausedByGroup.join(', ')}`] : []),
  ];
}

export const groupStatusAction = async (group: string, _o: unknown, cmd: Command) => {
  const v = await withClient(cmd, (c) => groupStatus(c, group));
  if (globals(cmd).json) return printJson(v);
  for (const l of formatGroup(v)) print(l);
};
