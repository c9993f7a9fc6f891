/**
 * The output side of the contract as zod schemas: the `status` query's answer and the
 * `reportTurn` update's reply. For `warden schemas` (JSON Schemas for services in other languages)
 * and for checking real answers in tests. The top-level objects are open (additional properties
 * allowed), so a field added later does not make an older consumer's validation fail.
 */
import { z } from 'zod';
import { EVENTS, STATES } from './states.js';
import { VerdictSchema, WhisperSchema } from './schemas.js';
import type { AgentStatus, ReportTurnResult } from './status.js';

const State = z.enum(STATES);
const count = z.number().int().nonnegative();
const budget = z.object({ used: z.number().nonnegative(), limit: z.number().nullable() });
const BudgetName = z.enum(['tokens', 'costUsd', 'turns', 'wallClockMs']);

const ReportTurnResultShape = z.object({
  accepted: z.boolean(),
  duplicate: z.boolean(),
  stale: z.boolean().optional(),
  whispers: z.array(WhisperSchema),
  paused: z.boolean(),
  stop: z.boolean(),
  interrupt: z.boolean(),
  state: State,
  /** A done-claim waits for warden's check. */
  verifying: z.boolean().optional(),
  /** Compaction: drop your context and start a fresh one from this handoff. */
  compact: z.object({ handoff: z.string() }).optional(),
});

