/**
 * Where `warden top` gets its data: the roster from visibility (`listWorkflows` with warden's search
 * attributes, in pages), and `status` queries for the rows the operator can see — coalesced (at
 * most one query in flight per agent, a bounded number in flight overall) at a steady cadence. A
 * finished agent's status is fetched once and kept. The one-line intent comes from the workflow's
 * static summary (fetched once per agent) unless `status.task` carries it.
 */
import type { WardenClient } from '../client/index.js';
import { AGENT_RUNS_QUERY, agentIdFrom } from '../client/index.js';
import pLimit from 'p-limit';
import { z } from 'zod';
import type { Turn, Whisper } from '../domain/contract/schemas.js';
import {
  WardenCostUsd,
  WardenEscalationStep,
  WardenEvaluatorCostUsd,
  WardenParent,
  WardenPaused,
  WardenState,
  WardenTokens,
} from '../domain/contract/search-attributes.js';
import { pendingWhispersQuery, statusQuery, windowQuery } from '../messages/agent.js';
import { intentFromSummary, parseTopStatus, type RosterEntry, type TopStatus } from './rows.js';
import { MESH_WORKFLOW_TYPE } from '../client/mesh.js';
import { meshStatusQuery } from '../messages/mesh.js';
import { parseTopMeshStatus, type MeshEntry, type TopMeshStatus } from './meshes.js';

/** Every agent on the namespace (its live or last run, not the runs it continued as new from), read from visibility page by page. */
export async function listRoster(client: WardenClient, opts: { pageSize?: number; limit?: number; query?: string } = {}): Promise<RosterEntry[]> {
  const q = [AGENT_RUNS_QUERY, opts.query ? `(${opts.query})` : ''].filter(Boolean).join(' AND ');
  const out: RosterEntry[] = [];
  const limit = opts.limit ?? 10_000;
  for await (const wf of client.client.workflow.list({ query: q, pageSize: opts.pageSize ?? 500 })) {
    const sa = wf.typedSearchAttributes;
    const get = <T>(k: { name: string; type: string }) => sa.get(k as never) as T | undefined;
    const parentWf = wf.parentExecution?.workflowId;
    out.push({
      agentId: agentIdFrom(wf.workflowId),
      workflowId: wf.workflowId,
      runId: wf.runId,
      status: wf.status.name,
      state: get<string>(WardenState) ?? null,
      parent: get<string>(WardenParent) ?? (parentWf ? agentIdFrom(parentWf) : null),
      escalationStep: get<number>(WardenEscalationStep) ?? null,
      paused: get<boolean>(WardenPaused) ?? null,
      costUsd: get<number>(WardenCostUsd) ?? null,
      tokens: get<number>(WardenTokens) ?? null,
      evaluatorCostUsd: get<number>(WardenEvaluatorCostUsd) ?? null,
      startTime: wf.startTime.toISOString(),
      closeTime: wf.closeTime?.toISOString() ?? null,
      task: taskOf(wf.memo),
    });
    if (out.length >= limit) break;
  }
  return out;
}

/** The memo's task line (written by the client at start; agent text, so only ever shown as text). */
const taskOf = (memo: Record<string, unknown> | undefined): string | null => {
  const t = memo?.wardenTask;
  return typeof t === 'string' && t ? t.slice(0, 180) : null;
};

/** At most this many meshes are listed (and queried): meshes are few, each runs many agents. */
export const MESH_LIMIT = 200;

/**
 * The live meshes (`warden mesh run`), newest first, from visibility: by workflow type and running
 * status (a mesh that ended has nothing left to watch; its workers stay in the agent roster).
 */
