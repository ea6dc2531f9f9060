import {
  ROOT_CONTEXT,
  context,
  createContextKey as otelKey,
  propagation,
  trace,
  type Context,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createContextKey, createContextValues, type HandlerContext } from '@connectrpc/connect';
import type { Metadata } from '@grpc/grpc-js';

export const CALLER_HEADER = 'x-whetstone-caller';
const callerKey = createContextKey<string>('', { description: 'calling service' });

// W3C trace context must flow even when no tracing SDK is configured; both calls are no-ops if an SDK set them first.
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** The name of the service that made this call (from `x-whetstone-caller`). */
export function callerOf(ctx: HandlerContext): string {
  return ctx.values.get(callerKey);
}

/** Incoming gRPC metadata as Fetch Headers (text entries only), for handlers and propagation. */
export function headersOf(metadata: Metadata): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string' && !key.endsWith('-bin')) headers.set(key, value);
  }
  return headers;
}

/** Context values every handler sees: the caller's identity. */
export function contextValuesFor(headers: Headers) {
  return createContextValues().set(callerKey, headers.get(CALLER_HEADER) ?? '');
}

const DEADLINE = otelKey('whetstone.rpc.deadline');

/**
 * The context a server handler runs in: the caller's trace, if it sent one,
 * and the call's deadline, so calls the handler makes inherit what is left of it.
 */
export function handlerOtelContext(headers: Headers, deadlineMs: number | undefined): Context {
  const ctx = propagation.extract(ROOT_CONTEXT, headers, {
    get: (h, k) => h.get(k) ?? undefined,
    keys: (h) => [...h.keys()],
  });
  return deadlineMs === undefined ? ctx : ctx.setValue(DEADLINE, deadlineMs);
}

/** The deadline (epoch ms) of the inbound call being handled, if any. */
export function inboundDeadline(): number | undefined {
  return context.active().getValue(DEADLINE) as number | undefined;
}

/** Outgoing trace headers of the active context. */
export function injectTrace(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The active trace id, or '' (used in logs and tests). */
export function activeTraceId(): string {
  return trace.getSpanContext(context.active())?.traceId ?? '';
}
