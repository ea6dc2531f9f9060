/** grpc-js handlers for protobuf-es service methods: context, deadlines, tracing, metrics and error mapping. */
import { create, type DescMethod, type DescService } from '@bufbuild/protobuf';
import { context } from '@opentelemetry/api';
import { createHandlerContext, type HandlerContext } from '@connectrpc/connect';
import * as grpc from '@grpc/grpc-js';
import type { Histogram } from 'prom-client';
import { AppError, asDependencyUnavailable } from '@whetstone/errors';
import type { Logger } from '@whetstone/telemetry';
import { contextValuesFor, endRpcSpan, handlerOtelContext, headersOf, startRpcSpan } from './context';
import { CODE_OF, codeName, toServiceError } from './errors';

const HEALTH_SERVICE = 'grpc.health.v1.Health';

type AnyCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;

/** A generated service's implementation of one method, bound to its implementation object. */
export type MethodImpl = (req: unknown, ctx: HandlerContext) => unknown;

/** What every handler of one server shares. */
export interface HandlerDeps {
  logger: Logger;
  histogram: Histogram<'service' | 'method' | 'code'>;
  onCall?: ((call: { service: string; method: string; seconds: number; error?: unknown }) => void) | undefined;
}

function deadlineOf(call: AnyCall): number | undefined {
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The handler's context: its signal aborts when the client cancels or the deadline passes. The deadline timer is ours
 * (not Connect's, which is only cleared by aborting the signal) so that `done()` clears it when the handler ends: a
 * finished call must not keep its process alive until the deadline.
 */
function handlerContext(
  service: DescService,
  method: DescMethod,
  call: AnyCall,
): { ctx: HandlerContext; done(): void } {
  const requestHeader = headersOf(call.metadata);
  const deadlineMs = deadlineOf(call) ?? Number.NaN;
  const abort = new AbortController();
  call.once('cancelled', () => abort.abort(new Error('cancelled by the client')));
  const timer = Number.isFinite(deadlineMs)
    ? setTimeout(() => abort.abort(new Error('deadline exceeded')), Math.max(0, deadlineMs - Date.now()))
    : undefined;
  const ctx = createHandlerContext({
    service,
    method,
    protocolName: 'grpc',
    requestMethod: 'POST',
    url: `/${service.typeName}/${method.name}`,
    requestSignal: abort.signal,
    requestHeader,
    contextValues: contextValuesFor(requestHeader),
  });
  const timeoutMs = () => (Number.isFinite(deadlineMs) ? Math.max(0, deadlineMs - Date.now()) : undefined);
  return { ctx: Object.assign(ctx, { timeoutMs }), done: () => clearTimeout(timer) };
}

/**
 * Runs `work` inside a server span that continues the caller's trace, with the call's deadline; `work` resolves
 * to the gRPC status code the call ended with.
 */
function inCallContext(
  service: DescService,
  method: DescMethod,
  ctx: HandlerContext,
  call: AnyCall,
  work: () => Promise<number>,
): void {
  const parent = handlerOtelContext(ctx.requestHeader, deadlineOf(call));
  // Health probes arrive every few seconds from Kubernetes and the gateway: not worth a trace each.
  if (service.typeName === HEALTH_SERVICE) {
    void context.with(parent, work);
    return;
  }
  const { span, ctx: traced } = startRpcSpan('server', service.typeName, method.name, parent);
  void context.with(traced, work).then((code) => endRpcSpan(span, code));
}

/** The status sent for an error; unexpected errors are logged here with their cause (the client gets no detail). */
function fail(deps: HandlerDeps, service: DescService, method: DescMethod, err: unknown): grpc.ServerErrorResponse {
  const procedure = `${service.typeName}/${method.name}`;
  if (asDependencyUnavailable(err)) deps.logger.warn({ err, procedure }, 'a dependency is unavailable');
  else if (!(err instanceof AppError) || err.kind === 'Internal')
    deps.logger.error({ err, procedure }, 'unhandled error in RPC handler');
  return toServiceError(err) as grpc.ServerErrorResponse;
}

function statusCodeOf(err: unknown): grpc.status {
  const typed = err instanceof AppError ? err : asDependencyUnavailable(err);
  return typed ? CODE_OF[typed.kind] : grpc.status.INTERNAL;
}

export function unaryHandler(deps: HandlerDeps, service: DescService, method: DescMethod, fn: MethodImpl) {
  const labels = { service: service.typeName, method: method.name };
  return (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    const end = deps.histogram.startTimer(labels);
    const { ctx, done } = handlerContext(service, method, call);
    inCallContext(service, method, ctx, call, async () => {
      try {
        const res = await fn(call.request, ctx);
        const seconds = end({ code: 'ok' });
        deps.onCall?.({ ...labels, seconds });
        callback(null, res);
        return grpc.status.OK;
      } catch (err) {
        const code = statusCodeOf(err);
        const seconds = end({ code: codeName(code) });
        deps.onCall?.({ ...labels, seconds, error: err });
        callback(fail(deps, service, method, err));
        return code;
      } finally {
        done();
      }
    });
  };
}

export function serverStreamingHandler(deps: HandlerDeps, service: DescService, method: DescMethod, fn: MethodImpl) {
  const labels = { service: service.typeName, method: method.name };
  return (call: grpc.ServerWritableStream<unknown, unknown>) => {
    const end = deps.histogram.startTimer(labels);
    const { ctx, done } = handlerContext(service, method, call);
    inCallContext(service, method, ctx, call, async () => {
      try {
        for await (const res of fn(call.request, ctx) as AsyncIterable<unknown>) {
          if (call.cancelled) break;
          call.write(create(method.output, res as never));
        }
        // Measured like a unary call, to its last message (or to the client's cancel).
        const seconds = end({ code: call.cancelled ? 'cancelled' : 'ok' });
        deps.onCall?.({ ...labels, seconds });
        if (call.cancelled) return grpc.status.CANCELLED;
        call.end();
        return grpc.status.OK;
      } catch (err) {
        const code = statusCodeOf(err);
        const seconds = end({ code: codeName(code) });
        deps.onCall?.({ ...labels, seconds, error: err });
        // 'error' (not destroy) lets grpc-js end the stream with this status and its details.
        if (!call.cancelled)
          call.emit('error', Object.assign(new Error('rpc failed'), fail(deps, service, method, err)));
        return code;
      } finally {
        done();
      }
    });
  };
}
