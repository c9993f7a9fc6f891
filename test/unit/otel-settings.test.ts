/**
 * OpenTelemetry's configuration from the standard environment (src/telemetry/otel.ts): off unless
 * an OTLP endpoint is set, and then nothing is started; each signal on its own endpoint; the
 * switches that turn it off; a malformed value named.
 */
import { metrics, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { otel, otelSettings, startOtel } from '../../src/telemetry/otel.js';
import { recordAgentEvent, recordEvaluation } from '../../src/telemetry/record.js';

describe('otelSettings', () => {
  it('off without an endpoint', () => {
    expect(otelSettings({}).signals).toEqual([]);
    expect(otelSettings({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }).signals).toEqual([]);
  });

  it('all three signals on the common endpoint; one signal on its own', () => {
    expect(otelSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).signals).toEqual(['traces', 'metrics', 'logs']);
    expect(otelSettings({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:4318/v1/metrics' }).signals).toEqual(['metrics']);
  });

  it('OTEL_SDK_DISABLED and OTEL_<SIGNAL>_EXPORTER=none turn it off', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(otelSettings({ ...on, OTEL_SDK_DISABLED: 'true' }).signals).toEqual([]);
    expect(otelSettings({ ...on, OTEL_TRACES_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' }).signals).toEqual(['metrics']);
  });

  it('text only when the operator opts in; export cadences from the environment', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(otelSettings(on)).toMatchObject({ includeText: false, metricIntervalMs: 60_000, spanDelayMs: 5_000, logDelayMs: 1_000 });
    expect(otelSettings({ ...on, WARDEN_OTEL_INCLUDE_TEXT: '1', OTEL_METRIC_EXPORT_INTERVAL: '2500' })).toMatchObject({
      includeText: true,
      metricIntervalMs: 2500,
    });
  });

  it('names a malformed variable', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(() => otelSettings({ ...on, OTEL_METRIC_EXPORT_INTERVAL: '5s' })).toThrow(
      /OTEL_METRIC_EXPORT_INTERVAL must be a positive whole number of milliseconds, got "5s"/,
    );
    expect(() => otelSettings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: .*"grpc" is not supported/);
  });
});

describe('off', () => {
  it('starts nothing: no global provider, and recording is a no-op', async () => {
    const handle = await startOtel('warden-test', undefined, {});
    expect(handle.enabled).toBe(false);
    expect(otel().enabled).toBe(false);
    // The API's own no-op providers stay in place.
    expect(trace.getTracer('x').startSpan('s').isRecording()).toBe(false);
    expect(metrics.getMeterProvider().constructor.name).toBe('NoopMeterProvider');
    recordAgentEvent({ workflowId: 'agent-a', runId: 'r' }, { name: 'warden.test', attrs: {} });
    recordEvaluation(
      { agentId: 'a', task: 't', turns: [], reason: 'interval', evaluator: { kind: 'heuristic' }, model: 'm', timeoutMs: 1000 },
      { kind: 'skipped', reason: 'x', evaluator: 'heuristic', durationMs: 1 },
    );
    expect(metrics.getMeterProvider().constructor.name).toBe('NoopMeterProvider');
  });
});