const AgentStatusShape = z.object({
  agentId: z.string(),
  state: State,
  stateReason: z.string().nullable(),
  paused: z.boolean(),
  pauseReason: z.string().nullable(),
  /** Absent on agents from older versions. */
  waitingForHuman: z.boolean().optional(),
  /** Blocked because its own CLI's model is rate-limited: its next tool call, prompt or turn ends it. Absent otherwise. */
  blockedByCli: z.boolean().optional(),
  /** Its CLI's session ended: when the agent ends `done` unless the session resumes first. Absent when no session ended (and on older agents). */
  sessionEndsAt: z.string().optional(),
  /** A `block` signal holds it: when the hold runs out (safety.maxHeldMs). Absent otherwise (and on older agents). */
  heldUntil: z.string().optional(),
  escalationStep: count,
  escalationThreshold: count,
  escalations: count,
  turns: count,
  evaluations: z.object({ total: count, ok: count, flagged: count, skipped: count }),
  lastVerdict: VerdictSchema.extend({ at: z.string() }).nullable(),
  lastSkipReason: z.string().nullable(),
  pendingWhispers: count,
  whispersDelivered: count,
  tokens: z.object({ in: count, out: count, total: count }),
  costUsd: z.number().nonnegative(),
  lastTurnAt: z.string().nullable(),
  lastHeartbeatAt: z.string().nullable(),
  stopRequested: z.boolean(),
  transitions: z.array(z.object({ from: State, to: State, event: z.enum(EVENTS), cause: z.string(), at: z.string() })),
  refused: z.array(z.object({ what: z.string(), reason: z.string(), at: z.string() })),
  invalidSignals: count,
  runs: count,
  driver: z.string().nullable(),
  turnRunning: z.boolean(),
  budgets: z.object({ tokens: budget, costUsd: budget, turns: budget, wallClockMs: budget }),
  /** Absent on agents from older versions. */
  budgetWarnings: z.array(BudgetName).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  budgetPaused: z.boolean().optional(),
  budgetRaises: z
    .array(z.object({ at: z.string(), by: z.string(), changes: z.partialRecord(BudgetName, z.object({ from: z.number().nullable(), to: z.number() })) }))
    .optional(),
  supervision: z.object({ hours: z.number().nonnegative(), costUsdPerHour: z.number().nullable(), tokensPerHour: z.number().nullable() }).optional(),
  restarts: count,
  generation: count,
  parent: z.string().nullable(),
  children: z.array(z.object({ agentId: z.string(), state: z.string(), reason: z.string().nullable() })),
  toolAllowlist: z.array(z.string()),
  result: z.object({ inline: z.unknown().optional(), ref: z.object({ sha256: z.string(), bytes: count, path: z.string() }).optional() }).nullable(),
  /** Driven mode: why the last turn failed, until a turn succeeds (absent on agents from older versions). */
  lastTurnError: z.string().nullable().optional(),
  task: z.string().optional(),
  model: z.string().nullable().optional(),
  currentTool: z.string().nullable().optional(),
  spend: z.object({ bucketMs: count, buckets: z.array(z.object({ at: z.string(), tokens: z.number(), costUsd: z.number() })) }).optional(),
  /** `warden dismiss` (absent on agents from older versions). */
  dismissals: count.optional(),
  lastDismissal: z.object({ at: z.string(), note: z.string().nullable(), pattern: z.string().nullable(), message: z.string() }).nullable().optional(),
  suppressed: count.optional(),
  cases: z.object({ kept: count, decided: count }).optional(),
  /** The last check of a done-claim (absent on agents from older versions), and whether a claim waits. */
  lastVerification: z
    .object({
      command: z.string().nullable(),
      passed: z.boolean(),
      exitCode: z.number().int().nullable(),
      outputTail: z.string(),
      at: z.string(),
      skipped: z.string().optional(),
      timedOut: z.boolean().optional(),
      protectedChanges: z.array(z.string()).optional(),
      rewardHacking: z.string().optional(),
    })
    .nullable()
    .optional(),
  verifying: z.boolean().optional(),
  /** The spec has `verify` or `protect` (absent on agents from older versions). */
  checksDone: z.boolean().optional(),
  /** Compaction, the ladder's last resort (absent on agents from older versions). */
  lastResort: z.enum(['compact', 'none']).optional(),
  compactions: count.optional(),
  lastCompaction: z.object({ at: z.string(), reason: z.string(), handoff: z.string(), done: z.boolean(), doneAt: z.string().nullable() }).nullable().optional(),
  /** What the evaluator's model calls cost, apart from the agent's own spend (absent on agents from older versions). */
  evaluatorSpend: z
    .object({
      calls: count,
      failed: count,
      tokens: z.object({ in: z.number().nonnegative(), out: z.number().nonnegative(), total: z.number().nonnegative() }),
      costUsd: z.number().nonnegative(),
      decided: z.object({ heuristic: count, model: count }),
    })
    .optional(),
  /** Sub-agents its CLI ran (absent when none was seen, and on older agents). */
  subagents: z
    .object({
      running: count,
      seen: count,
      list: z.array(z.object({ id: z.string(), type: z.string(), startedAt: z.string(), stoppedAt: z.string().nullable() })),
      /** What they spent (their transcripts), apart from the agent's own; counted toward the budgets (absent on older agents). */
      spend: z
        .object({
          tokens: z.object({ in: z.number().nonnegative(), out: z.number().nonnegative(), total: z.number().nonnegative() }),
          costUsd: z.number().nonnegative(),
          counted: count,
        })
        .optional(),
    })
    .optional(),
  /** The working tree as the newest turn saw it (absent when no turn of the window carries a fingerprint, and on older agents). */
  tree: z.object({ head: z.string().nullable(), files: count, partial: z.boolean().optional(), unchangedTurns: count, atLeast: z.boolean() }).optional(),
  /** The newest delivered whispers with their times (absent on agents from older versions). */
  deliveredWhispers: z
    .array(z.object({ id: z.string(), type: z.string(), text: z.string(), createdAt: z.string(), deliveredAt: z.string(), beforeTurn: count }))
    .optional(),
  /** The newest notifications sent, with their delivery ids (absent on agents from older versions). */
  notifications: z
    .array(
      z.object({
        at: z.string(),
        event: z.string(),
        reason: z.string(),
        channels: z.array(z.string()),
        deliveryId: z.string().nullable(),
        incident: z.boolean(),
      }),
    )
    .optional(),
});

export const ReportTurnResultSchema = ReportTurnResultShape.loose();
export const AgentStatusSchema = AgentStatusShape.loose();

// Compile-time: every status and reply the workflow returns fits these schemas.
export const _statusFits = (s: AgentStatus): z.input<typeof AgentStatusShape> => s;
export const _replyFits = (r: ReportTurnResult): z.input<typeof ReportTurnResultShape> => r;
