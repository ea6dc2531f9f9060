import { ROOT_CONTEXT, context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createContextKey, type HandlerContext, type Interceptor } from '@connectrpc/connect';

export const CALLER_HEADER = 'x-whetstone-caller';
const callerKey = createContextKey<string>('', { description: 'calling service' });

// W3C trace context must flow even when no tracing SDK is configured; both calls are no-ops if an SDK set them first.
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** The name of the service that made this call (from `x-whetstone-caller`). */
export function callerOf(ctx: HandlerContext): string {
  return ctx.values.get(callerKey);
}

const getter = { get: (h: Headers, k: string) => h.get(k) ?? undefined, keys: (h: Headers) => [...h.keys()] };
const setter = { set: (h: Headers, k: string, v: string) => h.set(k, v) };

/** Server: adopt the caller's trace context and identity for the handler. */
export const serverContextInterceptor: Interceptor = (next) => async (req) => {
  req.contextValues.set(callerKey, req.header.get(CALLER_HEADER) ?? '');
  const parent = propagation.extract(ROOT_CONTEXT, req.header, getter);
  return context.with(parent, () => next(req));
};

/** Client: send our identity and the active trace context. */
export function clientContextInterceptor(caller: string): Interceptor {
  return (next) => async (req) => {
    req.header.set(CALLER_HEADER, caller);
    propagation.inject(context.active(), req.header, setter);
    return next(req);
  };
}

/** The active trace id, or '' (used in logs and tests). */
export function activeTraceId(): string {
  return trace.getSpanContext(context.active())?.traceId ?? '';
}
