/**
 * The Temporal SDK's worker counters that bench/fleet.ts reads from a worker's Prometheus endpoint
 * (WARDEN_METRICS_ADDRESS, FLEET_BARE_METRICS): sticky-cache hits and misses (a miss is a workflow
 * task for an agent the worker no longer holds, so it replays the history), forced evictions
 * (an agent dropped to make room), and workflow tasks executed. (The SDK's
 * `workflow_task_replay_latency` is recorded for every task, not only replays, so it is not read.)
 */
export const SDK_COUNTERS = {
  stickyCacheMiss: 'sticky_cache_miss',
  stickyCacheHit: 'sticky_cache_hit',
  forcedEvictions: 'sticky_cache_total_forced_eviction',
  workflowTasks: 'workflow_task_execution_latency_count',
} as const;
export type SdkCounters = Record<keyof typeof SDK_COUNTERS, number>;

/** Sum each counter's samples in Prometheus text (with or without the `temporal_` prefix, the `_total` suffix, and a histogram's unit before `_count`). */
export function parseSdkCounters(text: string): SdkCounters {
  const out = Object.fromEntries(Object.keys(SDK_COUNTERS).map((k) => [k, 0])) as SdkCounters;
  const byName = new Map<string, keyof typeof SDK_COUNTERS>(Object.entries(SDK_COUNTERS).map(([k, v]) => [v, k as keyof typeof SDK_COUNTERS]));
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const name = m[1]!
      .replace(/^temporal_/, '')
      .replace(/_total$/, '')
      .replace(/_(?:seconds|milliseconds)_count$/, '_count');
    const key = byName.get(name);
    const v = Number(m[2]);
    if (key && Number.isFinite(v)) out[key] += v;
  }
  return out;
}
