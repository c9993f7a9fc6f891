/**
 * `warden top`: the operator's console (a roster and a focus pane) over every agent and every live
 * mesh on the namespace (a mesh's workers under its row). `--once [--json]` prints the roster once,
 * in the same order, for scripts.
 */
import type { Command } from 'commander';
import { withClient, globals } from '../context.js';
import { UsageError } from '../exit.js';
import { print, printJson } from '../output.js';
import { buildRow, DEFAULT_ROW_OPTIONS, DEFAULT_SORT, fleetTotals, formatFleetTotals, roster, rowJson, SORT_KEYS, type SortKey } from '../../roster/rows.js';
import { buildMeshRow, isMeshRow, meshJson } from '../../roster/meshes.js';
import { listMeshes, listRoster, MeshCache, StatusCache } from '../../roster/source.js';
import { renderText } from '../top/table.js';

function int(name: string, v: string | undefined, dflt: number, min = 0): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be a whole number ≥ ${min}`);
  return n;
}

export const topAction = async (opts: Record<string, string | boolean | undefined>, cmd: Command) => {
  const g = globals(cmd);
  const sortKey = (opts.sort as string | undefined) ?? 'priority';
  if (!(SORT_KEYS as readonly string[]).includes(sortKey)) throw new UsageError(`--sort must be one of ${SORT_KEYS.join(', ')}`);
  const sort = { key: sortKey as SortKey, desc: !!opts.desc };
  const pollMs = int('poll-ms', opts.pollMs as string | undefined, 1000, 100);
  const listMs = int('list-ms', opts.listMs as string | undefined, 2000, 200);
  if (!opts.once) {
    if (g.json) throw new UsageError('--json needs --once (the live view is a terminal UI)');
    if (!process.stdout.isTTY || !process.stdin.isTTY) throw new UsageError('warden top needs a terminal; use `warden top --once [--json]` in scripts');
    // A terminal is attached, so a person is watching: Ink's CI mode (set by CI=true in the
    // environment) would draw only the last frame on exit. Ink reads the variable when loaded.
    delete process.env.CI;
    delete process.env.CONTINUOUS_INTEGRATION;
    const { runTop } = await import('../top/app.js');
    await withClient(cmd, (client) =>
      runTop(client, {
        pollMs,
        listMs,
        concurrency: int('concurrency', opts.concurrency as string | undefined, 16, 1),
        showFinished: !opts.hideFinished,
        title: `${client.namespace} @ ${g.address ?? process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233'}`,
      }),
    );
    return;
  }
  const t0 = Date.now();
  const result = await withClient(cmd, async (client) => {
    const [entries, meshEntries] = await Promise.all([listRoster(client), listMeshes(client)]);
    const listedMs = Date.now() - t0;
    const concurrency = int('concurrency', opts.concurrency as string | undefined, 32, 1);
    const cache = new StatusCache(client, { intervalMs: 0, concurrency });
    const meshCache = new MeshCache(client, Math.max(1, concurrency >> 2));
    const details = opts.details === 'all' ? entries.length : int('details', opts.details as string | undefined, 50);
    // Which rows get a status query: the first `details` in the order visibility alone gives.
    const now = Date.now();
    const pre = roster(
      entries.map((e) => buildRow(e, null, null, { ...DEFAULT_ROW_OPTIONS, nowMs: now })),
      { sort: DEFAULT_SORT, showFinished: !opts.hideFinished },
    );
    const byId = new Map(entries.map((e) => [e.agentId, e]));
    await Promise.all([cache.poll(pre.slice(0, details).map((r) => byId.get(r.agentId)!)), meshCache.poll(meshEntries)]);
    const at = { ...DEFAULT_ROW_OPTIONS, nowMs: Date.now() };
    const all = [
      ...entries.map((e) => buildRow(e, cache.status(e.agentId), cache.intent(e.agentId), at)),
      ...meshEntries.map((m) => buildMeshRow(m, meshCache.status(m), meshCache.error(m), at)),
    ];
    const rows = roster(all, { sort, filter: (opts.filter as string | undefined) ?? '', showFinished: !opts.hideFinished });
    return {
      rows,
      // The whole fleet's spend (every listed agent, whatever the filter shows).
      totals: fleetTotals(all),
      listedMs,
      queries: cache.queries,
      meshQueries: meshCache.queries,
      errors: [...cache.errors].map(([agentId, error]) => ({ agentId, error })),
    };
  });
  const elapsedMs = Date.now() - t0;
  const agentRows = result.rows.filter((r) => !isMeshRow(r));
  const meshRows = result.rows.filter(isMeshRow);
  if (g.json) {
    return printJson({
      agents: agentRows.length,
      elapsedMs,
      listedMs: result.listedMs,
      statusQueries: result.queries,
      sort,
      totals: { costUsd: result.totals.costUsd, supervisionUsd: result.totals.supervisionUsd },
      rows: agentRows.map(rowJson),
      errors: result.errors,
      meshes: meshRows.map(meshJson),
      meshStatusQueries: result.meshQueries,
    });
  }
  const width = int('width', opts.width as string | undefined, process.stdout.columns || 160, 40);
  for (const l of renderText(result.rows, width, sort)) print(l);
  print(
    `${agentRows.length} agents${meshRows.length ? ` · ${meshRows.length} ${meshRows.length === 1 ? 'mesh' : 'meshes'}` : ''} · ${formatFleetTotals(result.totals)} · ${elapsedMs} ms${result.errors.length ? ` · ${result.errors.length} status queries failed (first: ${result.errors[0]!.agentId}: ${result.errors[0]!.error})` : ''}`,
  );
};
