/**
 * The OpenTelemetry context manager for Node: the active context follows async calls through
 * AsyncLocalStorage, so a span started inside an activity (the evaluator's model call) is the child
 * of the activity's span, and `trace.getActiveSpan()` finds it. What @opentelemetry/context-async-hooks
 * provides, in the few lines warden needs (functions only: warden binds no event emitters).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

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
