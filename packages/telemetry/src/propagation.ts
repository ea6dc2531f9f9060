import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

let installed = false;

/**
 * W3C trace context must flow through gRPC calls and events even when no tracing SDK runs (tracing off), so log
 * lines of one request share its trace id: install the W3C propagator and an AsyncLocalStorage context manager.
 * Both are no-ops when an SDK registered its own first; @whetstone/rpc and @whetstone/events call this on load.
 */
export function ensureTraceContextPropagation(): void {
  if (installed) return;
  installed = true;
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}
