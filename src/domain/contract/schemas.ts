/**
 * The public contract as zod schemas: AgentSpec, Turn, Whisper, signal and update payloads,
 * status. Pure: imported by workflows, activities, the client and the CLI alike.
 */
import { z } from 'zod';
import { MAX_TASK_TEXT, SPEC_MAX_BYTES, jsonBytes, truncate } from './limits.js';
import { DurationSchema, IrcNotifySchema, TurnSchema } from './turn-schemas.js';
export * from './turn-schemas.js';
export * from './evaluator-schemas.js';
export * from './signal-schemas.js';
export * from './budget-schemas.js';
import { BudgetsSchema } from './budget-schemas.js';
import { EvaluatorConfigSchema } from './evaluator-schemas.js';
import { checkProtectGlobs } from '../glob.js';
import { LabelsSchema } from './labels.js';
export { LabelsSchema, type Labels } from './labels.js';

export const SupervisorConfigSchema = z
  .object({
    model: z.string().min(1).default('gpt-5.4'),
    windowSize: z.number().int().min(1).max(200).default(20),
    evalInterval: z.number().int().min(1).max(1000).default(5),
    /** Never below 3: the supervisor needs two failed whispers before it escalates. */
    escalationThreshold: z.number().int().min(3, 'escalationThreshold is never below 3').max(20).default(3),
    /** Idle watchdog: evaluate once after this much silence. 0 disables it. */
    idleAfterMs: DurationSchema.default(600_000),
    /** Start-to-close timeout of one evaluation; 30 s by design, lower it only for tests. */
    evalTimeoutMs: DurationSchema.pipe(z.number().min(1000).max(30_000)).default(30_000),
    /**
     * What the ladder does the first time a streak of ignored corrections reaches the threshold:
     * `none` escalates to humans; `compact` first moves the agent to a fresh context that holds a
     * handoff (task, progress, the whispers it was given, what to do next), and escalates only if
     * the same problem persists after it.
     */
    lastResort: z.enum(['compact', 'none']).default('none'),
    sessionEndGraceMs: DurationSchema.default(600_000), // an ended CLI session (SessionEnd hook) ends the agent `done` after this, unless it resumes
  })
  .strict();
export type SupervisorConfig = z.output<typeof SupervisorConfigSchema>;

export const WebhookChannelSchema = z
  .object({
    url: z.url({ protocol: /^https?$/ }),
    /** Name of an environment variable holding the HMAC secret (the secret never enters history). */
    secretEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
      .optional(),
    /** Body shape: `json` (default, the NotificationEvent as is) or `slack` (Slack-compatible `{text, blocks}`). */
    format: z.enum(['json', 'slack']).optional(),
  })
  .strict();
export type WebhookChannel = z.output<typeof WebhookChannelSchema>;

export const NotifyConfigSchema = z
  .object({
    webhooks: z.array(WebhookChannelSchema).default([]),
    /** Post alerts to this IRC channel through the `warden irc` bot (task queue warden-irc). */
    irc: IrcNotifySchema.optional(),
    /** A structured log line on escalation (always on; kept as a switch for quiet setups). */
    log: z.boolean().default(true),
  })
  .strict();
export type NotifyConfig = z.output<typeof NotifyConfigSchema>;

/**
 * How a driven agent's turns run (AgentSpec.driver). Without a driver the agent runs elsewhere and
 * reports its turns (external mode).
 */
export const DriverConfigSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('codex'),
      codexPath: z.string().optional(),
      model: z.string().min(1).optional(),
      /** Extra `-c key=value` overrides for `codex exec` (model provider, …). */
      config: z.array(z.string()).default([]),
      sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).default('workspace-write'),
      /** CODEX_HOME whose credentials are copied into the agent's own home; default $CODEX_HOME or ~/.codex. */
      credentialsHome: z.string().optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('claude'),
      claudePath: z.string().optional(),
      model: z.string().min(1).optional(),
      /** Extra CLI arguments for `claude -p` (e.g. --allowedTools). */
      args: z.array(z.string()).default([]),
    })
    .strict(),
  z
    .object({
      kind: z.literal('command'),
      /** argv of a program speaking warden's turn protocol: TurnRequest JSON on stdin, TurnResult JSON on stdout. */
      command: z.array(z.string()).min(1, 'command needs at least the program'),
      /** Extra environment for the program; only WARDEN_MESH_* keys (a mesh worker's run, task and artifact paths). */
      env: z.record(z.string().regex(/^WARDEN_MESH_[A-Z0-9_]+$/, 'env: only WARDEN_MESH_* variables'), z.string().max(4_000)).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('scripted'),
      /** The turns to play, in order; the agent is done after the last one. */
      turns: z.array(TurnSchema).min(1),
      /** How long each turn takes (ms), so demos and tests can interrupt one. */
      turnDelayMs: z.number().int().min(0).max(600_000).default(0),
      /** The result returned with the last turn (a delegated child's deliverable). */
      result: z.unknown().optional(),
    })
    .strict(),
]);
export type DriverConfig = z.output<typeof DriverConfigSchema>;

