/**
 * The fleet page's data: every agent and live mesh from visibility, in `warden top`'s order
 * (src/roster/rows.ts: needs a human first, then runaway cost, flagged, stuck, blocked, running,
 * done), filtered with top's fuzzy filter.
 *
 * Load: one visibility listing of the agents and one of the live meshes per refresh, shared by
 * every browser polling (at most one refresh in flight; a listing younger than `listTtlMs` is
 * served as it is). Details that visibility lacks (the task, the last verdict, the threshold) come
 * from `status` queries in the background, only for the first `detailRows` rows in that order, each
 * at most once per `detailIntervalMs` (a finished agent's once), `concurrency` at a time: never one
 * query per agent per refresh.
 */
import type { WardenClient } from '../../client/index.js';
import { buildMeshRow, isMeshRow } from '../../roster/meshes.js';
import {
  buildRow,
  DEFAULT_ROW_OPTIONS,
  DEFAULT_SORT,
  filterRows,
  fleetTotals,
  formatCost,
  formatElapsed,
  formatFleetTotals,
  formatRate,
  formatStep,
  PRIORITIES,
  roster,
  type Priority,
  type Row,
} from '../../roster/rows.js';
import { listMeshes, listRoster, MeshCache, StatusCache } from '../../roster/source.js';
import type { MeshEntry } from '../../roster/meshes.js';
import type { RosterEntry } from '../../roster/rows.js';

/** The fleet page's groups, in the order of top's priorities. */
export const GROUP_TITLES: Record<Priority, string> = {
  'awaiting-input': 'Needs a human',
  runaway: 'Runaway cost',
  flagged: 'Flagged',
  stuck: 'Stuck',
  blocked: 'Blocked',
  normal: 'Running',
  finished: 'Done',
};

/** One row as the console's script gets it (every string is agent-influenced: shown as text). */
export interface FleetRow {
  agentId: string;
  shortId: string;
  depth: number;
  mesh: boolean;
  /** The group of the row's tree (its loudest member's priority): rows of one tree stay together. */
  group: Priority;
  priority: Priority;
  why: string;
  state: string;
  task: string | null;
  step: string;
  lastVerdict: { kind: string; pattern: string | null; message: string } | null;
  costUsd: number | null;
  cost: string;
  /** What supervising it cost (its evaluator's model calls), and that per agent-hour. */
  supervisionUsd: number | null;
  supervision: string;
  supervisionRate: string;
  age: string;
  startedAt: string;
}

export interface FleetAnswer {
  at: string;
  agents: number;
  meshes: number;
  shown: number;
  listedMs: number;
  /** The whole fleet's spend (every listed agent, whatever the filter shows): the agents' own and supervision's. */
  totals: { costUsd: number; supervisionUsd: number; text: string };
  groups: { priority: Priority; title: string }[];
  rows: FleetRow[];
  error: string | null;
}

/** Rows (already arranged as top arranges them) as the page shows them, each with its tree's group. */
export function fleetRows(arranged: Row[], nowMs: number): FleetRow[] {
  const out: FleetRow[] = [];
  let group: Priority = 'finished';
  for (let i = 0; i < arranged.length; i++) {
    const r = arranged[i]!;
    if (r.depth === 0) {
      let loudest = PRIORITIES.indexOf(r.priority);
      for (let j = i + 1; j < arranged.length && arranged[j]!.depth > 0; j++) loudest = Math.min(loudest, PRIORITIES.indexOf(arranged[j]!.priority));
      group = PRIORITIES[loudest]!;
    }
    out.push({
      agentId: r.agentId,
      shortId: r.shortId,
      depth: r.depth,
      mesh: isMeshRow(r),
      group,
      priority: r.priority,
      why: r.why,
      state: r.state,
      task: r.intent,
      step: formatStep(r),
      lastVerdict: r.lastVerdict ? { kind: r.lastVerdict.kind, pattern: r.lastVerdict.pattern, message: r.lastVerdict.message } : null,
      costUsd: r.costUsd,
      cost: formatCost(r.costUsd),
      supervisionUsd: r.supervisionUsd,
      supervision: formatCost(r.supervisionUsd),
      supervisionRate: formatRate(r.supervisionUsdPerHour),
      age: formatElapsed(Math.max(0, nowMs - Date.parse(r.startedAt))),
      startedAt: r.startedAt,
    });
  }
  return out;
}

