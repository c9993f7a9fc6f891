import { describe, expect, test } from 'vitest';
import { parseSdkCounters } from '../../bench/sdk-metrics.js';

describe('the SDK worker counters fleet reads from Prometheus text', () => {
  test('sums each counter over its label sets; other metrics and comments are ignored', () => {
    const text = [
      '# HELP temporal_sticky_cache_miss Count of sticky cache misses',
      '# TYPE temporal_sticky_cache_miss counter',
      'temporal_sticky_cache_miss{namespace="default",task_queue="q",service_name="temporal-core-sdk"} 7',
      'temporal_sticky_cache_miss{namespace="other",task_queue="q"} 3',
      'temporal_sticky_cache_hit_total{namespace="default"} 120',
      'temporal_sticky_cache_total_forced_eviction 4',
      'temporal_workflow_task_execution_latency_bucket{le="0.01"} 2',
      'temporal_workflow_task_execution_latency_seconds_count{workflow_type="agentWorkflow"} 130',
      'temporal_workflow_task_execution_latency_count{workflow_type="other"} 10',
      'temporal_workflow_task_execution_latency_sum 0.3',
      'temporal_workflow_task_replay_latency_count 999',
      'temporal_sticky_cache_size 100',
      '',
    ].join('\n');
    expect(parseSdkCounters(text)).toEqual({ stickyCacheMiss: 10, stickyCacheHit: 120, forcedEvictions: 4, workflowTasks: 140 });
  });

  test('an empty or unrelated page reads as zeros', () => {
    expect(parseSdkCounters('')).toEqual({ stickyCacheMiss: 0, stickyCacheHit: 0, forcedEvictions: 0, workflowTasks: 0 });
    expect(parseSdkCounters('process_cpu_seconds_total 3\nsticky_cache_miss NaN-ish\n').stickyCacheMiss).toBe(0);
  });
});
