/**
 * The payloads of the agent's signals (steer, interrupt, stop, pause, resume, abort, dismiss, the
 * hooks' signals, and those agents send each other), as zod schemas. Re-exported by schemas.ts.
 */
import { z } from 'zod';
import { MAX_REASON_TEXT, MAX_WHISPER_TEXT, truncate } from './limits.js';
import { HumanWaitSchema, SessionSchema, SubagentSchema, cut } from './turn-schemas.js';

// ---- signal payloads: every field optional, so a bare `temporal workflow signal --name X` works —
// except steer's text: steering without text means nothing, and the workflow refuses it, so its
// JSON Schema says so too (`{}` and `{"text": ""}` are invalid; longer text is truncated).
const reason = cut(MAX_REASON_TEXT).optional();
export const SteerSchema = z.object({
  text: z
    .string()
    .min(1, 'text must not be empty')
    .transform((t) => truncate(t, MAX_WHISPER_TEXT)),
});
export const InterruptSchema = z.object({ reason }).partial();
export const StopSchema = z.object({ reason, drainTimeoutMs: z.number().int().min(0).max(3_600_000) }).partial();
export const PauseSchema = z.object({ reason }).partial();
export const ResumeSchema = z.object({ note: cut(MAX_REASON_TEXT) }).partial();
export const AbortSchema = z.object({ reason }).partial();
/** A human marks the last flagged verdict a false alarm (its finding no longer advances the ladder). */
export const DismissSchema = z.object({ note: cut(MAX_REASON_TEXT) }).partial();
/**
 * The agent's own CLI compacts its context (the PreCompact / PostCompact hooks of Claude Code and Codex): `start`
 * makes a running agent `compacting`, `end` (or its next reported turn) makes it `running` again.
 */
export const CompactionSchema = z.object({ phase: z.enum(['start', 'end']), trigger: z.string().max(64) }).partial();
/**
 * Something other than a human holds the agent (a mesh holds a worker until its rebase turn):
 * `start` makes a running agent `blocked` with the reason, `end` (or a steer: new input) makes it
 * run again. The reason is required: it is what `warden status` and `warden top` show.
 */
export const BlockSchema = z.object({
  phase: z.enum(['start', 'end']).optional(),
  reason: z
    .string()
    .min(1, 'reason must not be empty: say what the agent waits for')
    .transform((t) => truncate(t, MAX_REASON_TEXT)),
  /** The holder's token (AgentSpec safety.holdToken): a block without it is refused. */
  token: z.string().max(200, 'token: at most 200 characters').optional(),
});
export const HeartbeatSchema = z.object({ at: z.string().max(64), generation: z.number().int().nonnegative() }).partial();

export const SIGNAL_SCHEMAS = {
  steer: SteerSchema,
  interrupt: InterruptSchema,
  stop: StopSchema,
  pause: PauseSchema,
  resume: ResumeSchema,
  abort: AbortSchema,
  dismiss: DismissSchema,
  heartbeat: HeartbeatSchema,
  compaction: CompactionSchema,
  humanWait: HumanWaitSchema,
  session: SessionSchema,
  subagent: SubagentSchema,
  block: BlockSchema,
  admit: z.object({ note: z.string().max(MAX_REASON_TEXT) }).partial(),
  childSpend: z
    .object({ agentId: z.string(), tokens: z.number().nonnegative(), costUsd: z.number().nonnegative(), turns: z.number().int().nonnegative() })
    .partial(),
} as const;
export type SignalName = keyof typeof SIGNAL_SCHEMAS;
export const SIGNAL_NAMES = Object.keys(SIGNAL_SCHEMAS) as SignalName[];
export type SignalPayload<N extends SignalName> = z.input<(typeof SIGNAL_SCHEMAS)[N]>;
