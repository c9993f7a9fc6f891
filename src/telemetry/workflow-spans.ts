/**
 * The workflow's spans. The Temporal SDK's OpenTelemetry workflow interceptors (in the workflow
 * bundle when the worker exports traces: workers/bundle.ts) make their spans inside the workflow
 * sandbox with OpenTelemetry SDK 1.x and hand them, serialised, to the worker's `exporter` sink.
 * The SDK's own sink (`makeWorkflowExporter`) passes them on as 1.x span objects, which warden's
 * 3.x OTLP exporter cannot serialise: they name an `instrumentationLibrary` where 3.x reads an
 * `instrumentationScope`, a `parentSpanId` where it reads a `parentSpanContext`, and carry no
 * resource. Here each one is rebuilt as the span 3.x exports, with the worker's resource, and
 * handed to the same batch as the activities' spans.
 *
 * Attributes are the interceptors' own (`temporalUpdateId` …) plus the workflow's ids, as on an
 * activity's span (`temporalWorkflowId`, `run_id`); not the SDK sink's whole workflow info. An
 * error's message and stack (a span's status message, an `exception` event) can quote anything
 * the workflow failed on: exported only when the operator opts in to text.
 */
import type { Attributes, SpanContext } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { OpenTelemetrySinks, SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks } from '@temporalio/worker';
import { otel } from './otel.js';

const TEXT_EVENT_KEYS = ['exception.message', 'exception.stacktrace'];

/** One span from the workflow sandbox as the 3.x exporter takes it. Pure. */
export function workflowSpan(s: SerializableSpan, ids: { workflowId: string; runId: string }, resource: Resource, includeText: boolean): ReadableSpan {
  const { traceState: _traceState, ...ctx } = s.spanContext;
  const spanContext: SpanContext = { traceId: ctx.traceId, spanId: ctx.spanId, traceFlags: ctx.traceFlags, isRemote: ctx.isRemote };
  const parentSpanContext: SpanContext | undefined = s.parentSpanId
    ? { traceId: ctx.traceId, spanId: s.parentSpanId, traceFlags: ctx.traceFlags, isRemote: false }
    : undefined;
  const attributes: Attributes = { ...s.attributes, temporalWorkflowId: ids.workflowId, run_id: ids.runId };
  const events = s.events.map((e) =>
    includeText || !e.attributes ? e : { ...e, attributes: Object.fromEntries(Object.entries(e.attributes).filter(([k]) => !TEXT_EVENT_KEYS.includes(k))) },
  );
  const status = includeText || s.status.message === undefined ? s.status : { code: s.status.code };
  const lib = s.instrumentationLibrary;
  return {
    name: s.name,
    kind: s.kind,
    spanContext: () => spanContext,
    ...(parentSpanContext ? { parentSpanContext } : {}),
    startTime: s.startTime,
    endTime: s.endTime,
    status,
    attributes,
    links: s.links,
    events,
    duration: s.duration,
    ended: s.ended,
    resource,
    instrumentationScope: { name: lib?.name ?? '@temporalio/interceptor-workflow', version: lib?.version, schemaUrl: lib?.schemaUrl },
    droppedAttributesCount: s.droppedAttributesCount,
    droppedEventsCount: s.droppedEventsCount,
    droppedLinksCount: s.droppedLinksCount,
  };
}

/**
 * The `exporter` sink the workflow interceptors call: their spans go to the trace export. Never
 * called while a workflow replays (a replayed span was exported when it first ended); a no-op
 * when traces are not exported.
 */
export function workflowSpanSinks(): InjectedSinks<OpenTelemetrySinks> {
  return {
    exporter: {
      export: {
        fn: (info, spans) => {
          const t = otel();
          if (!t.spans) return;
          for (const s of spans) t.spans.end(workflowSpan(s, { workflowId: info.workflowId, runId: info.runId }, t.spans.resource, t.includeText));
        },
        callDuringReplay: false,
      },
    },
  };
}
