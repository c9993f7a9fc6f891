/**
 * Meshes in `warden top`: each live mesh (`warden mesh run`) as one row of the roster. Its worker
 * agents name the mesh as their parent (`mesh-<runId>`), so the roster's lineage puts them under
 * it, indented. Visibility gives the mesh's phase (the WardenState search attribute); its
 * `meshStatus` query gives the task counts and the reason. Pure — no Temporal, no terminal.
 */
import { z } from 'zod';
import { MESH_PHASES } from '../../domain/mesh/state.js';
import { formatElapsed, type Priority, type Row, type RowOptions } from './rows.js';

/** One mesh as visibility lists it. */
export interface MeshEntry {
  runId: string;
  workflowId: string;
  /** The workflow's execution status: RUNNING, COMPLETED, … */
  status: string;
  /** The phase from the WardenState search attribute (null when the mesh upserts none). */
  phase: string | null;
  startTime: string;
  closeTime: string | null;
}

/** The part of the `meshStatus` answer top reads, validated leniently (an unknown task state counts as open). */
export const TopMeshStatusSchema = z.object({
  runId: z.string(),
  phase: z.enum(MESH_PHASES),
  phaseReason: z
    .string()
    .nullish()
    .transform((v) => v ?? null),
  startedAt: z.number().nullish().catch(null),
  tasks: z.array(
    z.object({
      state: z.string().catch('queued'),
      task: z.object({ slug: z.string().catch('?') }).catch({ slug: '?' }),
      reason: z.string().nullish().catch(null),
    }),
  ),
  spend: z.record(z.string(), z.object({ tokens: z.number().catch(0), costUsd: z.number().catch(0) }).passthrough()).catch({}),
});
export type TopMeshStatus = z.output<typeof TopMeshStatusSchema>;

/** Parse a meshStatus answer; a wrong shape is an error that names the field. */
export function parseTopMeshStatus(raw: unknown): TopMeshStatus {
  const r = TopMeshStatusSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`meshStatus answer: ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data;
}

export interface TaskCounts {
  total: number;
  integrated: number;
  /** Finished without a patch to integrate (an explorer's report). */
  done: number;
  failed: number;
  /** Still queued or being worked on. */
  open: number;
}

export function taskCounts(states: readonly string[]): TaskCounts {
  const c: TaskCounts = { total: states.length, integrated: 0, done: 0, failed: 0, open: 0 };
  for (const s of states) {
    if (s === 'integrated') c.integrated++;
    else if (s === 'done') c.done++;
    else if (s === 'failed') c.failed++;
    else c.open++;
  }
  return c;
}

/** "2/5 integrated, 1 failed, 2 open": how far the tasks are. */
export function formatProgress(c: TaskCounts): string {
  const parts = [`${c.integrated}/${c.total} integrated`];
  if (c.done) parts.push(`${c.done} done`);
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.open) parts.push(`${c.open} open`);
  return parts.join(', ');
}

/** Phases after which a mesh does nothing more. */
const FINAL_PHASES = new Set(['applied', 'cancelled', 'failed']);

/** The roster id of a mesh: what its workers name as their parent. */
export const meshRowId = (runId: string) => `mesh-${runId}`;

/** The mesh's part of a row (absent on agent rows). */
export interface MeshInfo {
  runId: string;
  workflowId: string;
  phase: string;
  phaseReason: string | null;
  counts: TaskCounts | null;
  progress: string | null;
  /** The last meshStatus query failed (the row shows what visibility knows). */
  error: string | null;
}

/**
 * One roster row for a mesh. Awaiting input ranks with the agents that await input (first); a
 * finished mesh with the finished agents; the rest with the agents that are working. The intent
 * column carries the task counts and, when the mesh waits (awaiting input, ready), the reason.
 */
export function buildMeshRow(e: MeshEntry, st: TopMeshStatus | null, error: string | null, o: Pick<RowOptions, 'nowMs'>): Row & { mesh: MeshInfo } {
  const phase = st?.phase ?? e.phase ?? (e.status === 'RUNNING' ? 'unknown' : e.status.toLowerCase());
  const finished = e.status !== 'RUNNING' || FINAL_PHASES.has(phase);
  const counts = st ? taskCounts(st.tasks.map((t) => t.state)) : null;
  const progress = counts ? formatProgress(counts) : null;
  const reason = st?.phaseReason ?? null;
  const waits = phase === 'awaiting-input' || phase === 'ready';
  const priority: Priority = finished ? 'finished' : phase === 'awaiting-input' ? 'awaiting-input' : 'normal';
  const why = finished ? phase : waits ? (reason ?? phase) : phase;
  const intent = [progress ? `mesh: ${progress}` : 'mesh', waits && reason ? reason : null].filter(Boolean).join(' · ');
  const end = e.closeTime ? Date.parse(e.closeTime) : o.nowMs;
  const costs = st ? Object.values(st.spend) : [];
  const id = meshRowId(e.runId);
  return {
    agentId: id,
    shortId: id,
    parent: null,
    depth: 0,
    state: phase,
    finished,
    priority,
    why,
    intent,
    model: null,
    tokensIn: null,
    tokensOut: null,
    costUsd: st ? costs.reduce((a, s) => a + s.costUsd, 0) : null,
    tool: null,
    burn: [],
    burnMetric: 'costUsd',
    spark: '',
    startedAt: e.startTime,
    elapsedMs: Math.max(0, end - Date.parse(e.startTime)),
    escalationStep: null,
    escalationThreshold: null,
    pendingWhispers: null,
    lastVerdict: null,
    evaluatorSpend: null,
    detailed: !!st,
    mesh: { runId: e.runId, workflowId: e.workflowId, phase, phaseReason: reason, counts, progress, error },
  };
}

/** The focus pane of a mesh row: the phase and its reason, then one line per task. */
export function meshFocusLines(runId: string, st: TopMeshStatus | null, error: string | null): string[] {
  const out = [`  phase ${st?.phase ?? '?'}${st?.phaseReason ? ` — ${st.phaseReason}` : ''}`];
  if (error) out.push(`  (meshStatus query failed: ${error})`);
  for (const [i, t] of (st?.tasks ?? []).entries()) out.push(`  task ${i + 1} ${t.task.slug}: ${t.state}${t.reason ? ` — ${t.reason}` : ''}`);
  out.push(`  verbs act on agents; for the mesh use \`warden mesh status|resume|apply|cancel ${runId}\``);
  return out;
}

/** A verb key pressed on a mesh row: agent verbs do not apply to a mesh. */
export const meshVerbRefusal = (verb: string, runId: string) =>
  `${verb}: ${meshRowId(runId)} is a mesh, not an agent; select one of its workers, or use \`warden mesh resume|apply|cancel ${runId}\``;

export const isMeshRow = (r: Row): r is Row & { mesh: MeshInfo } => !!r.mesh;

/** What `--once --json` prints per mesh (the `meshes` array), in roster order. */
export function meshJson(r: Row & { mesh: MeshInfo }) {
  return {
    runId: r.mesh.runId,
    workflowId: r.mesh.workflowId,
    phase: r.mesh.phase,
    phaseReason: r.mesh.phaseReason,
    tasks: r.mesh.counts,
    progress: r.mesh.progress,
    finished: r.finished,
    priority: r.priority,
    why: r.why,
    costUsd: r.costUsd,
    startedAt: r.startedAt,
    ageMs: r.elapsedMs,
    age: formatElapsed(r.elapsedMs),
    detailed: r.detailed,
    error: r.mesh.error,
  };
}
