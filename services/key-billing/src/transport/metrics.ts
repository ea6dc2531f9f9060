import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AppError } from '@whetstone/errors';

/** key-billing's Prometheus metrics. */
export interface KeyBillingMetrics {
  registry: Registry;
  /** Counts and times every RPC by method and outcome (reason for typed errors). */
  rpcInterceptor: Interceptor;
}

export function createMetrics(): KeyBillingMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const handled = new Counter({ name: 'key_billing_rpc_handled_total', help: 'RPCs handled, by method and outcome', labelNames: ['method', 'outcome'], registers: [registry] });
  const duration = new Histogram({
    name: 'key_billing_rpc_duration_seconds',
    help: 'RPC handling time',
    labelNames: ['method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });

  const rpcInterceptor: Interceptor = (next) => async (req) => {
    const method = req.method.name;
    const stop = duration.startTimer({ method });
    try {
      const res = await next(req);
      handled.inc({ method, outcome: 'ok' });
      return res;
    } catch (err) {
      // Reasons are a closed, low-cardinality set; anything else is counted by code.
      const outcome = err instanceof AppError ? err.reason : Code[ConnectError.from(err).code];
      handled.inc({ method, outcome: outcome ?? 'unknown' });
      throw err;
    } finally {
      stop();
    }
  };
  return { registry, rpcInterceptor };
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