export const DrivenConfigSchema = z
  .object({
    /** Working directory for the agent; default a per-agent directory under $WARDEN_HOME/agents/<agentId>/work. */
    workDir: z.string().optional(),
    /** Start-to-close timeout of one turn. */
    turnTimeoutMs: DurationSchema.default(1_800_000),
    /** A turn that stops heartbeating this long is retried on another worker. */
    heartbeatTimeoutMs: DurationSchema.pipe(z.number().min(1000)).default(30_000),
    /** SIGTERM, then SIGKILL of the whole process group after this long. */
    killGraceMs: DurationSchema.default(5_000),
    /** A codex/claude turn whose final message starts with this marker means the task is complete. */
    doneMarker: z.string().min(1).default('TASK COMPLETE'),
    /** Stop after this many turns (`budgets` can also cap tokens, cost and wall-clock time). */
    maxTurns: z.number().int().min(1).max(10_000).default(50),
  })
  .strict();
export type DrivenConfig = z.output<typeof DrivenConfigSchema>;

export const SafetySchema = z
  .object({
    /** Restart intensity (OTP): more than this many failed turns within `restartWindowMs` opens the circuit. */
    maxRestarts: z.number().int().min(0).max(100).default(3),
    restartWindowMs: DurationSchema.default(60_000),
    /**
     * Driven agents: a model that stays rate-limited or overloaded this long (time spent `blocked`
     * since the last finished turn) opens the circuit: the agent fails and every channel hears.
     */
    maxBlockedMs: DurationSchema.pipe(z.number().int().min(1000, 'safety.maxBlockedMs: at least 1s')).default(3_600_000),
    /** Who may hold the agent (a mesh sets it per worker): a `block` without it is refused; unset, every one is. Readable in the history. */
    holdToken: z.string().min(16, 'safety.holdToken: at least 16 characters').max(200, 'safety.holdToken: at most 200 characters').optional(),
    /** A hold (`block` signal) longer than this ends: the agent awaits a human (escalated) and every channel hears. */
    maxHeldMs: DurationSchema.pipe(z.number().int().min(1000, 'safety.maxHeldMs: at least 1s')).default(14_400_000),
    /** External agents: expected heartbeat interval; silence for twice as long makes the agent `orphaned`. Unset: off. */
    heartbeatIntervalMs: DurationSchema.pipe(z.number().int().min(100)).optional(),
    /**
     * Agents with labels: publish their spend (`WardenCostUsd`, `WardenTokens`) at most this often
     * (at a turn or a state change), for their groups' counters to read. Unset: GROUP_REPORT_INTERVAL_MS.
     */
    groupReportIntervalMs: DurationSchema.pipe(
      z.number().int().min(100, 'safety.groupReportIntervalMs: at least 100ms').max(3_600_000, 'safety.groupReportIntervalMs: at most 1h'),
    ).optional(),
  })
  .strict();
/** safety.groupReportIntervalMs when unset: a labelled agent's spend is at most this old in visibility. */
export const GROUP_REPORT_INTERVAL_MS = 30_000;
export type Safety = z.output<typeof SafetySchema>;

/** The delegation modes: how many children may be in flight at once. */
export { DELEGATION_CAPS } from './limits.js';
export const DelegationSchema = z
  .object({
    mode: z.enum(['solo', 'tight', 'orchestrator']).default('tight'),
    /** Spawn depth: agents at this depth may not delegate (default 1: children are leaves). */
    maxDepth: z.number().int().min(0).max(5).default(1),
  })
  .strict();

/** What a child agent was given by its parent (the parent–child contract). */
export const ContractSchema = z
  .object({
    /** JSON Schema the child's result must validate against; a result that does not is a failure. */
    resultSchema: z.record(z.string(), z.unknown()).optional(),
    /** Tools the child may use, where warden can see them (hooks, driven turns). Empty: no restriction. */
    toolAllowlist: z.array(z.string().min(1)).default([]),
    definitionOfDone: z.string().optional(),
  })
  .strict();
export type Contract = z.output<typeof ContractSchema>;

/** Default and ceiling of one verification's run time. */
export const VERIFY_DEFAULT_TIMEOUT_MS = 600_000;
export const VERIFY_MAX_TIMEOUT_MS = 3_600_000;

