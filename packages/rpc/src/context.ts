import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  createContextKey as otelKey,
  propagation,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { createContextKey, createContextValues, type HandlerContext } from '@connectrpc/connect';
import type { Metadata } from '@grpc/grpc-js';
import { ensureTraceContextPropagation } from '@whetstone/telemetry';

export const CALLER_HEADER = 'x-whetstone-caller';
const callerKey = createContextKey<string>('', { description: 'calling service' });

ensureTraceContextPropagation();

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

/** Outgoing trace headers of `ctx` (the active context by default). */
export function injectTrace(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

const tracer = trace.getTracer('@whetstone/rpc');

/**
 * A span for one RPC, named `package.Service/Method` with the OTel `rpc.*` attributes, and the context it is
 * active in. Without a tracing SDK the span is a no-op that still carries the parent's trace context.
 */
export function startRpcSpan(
  kind: 'client' | 'server',
  service: string,
  method: string,
  parent: Context = context.active(),
): { span: Span; ctx: Context } {
  const span = tracer.startSpan(
    `${service}/${method}`,
    {
      kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.SERVER,
      attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method },
    },
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span) };
}

/** End an RPC span with its gRPC status code (0 is OK; any other is an error, as OTel's semantic conventions say). */
export function endRpcSpan(span: Span, code: number): void {
  span.setAttribute('rpc.grpc.status_code', code);
  if (code !== 0) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** The active trace id, or '' (used in logs and tests). */
export function activeTraceId(): string {
  return trace.getSpanContext(context.active())?.traceId ?? '';
}
