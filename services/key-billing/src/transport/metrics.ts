import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { AppError } from '@whetstone/errors';

/** key-billing's Prometheus metrics. */
export interface KeyBillingMetrics {
  registry: Registry;
  /** Counts every RPC by method and outcome (the reason of typed errors); pass to createRpcServer's onCall. */
  onCall: (call: { method: string; error?: unknown }) => void;
}

export function createMetrics(): KeyBillingMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const handled = new Counter({ name: 'key_billing_rpc_handled_total', help: 'RPCs handled, by method and outcome', labelNames: ['method', 'outcome'], registers: [registry] });
  // Durations by method and status code come from @whetstone/rpc's whetstone_rpc_server_duration_seconds.
  const onCall = (call: { method: string; error?: unknown }) => {
    // Reasons are a closed, low-cardinality set; anything else is counted as internal.
    const outcome = call.error === undefined ? 'ok' : call.error instanceof AppError ? call.error.reason : 'INTERNAL';
    handled.inc({ method: call.method, outcome });
  };
  return { registry, onCall };
}

/** Serve `GET /metrics` on `port` (0 picks a free one). */
export async function startMetricsServer(registry: Registry, port: number, host = '0.0.0.0'): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
