/**
 * The contract's building blocks as zod schemas: Turn, ToolCall, Whisper, Verdict, durations, IRC
 * channels, and how a zod error is told
 * (re-exported by schemas.ts; import from there). Pure.
 */
import { z } from 'zod';
import { MAX_REASON_TEXT, MAX_TOOL_CALLS, MAX_TOOL_FIELD, MAX_TURN_COST_USD, MAX_TURN_TEXT, MAX_TURN_TOKENS, truncate } from './limits.js';
import { parseDuration } from './duration.js';

export { parseDuration };

/** A string truncated (with a marker) to `max` characters. */
export const cut = (max: number) => z.string().transform((s) => truncate(s, max));

/** Anything JSON-ish shown as text to the evaluator; objects are stringified and bounded. */
const looseText = z
  .unknown()
  .transform((v) => (v === undefined ? undefined : truncate(typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v)), MAX_TOOL_FIELD)));

export const ToolCallSchema = z.object({
  name: z.string().min(1, 'tool call name must not be empty').max(200),
  args: looseText.optional(),
  result: looseText.optional(),
  ok: z.boolean().optional(),
  /** The call never ran: its CLI denied it (its human, a permission rule, an auto-mode classifier). */
  denied: z.boolean().optional(),
});
export type ToolCall = z.output<typeof ToolCallSchema>;

/**
 * The working tree when a turn ended, read by warden with git (never written by the agent): its
 * HEAD commit (null before the first commit), a hash of what `git status` and `git diff` show
 * (bounded: see src/tree/fingerprint.ts), and how many paths differ from HEAD. Two turns with the
 * same `head` and `hash` saw the same tree. `partial`: the diff was longer than warden reads, so
 * only its first part is hashed.
 */
export const TreeFingerprintSchema = z.object({
  head: z
    .string()
    .regex(/^[0-9a-f]{7,64}$/, 'a commit id in hex')
    .nullable(),
  hash: z.string().regex(/^[0-9a-f]{8,64}$/, 'a hash in hex'),
  files: z.number().int().nonnegative().max(10_000_000),
  partial: z.boolean().optional(),
});
export type TreeFingerprint = z.output<typeof TreeFingerprintSchema>;

export const TurnSchema = z.object({
  id: z.string().min(1).max(200).optional(),
  text: cut(MAX_TURN_TEXT),
  toolCalls: z
    .array(ToolCallSchema)
    .max(MAX_TOOL_CALLS * 4)
    .transform((calls) => calls.slice(-MAX_TOOL_CALLS))
    .optional(),
  tokensIn: z.number().int().nonnegative().max(MAX_TURN_TOKENS, `at most ${MAX_TURN_TOKENS} tokens a turn`).optional(),
  tokensOut: z.number().int().nonnegative().max(MAX_TURN_TOKENS, `at most ${MAX_TURN_TOKENS} tokens a turn`).optional(),
  /** Bounded so that sums stay finite (near 1e308 they became Infinity, then JSON null, and removed the search attribute). */
  costUsd: z.number().nonnegative().max(MAX_TURN_COST_USD, `at most ${MAX_TURN_COST_USD} USD a turn`).optional(),
  at: z.string().max(64).optional(),
  /** The agent process's generation (bumped when it restarts); reports from an older one are dropped. */
  generation: z.number().int().nonnegative().optional(),
  /** The agent claims the task is complete (with `verify`/`protect` configured, warden checks the claim first). */
  done: z.boolean().optional(),
  /** The agent (a parent) waits for its open delegated children: it is `blocked` until the last one ends. */
  awaitChildren: z.boolean().optional(),
  /** The working tree when the turn ended (hooked and driven agents in a git repository); absent in older histories. */
  tree: TreeFingerprintSchema.optional(),
});
export type TurnInput = z.input<typeof TurnSchema>;
export type Turn = z.output<typeof TurnSchema>;

export const WHISPER_TYPES = ['CORRECTION', 'THINK_DEEPER', 'ESCALATION', 'STEERING', 'VERIFY', 'BUDGET'] as const;
export type WhisperType = (typeof WHISPER_TYPES)[number];
export const WhisperSchema = z.object({
  id: z.string(),
  type: z.enum(WHISPER_TYPES),
  text: z.string(),
  createdAt: z.string(),
});
export type Whisper = z.output<typeof WhisperSchema>;

