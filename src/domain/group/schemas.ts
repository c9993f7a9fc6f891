/** The input and the budget signal of groupBudgetWorkflow, validated in the workflow (an invalid signal is logged and dropped). */
import { z } from 'zod';
import { IrcNotifySchema, WebhookChannelSchema } from '../contract/schemas.js';
import { LABEL_PART_RE } from '../contract/labels.js';
import { GROUP_PERIODS } from './budget.js';

const PART = LABEL_PART_RE.source.slice(1, -1);
const GROUP_RE = new RegExp(`^${PART}=${PART}$`);

export const GroupInputSchema = z
  .object({
    group: z.string().regex(GROUP_RE, 'group: key=value, as a label'),
    /** How often the counter lists the group's agents (default GROUP_POLL_MS, 30 s). */
    pollIntervalMs: z.number().int().min(200, 'pollIntervalMs: at least 200').max(3_600_000, 'pollIntervalMs: at most 1h').optional(),
  })
  .strict();
export type GroupInput = z.input<typeof GroupInputSchema>;

export const GroupBudgetSchema = z
  .object({
    costUsd: z.number().positive('costUsd: must be above 0').finite().optional(),
    tokens: z.number().int().positive('tokens: must be above 0').optional(),
    per: z.enum(GROUP_PERIODS),
    /** Where the alert goes when the cap is reached (once per period). */
    webhooks: z.array(WebhookChannelSchema).max(20, 'webhooks: at most 20').optional(),
    irc: IrcNotifySchema.optional(),
  })
  .strict()
  .refine((b) => b.costUsd !== undefined || b.tokens !== undefined, 'a group budget needs costUsd or tokens');