/** Definition of done: the command warden runs when the agent claims the task is complete. */
export const VerifySchema = z
  .object({
    /** Run with `sh -c` in `cwd`; exit 0 means the claim holds. */
    command: z.string().min(1, 'verify.command must not be empty').max(4_000),
    /** Where it runs; default the driven agent's working directory, else the worker's. */
    cwd: z.string().min(1).max(4_000).optional(),
    timeoutMs: DurationSchema.pipe(
      z.number().int().min(1000, 'verify.timeoutMs: at least 1s').max(VERIFY_MAX_TIMEOUT_MS, 'verify.timeoutMs: at most 1h'),
    ).default(VERIFY_DEFAULT_TIMEOUT_MS),
  })
  .strict();
export type VerifyConfig = z.output<typeof VerifySchema>;

export const AGENT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const AgentIdSchema = z.string().regex(AGENT_ID_RE, 'agentId: letters, digits, ".", "_" or "-", at most 100, starting with a letter or digit');

export const AgentSpecSchema = z
  .object({
    agentId: AgentIdSchema,
    task: z
      .string()
      .min(1, 'task must not be empty')
      .transform((s) => truncate(s, MAX_TASK_TEXT)),
    supervisor: SupervisorConfigSchema.default(SupervisorConfigSchema.parse({})),
    evaluator: EvaluatorConfigSchema.default({ kind: 'heuristic' }),
    notify: NotifyConfigSchema.default(NotifyConfigSchema.parse({})),
    /** Upsert the Warden* search attributes (the client turns this off if they are not registered). */
    searchAttributes: z.boolean().default(true),
    /** Driven mode: warden runs the agent's turns itself. Absent: the agent runs elsewhere and reports. */
    driver: DriverConfigSchema.optional(),
    driven: DrivenConfigSchema.default(DrivenConfigSchema.parse({})),
    budgets: BudgetsSchema.default({}),
    /** Labels (`key=value`): each is a group whose budget counts this agent's spend (src/domain/group/). */
    labels: LabelsSchema.optional(),
    safety: SafetySchema.default(SafetySchema.parse({})),
    delegation: DelegationSchema.default(DelegationSchema.parse({})),
    /** Set by a parent for its child: who delegated, and at which depth the child runs. */
    parent: z
      .object({ agentId: z.string(), workflowId: z.string(), depth: z.number().int().min(1) })
      .strict()
      .optional(),
    contract: ContractSchema.optional(),
    /** A child waiting for a concurrency slot starts `queued`; its parent admits it. */
    startQueued: z.boolean().default(false),
    /** Definition of done: checked when the agent claims completion (a `done` turn). */
    verify: VerifySchema.optional(),
    /** Paths (globs) the agent must not weaken: their changes in the working tree are evidence at a done-claim. */
    protect: z.array(z.string()).max(100, 'protect: at most 100 globs').superRefine(checkProtectGlobs).default([]),
  })
  .strict()
  .superRefine((spec, ctx) => {
    // The spec rides along with every continue-as-new; bounded so the carried input stays far below 2 MiB.
    const bytes = jsonBytes(spec);
    if (bytes > SPEC_MAX_BYTES) {
      const biggest = Object.entries(spec).sort((a, b) => jsonBytes(b[1]) - jsonBytes(a[1]))[0]?.[0];
      ctx.addIssue({
        code: 'custom',
        path: biggest ? [biggest] : [],
        message: `the AgentSpec is ${bytes} bytes, over its budget of ${SPEC_MAX_BYTES} (largest field: ${biggest})`,
      });
    }
  });
export type AgentSpecInput = z.input<typeof AgentSpecSchema>;
export type AgentSpec = z.output<typeof AgentSpecSchema>;

/** The `delegate` update's argument: a structured task spec, never a free-form prompt. */
export const TaskSpecSchema = z
  .object({
    childId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/, 'childId: letters, digits, _ or -, at most 40'),
    objective: z
      .string()
      .min(1, 'objective must not be empty')
      .transform((s) => truncate(s, MAX_TASK_TEXT)),
    resultSchema: z.record(z.string(), z.unknown()),
    toolAllowlist: z.array(z.string().min(1)).default([]),
    budgets: BudgetsSchema.default({}),
    definitionOfDone: z.string().min(1, 'definitionOfDone must not be empty'),
    driver: DriverConfigSchema,
    driven: DrivenConfigSchema.partial().optional(),
    /** Definition of done, checked by warden: the child's result is accepted only once this command passes. */
    verify: VerifySchema.optional(),
  })
  .strict();
export type TaskSpecInput = z.input<typeof TaskSpecSchema>;
export type TaskSpec = z.output<typeof TaskSpecSchema>;

// The mesh's schemas (MeshInputSchema, MeshTaskSchema, TunablesSchema) are in domain/mesh/config.ts.
