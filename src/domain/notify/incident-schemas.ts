/**
 * The schemas of an incident (one alert for one cause, workflows/incident.ts): what its
 * notification names (`NotificationEvent.incident`), and how its workflow starts. Pure: zod only.
 */
import { z } from 'zod';
import { VerdictSchema } from '../contract/turn-schemas.js';
import { CAUSE_TEXT_MAX } from './cause.js';

/** At most this many agents are named in one incident notification (the rest are counted in `total`). */
export const MAX_INCIDENT_AGENTS = 50;
/** The default grouping window: the first notification goes out this long after the first agent joined. */
export const DEFAULT_GROUP_WINDOW_MS = 60_000;
export const MIN_GROUP_WINDOW_MS = 100;
export const MAX_GROUP_WINDOW_MS = 3_600_000;

export const IncidentAgentSchema = z
  .object({
    agentId: z.string().min(1),
    workflowId: z.string().min(1),
    task: z.string(),
    step: z.number().int().nonnegative(),
    escalation: z.number().int().positive().optional(),
    verdict: VerdictSchema.optional(),
    reason: z.string(),
    at: z.string(),
  })
  .strict();

export const CauseSchema = z
  .object({
    command: z.string().max(CAUSE_TEXT_MAX),
    error: z.string().max(CAUSE_TEXT_MAX),
    repo: z.string().max(4_000),
    branch: z.string().max(1_000),
  })
  .strict();

export const IncidentSummarySchema = CauseSchema.extend({
  id: z.string().min(1).max(64),
  agents: z.array(IncidentAgentSchema).min(1).max(MAX_INCIDENT_AGENTS),
  total: z.number().int().positive(),
  followUp: z.boolean(),
}).strict();

/** The incident workflow's input: its cause, the cause's fingerprint, and the grouping window. */
export const IncidentStartSchema = z
  .object({
    fingerprint: z.string().regex(/^[0-9a-f]{16}$/, 'fingerprint: 16 hex digits'),
    cause: CauseSchema,
    windowMs: z.number().int().min(MIN_GROUP_WINDOW_MS).max(MAX_GROUP_WINDOW_MS),
  })
  .strict();
export type IncidentStart = z.output<typeof IncidentStartSchema>;