export async function listMeshes(client: WardenClient, opts: { pageSize?: number; limit?: number } = {}): Promise<MeshEntry[]> {
  const q = `WorkflowType = '${MESH_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;
  const out: MeshEntry[] = [];
  const limit = opts.limit ?? MESH_LIMIT;
  if (limit <= 0) return out;
  for await (const wf of client.client.workflow.list({ query: q, pageSize: opts.pageSize ?? Math.min(limit, 100) })) {
    out.push({
      runId: wf.workflowId.replace(/^mesh-/, ''),
      workflowId: wf.workflowId,
      status: wf.status.name,
      phase: (wf.typedSearchAttributes.get(WardenState as never) as string | undefined) ?? null,
      startTime: wf.startTime.toISOString(),
      closeTime: wf.closeTime?.toISOString() ?? null,
    });
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The `meshStatus` answers for the listed meshes: every mesh at most once in flight, a bounded
 * number at once; a failed query keeps the last answer and records the error.
 */
export class MeshCache {
  readonly statuses = new Map<string, TopMeshStatus>();
  readonly errors = new Map<string, string>();
  private inFlight = new Set<string>();
  queries = 0;

  constructor(
    private readonly client: WardenClient,
    private readonly concurrency = 8,
  ) {}

  async poll(entries: MeshEntry[]): Promise<void> {
    // Claimed before any starts, so a poll that overlaps this one skips them (queued ones too).
    const due = entries.filter((e) => !this.inFlight.has(e.workflowId));
    for (const e of due) this.inFlight.add(e.workflowId);
    await mapLimit(due, this.concurrency, async (e) => {
      try {
        this.queries++;
        this.statuses.set(e.workflowId, parseTopMeshStatus(await this.client.client.workflow.getHandle(e.workflowId).query(meshStatusQuery)));
        this.errors.delete(e.workflowId);
      } catch (err) {
        this.errors.set(e.workflowId, err instanceof Error ? err.message : String(err));
      } finally {
        this.inFlight.delete(e.workflowId);
      }
    });
  }

  status(e: MeshEntry): TopMeshStatus | null {
    return this.statuses.get(e.workflowId) ?? null;
  }
  error(e: MeshEntry): string | null {
    return this.errors.get(e.workflowId) ?? null;
  }
}

/** Run `fn` over `items` with at most `n` (at least 1) in flight; the results in the order of `items`. */
export function mapLimit<T, R>(items: readonly T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  return pLimit(Math.max(1, Math.floor(n))).map(items, (t) => fn(t));
}

export interface FocusDetails {
  agentId: string;
  window: Turn[];
  whispers: Whisper[];
  at: number;
}

/**
 * Status (and intent) for the rows in view. `want()` names the rows on screen; `poll()` queries
 * those that are due, never two at once for one agent, at most `concurrency` overall.
 */
export class StatusCache {
  readonly statuses = new Map<string, { status: TopStatus; at: number; runId: string }>();
  readonly errors = new Map<string, string>();
  readonly intents = new Map<string, string | null>();
  private inFlight = new Set<string>();
  private intentInFlight = new Set<string>();
  queries = 0;

  constructor(
    private readonly client: WardenClient,
    private readonly opts: { intervalMs: number; concurrency: number } = { intervalMs: 1000, concurrency: 16 },
  ) {}

  /** Query the due ones among `entries`; resolves when this round's queries are done. */
  async poll(entries: RosterEntry[], now = Date.now()): Promise<void> {
    const due = entries.filter((e) => {
      if (this.inFlight.has(e.agentId)) return false;
      const have = this.statuses.get(e.agentId);
      if (!have || have.runId !== e.runId) return true;
      if (e.status !== 'RUNNING') return false; // a finished agent's status does not change
      return now - have.at >= this.opts.intervalMs;
    });
    const needIntent = entries.filter((e) => !this.intents.has(e.agentId) && !this.intentInFlight.has(e.agentId));
    await Promise.all([
      mapLimit(due, this.opts.concurrency, (e) => this.queryOne(e)),
      mapLimit(needIntent, Math.max(1, this.opts.concurrency >> 1), (e) => this.intentOne(e)),
    ]);
  }

  private async queryOne(e: RosterEntry): Promise<void> {
    this.inFlight.add(e.agentId);
    try {
      this.queries++;
      const raw = await this.client.client.workflow.getHandle(e.workflowId, e.runId).query(statusQuery);
      const status = parseTopStatus(raw);
      this.statuses.set(e.agentId, { status, at: Date.now(), runId: e.runId });
      this.errors.delete(e.agentId);
    } catch (err) {
      this.errors.set(e.agentId, err instanceof Error ? err.message : String(err));
    } finally {
      this.inFlight.delete(e.agentId);
    }
  }

  private async intentOne(e: RosterEntry): Promise<void> {
    this.intentInFlight.add(e.agentId);
    try {
      const d = await this.client.client.workflow.getHandle(e.workflowId, e.runId).describe();
      this.intents.set(e.agentId, intentFromSummary(await d.staticSummary()));
    } catch {
      this.intents.set(e.agentId, null);
    } finally {
      this.intentInFlight.delete(e.agentId);
    }
  }

  status(agentId: string): TopStatus | null {
    return this.statuses.get(agentId)?.status ?? null;
  }

  intent(agentId: string): string | null {
    return this.intents.get(agentId) ?? null;
  }

  /** Forget an agent's status so the next poll asks again (after sending it a verb). */
  invalidate(agentId: string): void {
    const have = this.statuses.get(agentId);
    if (have) have.at = 0;
  }
}

const FocusTurnsSchema = z.array(
  z
    .object({
      text: z.string().catch(''),
      toolCalls: z
        .array(z.object({ name: z.string(), args: z.unknown().optional(), result: z.unknown().optional(), ok: z.boolean().optional() }))
        .optional()
        .catch([]),
    })
    .passthrough(),
);
const FocusWhispersSchema = z.array(z.object({ id: z.string(), type: z.string(), text: z.string(), createdAt: z.string() }));

function parseOr<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  const r = schema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`${what} answer: ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data;
}

/** The focus pane's extra queries: the transcript tail (the supervisor's window) and pending whispers. */
export async function fetchFocus(client: WardenClient, e: RosterEntry): Promise<FocusDetails> {
  const h = client.client.workflow.getHandle(e.workflowId, e.runId);
  const [window, whispers] = await Promise.all([h.query(windowQuery), h.query(pendingWhispersQuery)]);
  return {
    agentId: e.agentId,
    window: parseOr(FocusTurnsSchema, window, 'window') as Turn[],
    whispers: parseOr(FocusWhispersSchema, whispers, 'pendingWhispers') as Whisper[],
    at: Date.now(),
  };
}