export interface FleetOptions {
  listTtlMs?: number;
  detailRows?: number;
  detailIntervalMs?: number;
  concurrency?: number;
}

export class FleetSource {
  private listing: { entries: RosterEntry[]; meshes: MeshEntry[]; at: number; ms: number } | null = null;
  private refreshing: Promise<void> | null = null;
  private detailing = false;
  private statuses: StatusCache | null = null;
  private meshStatuses: MeshCache | null = null;
  private lastError: string | null = null;
  /** Visibility listings made (for tests: one per refresh, however many browsers poll). */
  listings = 0;

  constructor(
    private readonly client: () => Promise<WardenClient>,
    private readonly opts: FleetOptions = {},
  ) {}

  private async refresh(): Promise<void> {
    const client = await this.client();
    this.statuses ??= new StatusCache(client, { intervalMs: this.opts.detailIntervalMs ?? 10_000, concurrency: this.opts.concurrency ?? 8 });
    this.meshStatuses ??= new MeshCache(client, 4);
    const t0 = Date.now();
    this.listings++;
    const [entries, meshes] = await Promise.all([listRoster(client), listMeshes(client)]);
    this.listing = { entries, meshes, at: Date.now(), ms: Date.now() - t0 };
  }

  /** Start the background status queries for the loudest rows, unless a round is still running. */
  private detail(arranged: Row[]): void {
    if (this.detailing || !this.listing || !this.statuses) return;
    const byId = new Map(this.listing.entries.map((e) => [e.agentId, e]));
    const want = arranged
      .filter((r) => !isMeshRow(r))
      .slice(0, this.opts.detailRows ?? 100)
      .map((r) => byId.get(r.agentId))
      .filter((e): e is RosterEntry => !!e);
    this.detailing = true;
    Promise.all([this.statuses.poll(want), this.meshStatuses!.poll(this.listing.meshes)])
      .catch(() => {})
      .finally(() => {
        this.detailing = false;
      });
  }

  /** The fleet now, filtered by `filter` (top's fuzzy filter), with or without finished agents. */
  async answer(view: { filter?: string; showFinished?: boolean } = {}): Promise<FleetAnswer> {
    const stale = !this.listing || Date.now() - this.listing.at >= (this.opts.listTtlMs ?? 2_000);
    if (stale) {
      this.refreshing ??= this.refresh()
        .then(() => {
          this.lastError = null;
        })
        .catch((err: unknown) => {
          this.lastError = err instanceof Error ? err.message : String(err);
        })
        .finally(() => {
          this.refreshing = null;
        });
      await this.refreshing;
    }
    const nowMs = Date.now();
    const o = { ...DEFAULT_ROW_OPTIONS, nowMs };
    const l = this.listing ?? { entries: [], meshes: [], at: nowMs, ms: 0 };
    const rows = [
      ...l.entries.map((e) => buildRow(e, this.statuses?.status(e.agentId) ?? null, this.statuses?.intent(e.agentId) ?? null, o)),
      ...l.meshes.map((m) => buildMeshRow(m, this.meshStatuses?.status(m) ?? null, this.meshStatuses?.error(m) ?? null, o)),
    ];
    const arranged = roster(rows, { sort: DEFAULT_SORT, showFinished: view.showFinished !== false });
    const totals = fleetTotals(rows);
    this.detail(arranged);
    const shown = filterRows(arranged, view.filter ?? '');
    return {
      at: new Date(nowMs).toISOString(),
      agents: l.entries.length,
      meshes: l.meshes.length,
      shown: shown.length,
      listedMs: l.ms,
      totals: { costUsd: totals.costUsd, supervisionUsd: totals.supervisionUsd, text: formatFleetTotals(totals) },
      groups: PRIORITIES.map((p) => ({ priority: p, title: GROUP_TITLES[p] })),
      rows: fleetRows(shown, nowMs),
      error: this.lastError,
    };
  }

  /** Ask again soon for this agent's status (after an action on it). */
  invalidate(agentId: string): void {
    this.statuses?.invalidate(agentId);
    if (this.listing) this.listing.at = 0;
  }
}
