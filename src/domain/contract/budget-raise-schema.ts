/**
 * The raiseBudget update's payload (`warden budget`; src/domain/agent/budget-raise.ts): new limits
 * for one or more budgets, bounded as the spec's, and who raises them.
 */
import { z } from 'zod';
import { BudgetsSchema } from './schemas.js';
import { shared } from './shared.js';

/** New budget limits from a human (`warden budget`, the raiseBudget update): at least one budget, and who raises them. */
export const RaiseBudgetSchema = shared('contract/budget-raise-schema:RaiseBudgetSchema', () =>
  BudgetsSchema.omit({ warnAt: true })
    .extend({
      /** Who raised it (the CLI sends the OS user unless `--by` says otherwise). */
      by: z.string().trim().min(1, 'who raises the budget, not empty').max(100, 'at most 100 characters'),
    })
    .strict()
    .refine((r) => (['tokens', 'costUsd', 'turns', 'wallClockMs'] as const).some((b) => r[b] !== undefined), {
      message: 'give at least one budget to raise: tokens, costUsd, turns or wallClockMs',
      path: ['tokens'],
    }),
);
export type RaiseBudgetInput = z.input<typeof RaiseBudgetSchema>;
export type RaiseBudgetRequest = z.output<typeof RaiseBudgetSchema>;
