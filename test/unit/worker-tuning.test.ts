import { describe, expect, test } from 'vitest';
import { keepsStackTraces, prebuiltBundlePath, preloadModules, PRELOAD_MODULES, WORKFLOWS_PATH } from '../../workers/bundle.js';
import { metricsFromEnv, tuningFromEnv, WORKER_DEFAULTS } from '../../workers/main.js';

describe('worker tuning from the environment', () => {
  test('unset variables leave the SDK defaults', () => {
    expect(tuningFromEnv({})).toEqual({});
    expect(tuningFromEnv({ WARDEN_MAX_CACHED_WORKFLOWS: '' })).toEqual({});
  });

  test('whole numbers map to worker options', () => {
    expect(tuningFromEnv({ WARDEN_MAX_CACHED_WORKFLOWS: '2500', WARDEN_WFT_CONCURRENCY: '20', WARDEN_WFT_POLLERS: '4' })).toEqual({
      maxCachedWorkflows: 2500,
      maxConcurrentWorkflowTaskExecutions: 20,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 4 },
    });
    expect(tuningFromEnv({ WARDEN_STICKY_TIMEOUT_MS: '10000', WARDEN_WORKFLOW_THREADS: '2' })).toEqual({
      stickyQueueScheduleToStartTimeout: 10_000,
      workflowThreadPoolSize: 2,
    });
  });

  test('the non-sticky poll ratio is a fraction above 0, at most 1', () => {
    expect(tuningFromEnv({ WARDEN_NONSTICKY_POLL_RATIO: '1' })).toEqual({ nonStickyToStickyPollRatio: 1 });
    expect(tuningFromEnv({ WARDEN_NONSTICKY_POLL_RATIO: '0.5' })).toEqual({ nonStickyToStickyPollRatio: 0.5 });
    expect(tuningFromEnv({ WARDEN_NONSTICKY_POLL_RATIO: '.25' })).toEqual({ nonStickyToStickyPollRatio: 0.25 });
    for (const bad of ['0', '1.5', 'half', '-0.5', '1e-1', ' 0.5']) {
      expect(() => tuningFromEnv({ WARDEN_NONSTICKY_POLL_RATIO: bad }), bad).toThrow(/WARDEN_NONSTICKY_POLL_RATIO must be a number above 0 and at most 1/);
    }
  });

  test("warden's own default: a crashed worker's agents move to another worker after 5 s, not the SDK's 10 s", () => {
    expect(WORKER_DEFAULTS.stickyQueueScheduleToStartTimeout).toBe(5_000);
  });

  test('anything else is refused, naming the variable', () => {
    expect(() => tuningFromEnv({ WARDEN_MAX_CACHED_WORKFLOWS: 'lots' })).toThrow(/WARDEN_MAX_CACHED_WORKFLOWS/);
    expect(() => tuningFromEnv({ WARDEN_WFT_POLLERS: '-1' })).toThrow(/WARDEN_WFT_POLLERS/);
    expect(() => tuningFromEnv({ WARDEN_WFT_CONCURRENCY: '1.5' })).toThrow(/WARDEN_WFT_CONCURRENCY/);
  });
});

describe('the SDK metrics endpoint from the environment', () => {
  test('unset or empty: no endpoint; host:port is passed through', () => {
    expect(metricsFromEnv({})).toBeUndefined();
    expect(metricsFromEnv({ WARDEN_METRICS_ADDRESS: '' })).toBeUndefined();
    expect(metricsFromEnv({ WARDEN_METRICS_ADDRESS: '127.0.0.1:9464' })).toBe('127.0.0.1:9464');
    expect(metricsFromEnv({ WARDEN_METRICS_ADDRESS: '[::1]:9464' })).toBe('[::1]:9464');
  });

  test('anything else is refused, naming the variable', () => {
    for (const bad of ['9464', 'localhost', '127.0.0.1:', '127.0.0.1:0', '127.0.0.1:70000', 'http://127.0.0.1:9464']) {
      expect(() => metricsFromEnv({ WARDEN_METRICS_ADDRESS: bad }), bad).toThrow(/WARDEN_METRICS_ADDRESS must be host:port/);
    }
  });
});

describe('workflow bundle selection', () => {
  test('WARDEN_WORKFLOW_BUNDLE=0 always bundles from source; a path is used as given', () => {
    expect(prebuiltBundlePath({ WARDEN_WORKFLOW_BUNDLE: '0' })).toBeNull();
    expect(prebuiltBundlePath({ WARDEN_WORKFLOW_BUNDLE: '/srv/warden/bundle.js' })).toBe('/srv/warden/bundle.js');
  });

  test('from TypeScript sources (tests, dev) there is no prebuilt bundle to use', () => {
    // Under vitest this module is the .ts source: the prebuilt dist bundle is never picked up.
    expect(prebuiltBundlePath({})).toBeNull();
  });

  test('the stack-trace switch, zod and then the workflow entry are preloaded (shared across workflows)', () => {
    expect(PRELOAD_MODULES).toHaveLength(3);
    expect(PRELOAD_MODULES[0]).toMatch(/stack-preload\.(ts|js)$/);
    expect(PRELOAD_MODULES[1]).toMatch(/zod-preload\.(ts|js)$/);
    expect(PRELOAD_MODULES[2]).toBe(WORKFLOWS_PATH);
  });

  test('WARDEN_WORKFLOW_STACK_TRACES=1 keeps the SDK stack traces: no stack preload, and never the prebuilt bundle (it has them off)', () => {
    expect(keepsStackTraces({})).toBe(false);
    expect(keepsStackTraces({ WARDEN_WORKFLOW_STACK_TRACES: '0' })).toBe(false);
    expect(keepsStackTraces({ WARDEN_WORKFLOW_STACK_TRACES: '1' })).toBe(true);
    expect(keepsStackTraces({ WARDEN_WORKFLOW_STACK_TRACES: 'true' })).toBe(true);
    const kept = preloadModules({ WARDEN_WORKFLOW_STACK_TRACES: '1' });
    expect(kept).toHaveLength(2);
    expect(kept.some((m) => /stack-preload/.test(m))).toBe(false);
    expect(prebuiltBundlePath({ WARDEN_WORKFLOW_STACK_TRACES: '1' })).toBeNull();
    // An explicit bundle path still wins.
    expect(prebuiltBundlePath({ WARDEN_WORKFLOW_STACK_TRACES: '1', WARDEN_WORKFLOW_BUNDLE: '/srv/b.js' })).toBe('/srv/b.js');
  });
});
