/**
 * warden's own OpenTelemetry: traces, metrics and log records over OTLP/HTTP, configured by the
 * standard environment variables (docs/operating/observability.md). Off unless an OTLP endpoint is
 * set: without one no SDK starts, no exporter exists, and every recording call is a no-op on the
 * API's own no-op providers.
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT               base URL for all three signals (…/v1/traces, …/v1/metrics, …/v1/logs)
 *   OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT   one signal's full URL (only that signal is exported)
 *   OTEL_EXPORTER_OTLP_HEADERS, …_TIMEOUT, …_COMPRESSION, …_CERTIFICATE   read by the exporters
 *   OTEL_SDK_DISABLED=true                    nothing starts, whatever else is set
 *   OTEL_{TRACES,METRICS,LOGS}_EXPORTER=none  leave one signal out
 *   OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES   the resource (service.name defaults to the process's role)
 *   OTEL_METRIC_EXPORT_INTERVAL, OTEL_BSP_SCHEDULE_DELAY, OTEL_BLRP_SCHEDULE_DELAY   export cadence (ms)
 *   WARDEN_OTEL_INCLUDE_TEXT=1                the operator opts in to text (reasons, whispers, notes) in telemetry
 */
import { context, logs, metrics, propagation, trace } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { AsyncLocalContextManager, TraceContextPropagator } from './context.js';

export type Signal = 'traces' | 'metrics' | 'logs';
const SIGNALS: readonly Signal[] = ['traces', 'metrics', 'logs'];

export interface OtelSettings {
  /** The signals to export (empty: telemetry is off). */
  signals: Signal[];
  /** WARDEN_OTEL_INCLUDE_TEXT: text written by agents, evaluators and humans may be exported. */
  includeText: boolean;
  metricIntervalMs: number;
  spanDelayMs: number;
  logDelayMs: number;
}

const set = (v: string | undefined): boolean => v !== undefined && v.trim() !== '';

function ms(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const v = env[name];
  if (!set(v)) return fallback;
  const n = Number(v);
  if (!/^\d+$/.test(String(v).trim()) || n <= 0) throw new Error(`${name} must be a positive whole number of milliseconds, got ${JSON.stringify(v)}`);
  return n;
}

