/**
 * Meshes in `warden top`: each live mesh (`warden mesh run`) as one row of the roster. Its worker
 * agents name the mesh as their parent (`mesh-<runId>`), so the roster's lineage puts them under
 * it, indented. Visibility gives the mesh's phase (the WardenState search attribute); its
 * `meshStatus` query gives the task counts and the reason. Pure — no Temporal, no terminal.
 */
import { z } from 'zod';
import { MESH_PHASES } from '../domain/mesh/state.js';
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
    supervisionUsd: null,
    supervisionUsdPerHour: null,
    detailed: !!st,
    mesh: { runId: e.runId, workflowId: e.workflowId, phase, phaseReason: reason, counts, progress, error },
  };
}

/** The focus pane of a mesh row: the phase and its reason, then one line per task, then the keys that act on it. */
export function meshFocusLines(runId: string, st: TopMeshStatus | null, error: string | null): string[] {
  const out = [`  phase ${st?.phase ?? '?'}${st?.phaseReason ? ` — ${st.phaseReason}` : ''}`];
  if (error) out.push(`  (meshStatus query failed: ${error})`);
  for (const [i, t] of (st?.tasks ?? []).entries()) out.push(`  task ${i + 1} ${t.task.slug}: ${t.state}${t.reason ? ` — ${t.reason}` : ''}`);
  out.push(`  keys on a mesh: a apply · x cancel · r resume (awaiting input); the other verbs act on agents (\`warden mesh status ${runId}\`)`);
  return out;
}

/** An agent verb key pressed on a mesh row that has no mesh meaning: refused, with the mesh's own keys and commands. */
export const meshVerbRefusal = (verb: string, runId: string) =>
  `${verb}: ${meshRowId(runId)} is a mesh, not an agent; select one of its workers, or use a apply · x cancel · r resume (\`warden mesh resume|apply|cancel ${runId}\`)`;

/** What a mesh row's own keys do: the same client calls as `warden mesh apply|cancel|resume`. */
export type MeshAction = 'apply' | 'cancel' | 'resume';

/**
 * The keys that act on a mesh row, beside the agent meaning of the same key: `a` apply (an agent's
 * abort), `x` cancel (an agent's stop) — both end something, so both ask y/N, as abort and stop do —
 * and `r` resume (an agent's resume: a mesh awaiting input goes on, with another conflict budget).
 */
export const MESH_KEYS: Readonly<Record<string, MeshAction>> = { a: 'apply', x: 'cancel', r: 'resume' };

/** What a key on a mesh row does: ask y/N, act at once, be refused (with the reason), or nothing (not a verb key). */
export type MeshKeyOutcome =
  | { kind: 'confirm'; action: 'apply' | 'cancel'; runId: string; prompt: string }
  | { kind: 'act'; action: 'resume'; runId: string }
  | { kind: 'refuse'; message: string };

/**
 * A verb key (`key`, the agent verb it names `verbLabel`) pressed on a mesh row. Apply always asks,
 * then goes to the mesh: one that is not ready refuses it with its own reason, shown as the client
 * gives it. Cancel is refused on a mesh that has ended; resume only on a mesh awaiting input (the
 * mesh ignores it otherwise, so it is not sent). Any other verb is an agent's: refused, with the
 * pointer.
 */
export function meshKey(key: string, verbLabel: string, m: Pick<MeshInfo, 'runId' | 'phase'>, finished: boolean): MeshKeyOutcome {
  const action = MESH_KEYS[key];
  const id = meshRowId(m.runId);
  if (action === 'apply') return { kind: 'confirm', action, runId: m.runId, prompt: meshConfirmPrompt('apply', m) };
  if (action === 'cancel') {
    if (finished) return { kind: 'refuse', message: `cancel ${id} refused: the mesh is ${m.phase}; nothing to cancel` };
    return { kind: 'confirm', action, runId: m.runId, prompt: meshConfirmPrompt('cancel', m) };
  }
  if (action === 'resume') {
    if (m.phase !== 'awaiting-input') return { kind: 'refuse', message: `resume ${id} refused: the mesh is ${m.phase}, not awaiting input; nothing to resume` };
    return { kind: 'act', action, runId: m.runId };
  }
  return { kind: 'refuse', message: meshVerbRefusal(verbLabel, m.runId) };
}

/** The y/N question before apply or cancel (the status line shows it). */
export function meshConfirmPrompt(action: 'apply' | 'cancel', m: Pick<MeshInfo, 'runId' | 'phase'>): string {
  const id = meshRowId(m.runId);
  if (action === 'cancel') return `cancel ${id}: stop every worker and end the mesh, merging nothing? y/N`;
  const state = m.phase === 'ready' ? '' : ` (it is ${m.phase}; apply needs it ready)`;
  return `apply ${id}: merge mesh/${m.runId}/integration into your branch${state}? y/N`;
}

/** The status line after the operator answered anything but y. */
export const meshDeclined = (action: MeshAction, runId: string) => `${action} ${meshRowId(runId)}: not sent (answered no)`;

/** The status line while the call is on its way. */
export const meshPending = (action: MeshAction, runId: string) =>
  `${action === 'apply' ? 'applying' : action === 'cancel' ? 'cancelling' : 'resuming'} ${meshRowId(runId)}…`;

/** The status line after the call: what `warden mesh apply|cancel|resume` prints, or the client's error. */
export function meshOutcome(action: MeshAction, runId: string, r: { ok: true; commit?: string; branch?: string } | { ok: false; error: unknown }): string {
  if (!r.ok) return `${action} ${meshRowId(runId)} failed: ${r.error instanceof Error ? r.error.message : String(r.error)}`;
  if (action === 'apply') return `merged mesh/${runId}/integration into ${r.branch ?? '?'} (${(r.commit ?? '').slice(0, 12)})`;
  return `${action} sent to mesh ${runId}`;
}

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
