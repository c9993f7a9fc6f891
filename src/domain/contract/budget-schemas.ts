/**
 * Budgets: the spec's (`AgentSpec.budgets`), and the raiseBudget update's payload (`warden budget`;
 * src/domain/agent/budget-raise.ts): new limits for one or more budgets, bounded as the spec's, and
 * who raises them.
 */
import { z } from 'zod';
import { DurationSchema } from './turn-schemas.js';

/** Hard ceilings, checked before every turn: reaching one pauses the agent (until raised) and notifies; `warnAt` (default 0.8) warns once before. */
export const BudgetsSchema = z
  .object({
    tokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    costUsd: z.number().positive().max(1e12, 'at most 1e12 USD'),
    turns: z.number().int().positive(),
    wallClockMs: DurationSchema.pipe(z.number().int().positive()),
    warnAt: z.number().gt(0, 'above 0').lt(1, 'below 1 (a share of the budget, e.g. 0.8)'),
  })
  .partial()
  .strict();
export type Budgets = z.output<typeof BudgetsSchema>;

/** New budget limits from a human (`warden budget`, the raiseBudget update): at least one budget, and who raises them. */
export const RaiseBudgetSchema = BudgetsSchema.omit({ warnAt: true })
  .extend({
    /** Who raised it (the CLI sends the OS user unless `--by` says otherwise). */
    by: z.string().trim().min(1, 'who raises the budget, not empty').max(100, 'at most 100 characters'),
  })
  .strict()
  .refine((r) => (['tokens', 'costUsd', 'turns', 'wallClockMs'] as const).some((b) => r[b] !== undefined), {
    message: 'give at least one budget to raise: tokens, costUsd, turns or wallClockMs',
    path: ['tokens'],
  });
export type RaiseBudgetInput = z.input<typeof RaiseBudgetSchema>;
export type RaiseBudgetRequest = z.output<typeof RaiseBudgetSchema>;
