/**
 * The mesh's input: the task list, the tunable thresholds with their defaults, and how
 * workers are driven. Pure zod schemas, shared by the workflow, the activities, the client and the CLI.
 */
import { z } from 'zod';
import { DriverConfigSchema, DurationSchema, EvaluatorConfigSchema, NotifyConfigSchema, SupervisorConfigSchema } from '../contract/schemas.js';
import type { MeshLoop } from './next-step.js';
import type { MeshStatus } from './state.js';

/** Tasks in one mesh: its status (carried across continue-as-new, carried.ts) stays within its byte budget. */
export const MESH_MAX_TASKS = 64;

export const AGENT_TYPES = ['worker', 'explorer', 'orchestrator'] as const;
export const TASK_MODES = ['analysis-only', 'patch-first', 'direct-edit'] as const;
export type TaskMode = (typeof TASK_MODES)[number];

export const MeshTaskSchema = z
  .object({
    /** The task as the user wrote it (one line: a verb and a concrete object). */
    title: z.string().min(1, 'title must not be empty').max(2_000),
    /** Stable id used in paths: `<slug>--a<attempt>`. Derived from the index and title when absent. */
    slug: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'slug: lower-case letters, digits and "-", at most 40')
      .optional(),
    agent: z.enum(AGENT_TYPES).default('worker'),
    skills: z.array(z.string()).default([]),
    mode: z.enum(TASK_MODES).optional(),
    /** Path globs the patch may touch; empty or absent: unconstrained. */
    scope: z.array(z.string().min(1)).default([]),
    doneWhen: z.string().max(2_000).optional(),
    /**
     * Gate V for this task: `true` asks for the mesh's validation command on the integrated
     * result; a command (or `{command, timeoutMs}`) is the task's own check, run by warden in the
     * attempt's worktree before its patch is integrated.
     */
    verify: z
      .union(
        [
          z.boolean(),
          z.string().trim().min(1, 'verify: the command must not be empty').max(2_000, 'verify: the command is longer than 2,000 characters'),
          z
            .object({
              command: z.string().trim().min(1, 'verify.command must not be empty').max(2_000, 'verify.command is longer than 2,000 characters'),
              timeoutMs: DurationSchema.pipe(
                z.number().int().min(1_000, 'verify.timeoutMs: at least 1s').max(3_600_000, 'verify.timeoutMs: at most 1h'),
              ).optional(),
            })
            .strict(),
        ],
        { error: (iss) => (iss.code === 'invalid_union' ? 'verify: yes/no (true/false), a command, or {command, timeoutMs}' : undefined) },
      )
      .default(false),
  })
  .strict();
export type MeshTaskInput = z.input<typeof MeshTaskSchema>;

/** A parsed task, with its defaults resolved (explorers default to analysis-only, the rest to patch-first). */
export interface MeshTask {
  index: number;
  title: string;
  slug: string;
  agent: (typeof AGENT_TYPES)[number];
  skills: string[];
  mode: TaskMode;
  scope: string[];
  doneWhen: string | null;
  /** The mesh's validation command requested for this task (gate V after integration). */
  verify: boolean;
  /** The task's own check: run in the attempt's worktree before its patch is integrated (absent in older runs). */
  check?: TaskCheck | null;
}

/** A task's definition-of-done command and its timeout. */
export interface TaskCheck {
  command: string;
  timeoutMs: number;
}
/** A task check's timeout when the task gives none. */
export const TASK_CHECK_TIMEOUT_MS = 600_000;

/** `verify` as given → whether the mesh's validation is asked for, and the task's own check. */
export function taskVerify(v: z.output<typeof MeshTaskSchema>['verify']): { verify: boolean; check: TaskCheck | null } {
  if (typeof v === 'boolean') return { verify: v, check: null };
  if (typeof v === 'string') return { verify: false, check: { command: v, timeoutMs: TASK_CHECK_TIMEOUT_MS } };
  return { verify: false, check: { command: v.command, timeoutMs: v.timeoutMs ?? TASK_CHECK_TIMEOUT_MS } };
}

const tick = z.union([z.literal('off'), DurationSchema.pipe(z.number().int().min(1_000, 'tickInterval: at least 1s'))]);

