/**
 * The workflow's spans (src/telemetry/workflow-spans.ts): a span the Temporal SDK's workflow
 * interceptors serialise in the sandbox (OpenTelemetry SDK 1.x fields) is rebuilt as a span the
 * 3.x OTLP serializer takes (the one warden's exporter uses), parent and scope kept; error text
 * only when the operator opts in. And the W3C trace context that carries the workflow's span to
 * its activities (src/telemetry/context.ts).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import { describe, expect, it } from 'vitest';
import { TraceContextPropagator } from '../../src/telemetry/context.js';
import { workflowSpan } from '../../src/telemetry/workflow-spans.js';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const serialised = (over: Partial<SerializableSpan> = {}): SerializableSpan => ({
  name: 'StartActivity:evaluate',
  kind: SpanKind.INTERNAL,
  spanContext: { traceId: TRACE, spanId: 'b7ad6b7169203331', traceFlags: 1, traceState: undefined },
  parentSpanId: '00f067aa0ba902b7',
  startTime: [1_700_000_000, 5],
  endTime: [1_700_000_001, 7],
  status: { code: SpanStatusCode.ERROR, message: 'the agent wrote SECRET-1' },
  attributes: { temporalUpdateId: 'u1' },
  links: [],
  events: [
    { name: 'exception', time: [1_700_000_001, 0], attributes: { 'exception.type': 'Error', 'exception.message': 'SECRET-2', 'exception.stacktrace': 'at x' } },
  ],
  duration: [1, 2],
  ended: true,
  droppedAttributesCount: 0,
  droppedLinksCount: 0,
  droppedEventsCount: 0,
  instrumentationLibrary: { name: '@temporalio/interceptor-workflow', version: undefined },
  ...over,
});
const resource = resourceFromAttributes({ 'service.name': 'warden-worker' });
const ids = { workflowId: 'agent-a1', runId: 'r-1' };
const json = (spans: unknown[]) => {
  const body = JsonTraceSerializer.serializeRequest(spans as never);
  return JSON.parse(new TextDecoder().decode(body)) as {
    resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ scope: { name: string }; spans: Array<Record<string, unknown>> }> }>;
  };
};

describe('workflowSpan', () => {
  it('the serialised 1.x span as the SDK sink passed it on cannot be serialised by the 3.x exporter', () => {
    expect(() => json([{ ...serialised(), spanContext: () => serialised().spanContext, resource }])).toThrow();
  });

  it('rebuilt: the 3.x serializer takes it, with its parent, scope, resource and the workflow ids', () => {
    const out = json([workflowSpan(serialised(), ids, resource, false)]);
    const scope = out.resourceSpans[0]!.scopeSpans[0]!;
    expect(scope.scope.name).toBe('@temporalio/interceptor-workflow');
    const span = scope.spans[0]!;
    expect(span).toMatchObject({ traceId: TRACE, spanId: 'b7ad6b7169203331', parentSpanId: '00f067aa0ba902b7', name: 'StartActivity:evaluate' });
    expect(JSON.stringify(span.attributes)).toContain('agent-a1');
    expect(JSON.stringify(out.resourceSpans[0]!.resource)).toContain('warden-worker');
  });

  it("a root span has no parent; an error's text only when the operator opts in", () => {
    const root = workflowSpan(serialised({ parentSpanId: undefined }), ids, resource, false);
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(JSON.stringify(root.events)).not.toContain('SECRET');
    expect(root.events[0]!.attributes).toEqual({ 'exception.type': 'Error' });
    const withText = workflowSpan(serialised(), ids, resource, true);
    expect(withText.status.message).toBe('the agent wrote SECRET-1');
    expect(JSON.stringify(withText.events)).toContain('SECRET-2');
  });
});

describe('TraceContextPropagator', () => {
  const p = new TraceContextPropagator();
  it('injects and extracts traceparent', () => {
    const ctx = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: 'b7ad6b7169203331', traceFlags: 1 });
    const carrier: Record<string, string> = {};
    p.inject(ctx, carrier, defaultTextMapSetter);
    expect(carrier).toEqual({ traceparent: `00-${TRACE}-b7ad6b7169203331-01` });
    expect(trace.getSpanContext(p.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter))).toEqual({
      traceId: TRACE,
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
      isRemote: true,
    });
  });

  it('a malformed or absent traceparent leaves the context alone', () => {
    for (const traceparent of ['', 'garbage', `00-${'0'.repeat(32)}-b7ad6b7169203331-01`, `00-${TRACE}-xyz-01`])
      expect(p.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter)).toBe(ROOT_CONTEXT);
    expect(p.extract(ROOT_CONTEXT, {}, defaultTextMapGetter)).toBe(ROOT_CONTEXT);
  });
});
