import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

// Shared packages that add their own metrics (the outbox's group commit) build them from these.
export { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** A gRPC service's Prometheus metrics: default process metrics plus RPC outcomes. */
export interface ServiceMetrics {
  registry: Registry;
  /** Counts every RPC by method and outcome (the reason of typed errors); pass to createRpcServer's onCall. */
  onCall: (call: { method: string; error?: unknown }) => void;
}

/** `service` prefixes the counter, e.g. `key_billing_rpc_handled_total`. */
export function createServiceMetrics(service: string): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const prefix = service.replace(/[^a-zA-Z0-9]/g, '_');
  const handled = new Counter({
    name: `${prefix}_rpc_handled_total`,
    help: 'RPCs handled, by method and outcome',
    labelNames: ['method', 'outcome'],
    registers: [registry],
  });
  // Durations by method and status code come from @whetstone/rpc's whetstone_rpc_server_duration_seconds.
  const onCall = (call: { method: string; error?: unknown }) => {
    // Typed errors carry a reason from a closed, low-cardinality set; anything else is counted as internal.
    const reason = (call.error as { reason?: unknown } | undefined)?.reason;
    const outcome = call.error === undefined ? 'ok' : typeof reason === 'string' ? reason : 'INTERNAL';
    handled.inc({ method: call.method, outcome });
  };
  return { registry, onCall };
}

/** Serve `GET /metrics` on `port` (0 picks a free one) at `host`: loopback only unless told (a pod passes 0.0.0.0). */
export async function startMetricsServer(
  registry: Registry,
  port: number,
  host = '127.0.0.1',
): Promise<{ port: number; address: string; close(): Promise<void> }> {
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
  const { port: bound, address } = server.address() as AddressInfo;
  return {
    port: bound,
    address,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