/** The mesh's tunable thresholds, with their defaults. */
export const TunablesSchema = z
  .object({
    cap: z.number().int().min(1).max(64).default(4),
    conflictBudget: z.number().int().min(0).max(100).default(3),
    tickInterval: tick.default(60_000),
    checkpointInterval: DurationSchema.default(120_000),
    timeBudget: DurationSchema.pipe(z.number().int().positive()).optional(),
    ackSla: DurationSchema.default(30_000),
    patchDraftTimeout: DurationSchema.default(300_000),
    firstEditTarget: DurationSchema.default(600_000),
    continueWaiting: z.boolean().default(false),
    hedgeBudget: z.number().int().min(1).max(8).default(1),
    stallThreshold: z.number().int().min(2).max(100).default(2),
    missingArtifactStrikes: z.number().int().min(0).max(10).default(1),
    /** Failed task checks (a task's `verify` command) before the task fails with gate V. */
    checkAttempts: z.number().int().min(1).max(20).default(3),
  })
  .strict();
export type TunablesInput = z.input<typeof TunablesSchema>;
export type Tunables = z.output<typeof TunablesSchema>;

export const RUN_ID_RE = /^[a-z0-9][a-z0-9-]{0,39}$/;

export const MeshInputSchema = z
  .object({
    runId: z.string().regex(RUN_ID_RE, 'runId: lower-case letters, digits and "-", at most 40'),
    /** The user's repository (absolute path); its HEAD at start is the base commit. */
    repo: z.string().min(1, 'repo must not be empty'),
    tasks: z
      .array(MeshTaskSchema)
      .min(1, 'tasks: at least one task')
      .max(MESH_MAX_TASKS, `tasks: at most ${MESH_MAX_TASKS} in one mesh (split a larger plan into several meshes)`),
    tunables: TunablesSchema.default(TunablesSchema.parse({})),
    /** How workers run (a driven agentWorkflow each). `command` workers also get WARDEN_MESH_* env. */
    driver: DriverConfigSchema,
    /** Gate V: a shell command run in the integration worktree after integration (e.g. `npm test`). */
    validate: z.string().min(1).optional(),
    supervisor: SupervisorConfigSchema.partial().optional(),
    evaluator: EvaluatorConfigSchema.optional(),
    notify: NotifyConfigSchema.default(NotifyConfigSchema.parse({})),
    searchAttributes: z.boolean().default(true),
    /** Keep the attempts' worktrees and the mesh's branches after apply or cancel (default: removed). */
    keepWorktrees: z.boolean().default(false),
    /** Per-worker turn settings (turn timeout, kill grace, max turns). */
    workerMaxTurns: z.number().int().min(1).max(10_000).default(200),
    killGraceMs: DurationSchema.default(2_000),
    /** A worker's turn that stops heartbeating this long is retried on another warden worker. */
    workerHeartbeatTimeoutMs: DurationSchema.pipe(z.number().min(1000)).default(30_000),
    /** When a run continues as new (history events or bytes); tests set small ones. Default MESH_RUN_LIMITS. */
    runLimits: z
      .object({ events: z.number().int().min(20), bytes: z.number().int().min(10_000) })
      .strict()
      .optional(),
    /** Set by the mesh itself when it continues as new: its state, carried into the next run. */
    continued: z
      .object({
        status: z.custom<MeshStatus>((v) => typeof v === 'object' && v !== null, 'continued.status must be an object'),
        loop: z.custom<MeshLoop>((v) => typeof v === 'object' && v !== null, 'continued.loop must be an object'),
      })
      .strict()
      .optional(),
  })
  .strict();
export type MeshInput = z.input<typeof MeshInputSchema>;
export type MeshSpec = z.output<typeof MeshInputSchema>;

/** Resolve defaults and slugs: explorers are analysis-only unless told otherwise; slugs are unique. */
export function resolveTasks(tasks: readonly z.output<typeof MeshTaskSchema>[]): MeshTask[] {
  const used = new Set<string>();
  return tasks.map((t, i) => {
    const index = i + 1;
    let slug = t.slug ?? slugify(t.title, index);
    for (let n = 2; used.has(slug); n++) slug = `${slugify(t.title, index).slice(0, 36)}-${n}`;
    used.add(slug);
    return {
      index,
      title: t.title,
      slug,
      agent: t.agent,
      skills: t.skills,
      mode: t.mode ?? (t.agent === 'explorer' ? 'analysis-only' : 'patch-first'),
      scope: t.scope,
      doneWhen: t.doneWhen ?? null,
      ...taskVerify(t.verify),
    };
  });
}

/** `3-fix-the-parser`: the task index, then the first words of the title, ASCII, at most 40. */
export function slugify(title: string, index: number): string {
  const words = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${index}-${words}`.slice(0, 40).replace(/-+$/, '') || String(index);
}