export const VERDICT_KINDS = ['OK', 'CORRECTION', 'THINK_DEEPER', 'ESCALATION'] as const;
export type VerdictKind = (typeof VERDICT_KINDS)[number];
export const PATTERNS = ['SPIRALING', 'DRIFT', 'STALLING', 'SHALLOW', 'REWARD_HACKING'] as const;
export type Pattern = (typeof PATTERNS)[number];
export const VerdictSchema = z.object({
  kind: z.enum(VERDICT_KINDS),
  pattern: z.enum(PATTERNS).nullable(),
  message: z.string(),
  /**
   * The turns the verdict rests on, as turn numbers (1-based, counted over the agent's whole life:
   * `EvaluateInput.firstTurnNumber` is the number of `turns[0]`). Optional so older histories decode.
   * Empty on an idle STALLING verdict whose evidence is the silence itself.
   */
  evidence: z.array(z.number().int().positive()).max(50).optional(),
  /**
   * A heuristic detector's finding key, `<detector>#<hash of its evidence>` (judgement/finding.ts):
   * what a dismissal of this verdict silences. Absent on a model's verdict (signed on its message)
   * and on verdicts recorded before it existed.
   */
  finding: z.string().max(200).optional(),
});
export type Verdict = z.output<typeof VerdictSchema>;

/** Durations: a number of milliseconds or a string like "30s", "10m", "1h". */
export const DurationSchema = z.union([
  z.number().int().nonnegative(),
  z
    .string()
    .regex(/^\d+(ms|s|m|h)$/, 'a duration like 500ms, 30s, 10m or 1h')
    .transform((s) => parseDuration(s)),
]);

/** An IRC channel name (RFC 2812: starts with # & + !, no spaces, commas or ^G, at most 50). */
export const IRC_CHANNEL_RE = /^[#&+!][^\s,\x07]{1,49}$/;
export const IrcChannelSchema = z.string().regex(IRC_CHANNEL_RE, 'an IRC channel like #alerts (no spaces or commas, at most 50)');
/** Where the `warden irc` bot posts this agent's alerts. */
export const IrcNotifySchema = z.object({ channel: IrcChannelSchema }).strict();
export type IrcNotify = z.output<typeof IrcNotifySchema>;

/** Render a zod error as one line naming every bad field: `text: expected string, received number`. */
export function describeZodError(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? i.path.join('.') : '(payload)'}: ${i.message}`).join('; ');
}

/**
 * The agent's own CLI waits for its human (Claude Code's Notification hook, Codex's PermissionRequest):
 * `start` makes it `awaiting-input` with the reason, `end` (or its next tool call, prompt or turn) `running` again.
 * Its turn ended on an API error (Claude Code's StopFailure hook): kind `api-error` (authentication,
 * billing, an invalid request: its human must act) is such a wait; kind `rate-limit` (rate-limited,
 * overloaded, a server error: the API itself recovers) makes it `blocked` with the reason instead, and
 * no alert; its next tool call, prompt or turn ends either.
 */
export const HumanWaitSchema = z
  .object({
    phase: z.enum(['start', 'end']),
    kind: z.enum(['permission', 'idle', 'question', 'other', 'api-error', 'rate-limit']),
    reason: cut(MAX_REASON_TEXT),
  })
  .partial();

/**
 * What a sub-agent has spent in all, read from its transcript when it stopped: tokens in (cache
 * reads and writes included) and out, cost in US dollars, `partial` when only the start of a very
 * long transcript was read.
 */
export const SubagentSpendSchema = z.object({
  tokensIn: z.number().int().min(0).max(1e12),
  tokensOut: z.number().int().min(0).max(1e12),
  costUsd: z.number().min(0).max(1e9),
  partial: z.boolean().optional(),
});

/**
 * The agent's own CLI started (`start`) or ended (`stop`) a sub-agent (Claude Code's SubagentStart
 * and SubagentStop hooks): its id and type, as the CLI names them, bounded; a stop may carry what
 * the sub-agent spent (`spend`, its whole transcript's total: a re-sent stop counts nothing again).
 */
export const SubagentSchema = z
  .object({ phase: z.enum(['start', 'stop']), id: z.string().min(1).max(200), type: z.string().max(100), spend: SubagentSpendSchema })
  .partial();

/**
 * The agent's own CLI ended its session (`end`, the SessionEnd hook of Claude Code or Codex) or resumed it
 * (`resume`): an ended session ends the agent `done` after `supervisor.sessionEndGraceMs`.
 */
export const SessionSchema = z.object({ phase: z.enum(['end', 'resume']), reason: z.string().max(64) }).partial();
