/**
 * The OpenTelemetry context manager for Node: the active context follows async calls through
 * AsyncLocalStorage, so a span started inside an activity (the evaluator's model call) is the child
 * of the activity's span, and `trace.getActiveSpan()` finds it. What @opentelemetry/context-async-hooks
 * provides, in the few lines warden needs (functions only: warden binds no event emitters).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ROOT_CONTEXT,
  isSpanContextValid,
  trace,
  type Context,
  type ContextManager,
  type SpanContext,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from '@opentelemetry/api';

export class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';
const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;

/**
 * W3C Trace Context (`traceparent`, `tracestate`): how a span context crosses from the workflow to
 * its activities (the Temporal SDK's interceptors carry it in the activity's headers) and the
 * activity's span becomes the child of the workflow's. What @opentelemetry/core's
 * W3CTraceContextPropagator does, without its trace-state parsing (the state is passed on as is).
 */
export class TraceContextPropagator implements TextMapPropagator {
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    const sc = trace.getSpanContext(context);
    if (!sc || !isSpanContextValid(sc)) return;
    setter.set(carrier, TRACEPARENT, `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`);
    const state = sc.traceState?.serialize();
    if (state) setter.set(carrier, TRACESTATE, state);
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const one = (key: string) => {
      const v = getter.get(carrier, key);
      return Array.isArray(v) ? v.join(',') : v;
    };
    const m = VERSION_00.exec((one(TRACEPARENT) ?? '').trim());
    if (!m) return context;
    const sc: SpanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16), isRemote: true };
    if (!isSpanContextValid(sc)) return context;
    return trace.setSpanContext(context, sc);
  }

  fields(): string[] {
    return [TRACEPARENT, TRACESTATE];
  }
}
