/** `warden budget <agentId> --cost-usd 20 [--tokens N] [--turns N] [--wall-clock 2h] [--by NAME]`. */
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import type { RaiseBudgetInput } from '../../domain/contract/budget-schemas.js';
import { globals, withClient } from '../context.js';
import { UsageError } from '../errors.js';
import { print, printJson } from '../output.js';

export interface BudgetOptions {
  tokens?: number;
  costUsd?: number;
  turns?: number;
  wallClock?: number;
  by?: string;
}

/** Who raises the budget when `--by` is not given: the OS user, else the environment's. */
export function defaultBy(env = process.env): string {
  try {
    const name = userInfo().username;
    if (name) return name;
  } catch {
    /* no passwd entry: fall through */
  }
  return env.USER ?? env.USERNAME ?? 'unknown';
}

/** The update's payload from the flags; a UsageError when no budget is given. */
export function raiseFromFlags(o: BudgetOptions, by = defaultBy()): RaiseBudgetInput {
  const raise: RaiseBudgetInput = {
    ...(o.tokens !== undefined && { tokens: o.tokens }),
    ...(o.costUsd !== undefined && { costUsd: o.costUsd }),
    ...(o.turns !== undefined && { turns: o.turns }),
    ...(o.wallClock !== undefined && { wallClockMs: o.wallClock }),
    by: o.by ?? by,
  };
  if (Object.keys(raise).length === 1) throw new UsageError('give at least one budget to raise: --tokens, --cost-usd, --turns or --wall-clock');
  return raise;
}

export const budgetAction = async (agentId: string, o: BudgetOptions, cmd: Command) => {
  const raise = raiseFromFlags(o);
  const result = await withClient(cmd, (client) => client.raiseBudget(agentId, raise));
  if (globals(cmd).json) return printJson({ agentId, raise, ...result });
  print(`agent-${agentId}: ${result.detail} (now ${result.state})`);
};