/** What the environment asks for. Pure; throws naming a malformed variable. */
export function otelSettings(env: NodeJS.ProcessEnv = process.env): OtelSettings {
  const off = (env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true';
  const signals = off
    ? []
    : SIGNALS.filter((s) => {
        const S = s.toUpperCase();
        if ((env[`OTEL_${S}_EXPORTER`] ?? '').trim().toLowerCase() === 'none') return false;
        return set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env[`OTEL_EXPORTER_OTLP_${S}_ENDPOINT`]);
      });
  const protocol = (env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
  if (signals.length > 0 && protocol !== '' && protocol !== 'http/json' && protocol !== 'http/protobuf')
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL: warden exports OTLP over HTTP (http/json); ${JSON.stringify(protocol)} is not supported`);
  return {
    signals,
    includeText: env.WARDEN_OTEL_INCLUDE_TEXT === '1' || env.WARDEN_OTEL_INCLUDE_TEXT === 'true',
    metricIntervalMs: ms(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000),
    spanDelayMs: ms(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000),
    logDelayMs: ms(env, 'OTEL_BLRP_SCHEDULE_DELAY', 1_000),
  };
}

export interface OtelHandle {
  enabled: boolean;
  includeText: boolean;
  signals: Signal[];
  /**
   * Spans made elsewhere (the workflow interceptors' spans, rebuilt by src/telemetry/workflow-spans.ts)
   * handed to the trace export, and the resource they are to carry; null when traces are not exported.
   */
  spans: { resource: Resource; end(span: ReadableSpan): void } | null;
  /** Export what is buffered and stop the exporters (idempotent). */
  shutdown(): Promise<void>;
}

const OFF: OtelHandle = { enabled: false, includeText: false, signals: [], spans: null, shutdown: async () => {} };
let current: OtelHandle = OFF;

/** The process's telemetry: what startOtel installed, else off. */
export function otel(): OtelHandle {
  return current;
}

/**
 * Start the SDK for this process (`service` is service.name unless OTEL_SERVICE_NAME says
 * otherwise) and register it as the global provider of the OpenTelemetry API. Once per process:
 * later calls return the first handle. Without an endpoint, returns the off handle and starts
 * nothing: the SDK's modules are not even loaded (about 150 ms of a process's start).
 */
export async function startOtel(service: string, log?: Logger, env: NodeJS.ProcessEnv = process.env): Promise<OtelHandle> {
  if (current.enabled) return current;
  const cfg = otelSettings(env);
  if (cfg.signals.length === 0) return OFF;
  const [{ OTLPLogExporter }, { OTLPMetricExporter }, { OTLPTraceExporter }, res, logsSdk, metricsSdk, traceSdk, semconv] = await Promise.all([
    import('@opentelemetry/exporter-logs-otlp-http'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-logs'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  if (current.enabled) return current; // another call won the race
  const { detectResources, envDetector, resourceFromAttributes, serviceInstanceIdDetector } = res;
  const { BatchLogRecordProcessor, LoggerProvider } = logsSdk;
  const { MeterProvider, PeriodicExportingMetricReader } = metricsSdk;
  const { BatchSpanProcessor, TracerProvider } = traceSdk;
  const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = semconv;
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: service, [ATTR_SERVICE_VERSION]: wardenVersion() }).merge(
    detectResources({ detectors: [serviceInstanceIdDetector, envDetector] }),
  );
  const stops: Array<() => Promise<void>> = [];
  let spans: OtelHandle['spans'] = null;
  if (cfg.signals.includes('traces')) {
    const processor = new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), scheduledDelayMillis: cfg.spanDelayMs });
    const provider = new TracerProvider({ resource, spanProcessors: [processor] });
    spans = { resource, end: (span) => processor.onEnd(span) };
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(new AsyncLocalContextManager().enable());
    // The workflow's span context reaches its activities in their headers, as W3C trace context.
    propagation.setGlobalPropagator(new TraceContextPropagator());
    stops.push(() => provider.shutdown());
  }
  if (cfg.signals.includes('metrics')) {
    const provider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter(),
          exportIntervalMillis: cfg.metricIntervalMs,
          exportTimeoutMillis: Math.min(30_000, cfg.metricIntervalMs),
        }),
      ],
    });
    metrics.setGlobalMeterProvider(provider);
    stops.push(() => provider.shutdown());
  }
  if (cfg.signals.includes('logs')) {
    const provider = new LoggerProvider({
      resource,
      processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter(), scheduledDelayMillis: cfg.logDelayMs })],
    });
    logs.setGlobalLoggerProvider(provider);
    stops.push(() => provider.shutdown());
  }
  let stopping: Promise<void> | null = null;
  current = {
    enabled: true,
    includeText: cfg.includeText,
    signals: cfg.signals,
    spans,
    shutdown() {
      stopping ??= Promise.allSettled(stops.map((s) => s())).then((results) => {
        for (const r of results) if (r.status === 'rejected') log?.warn({ err: r.reason }, 'OpenTelemetry export at shutdown failed');
      });
      return stopping;
    },
  };
  log?.info({ signals: cfg.signals, includeText: cfg.includeText, service: resource.attributes[ATTR_SERVICE_NAME] }, 'OpenTelemetry export on');
  return current;
}

/** warden's version (its package.json, from dist/src/telemetry/ or src/telemetry/), for service.version. */
function wardenVersion(): string {
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'warden' && pkg.version) return pkg.version;
    } catch {
      /* not there: the other place */
    }
  }
  return 'unknown';
}
