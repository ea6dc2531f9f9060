import type { RequestHandler } from 'express';
import { Histogram, type Registry } from 'prom-client';

/** Request duration by method, route template and status (never the raw path: unbounded labels). */
export function httpMetrics(registry: Registry): RequestHandler {
  const histogram = new Histogram({
    name: 'whetstone_gateway_http_request_duration_seconds',
    help: 'Gateway HTTP request duration',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  return (req, res, next) => {
    const end = histogram.startTimer();
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      end({
        method: req.method,
        route: typeof route === 'string' ? route : 'unmatched',
        status: String(res.statusCode),
      });
    });
    next();
  };
}
