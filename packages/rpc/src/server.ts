import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { Histogram, register as defaultRegistry, type Registry } from 'prom-client';
import { Health, HealthCheckResponse_ServingStatus as Status, HealthCheckResponseSchema } from '@whetstone/proto/src/gen/grpc/health/v1/health_pb';
import type { Logger } from '@whetstone/telemetry';
import { serverContextInterceptor } from './context';
import { CODE_OF, serverErrorInterceptor } from './errors';
import { AppError } from '@whetstone/errors';

const snake = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();

export interface RpcServerOptions {
  /** Service name, for logs, metrics and the health check. */
  name: string;
  /** 0 picks a free port; `server.port` tells which. */
  port: number;
  /** Defaults to 0.0.0.0 (all interfaces), as a pod needs. */
  host?: string;
  logger: Logger;
  register: (router: ConnectRouter) => void;
  /** Extra interceptors; they run inside error mapping, so they see typed AppErrors. */
  interceptors?: Interceptor[];
  /** Where per-RPC metrics go; the process-wide prom-client registry by default. */
  metrics?: Registry;
}

export interface RpcServer {
  port: number;
  /** Flip grpc.health.v1 between SERVING and NOT_SERVING (e.g. while draining). */
  setServing(serving: boolean): void;
  /** Report NOT_SERVING, stop accepting calls, let in-flight calls finish, then close. */
  close(): Promise<void>;
}

const histograms = new WeakMap<Registry, Histogram<'service' | 'method' | 'code'>>();

function rpcHistogram(registry: Registry): Histogram<'service' | 'method' | 'code'> {
  let h = histograms.get(registry);
  if (!h) {
    h = new Histogram({
      name: 'whetstone_rpc_server_duration_seconds',
      help: 'Server-side gRPC call duration',
      labelNames: ['service', 'method', 'code'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    });
    histograms.set(registry, h);
  }
  return h;
}

function metricsInterceptor(registry: Registry): Interceptor {
  const histogram = rpcHistogram(registry);
  return (next) => async (req) => {
    const end = histogram.startTimer({ service: req.service.typeName, method: req.method.name });
    try {
      const res = await next(req);
      end({ code: 'ok' });
      return res;
    } catch (err) {
      const code = err instanceof AppError ? CODE_OF[err.kind] : ConnectError.from(err).code;
      end({ code: snake(Code[code] ?? 'unknown') });
      throw err;
    }
  };
}

/**
 * THE gRPC server factory: Connect for Node over cleartext HTTP/2, speaking
 * the gRPC protocol (plain grpc-js clients interoperate), with error mapping,
 * trace context, caller identity, per-RPC metrics and grpc.health.v1.
 */
export async function createRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  let status = Status.SERVING;
  const watchers = new Set<() => void>();
  const interceptors = [
    serverErrorInterceptor(options.logger),
    metricsInterceptor(options.metrics ?? defaultRegistry),
    serverContextInterceptor,
    ...(options.interceptors ?? []),
  ];
  const routes = (router: ConnectRouter) => {
    router.service(Health, {
      check: () => create(HealthCheckResponseSchema, { status }),
      async *watch(_req, ctx) {
        let last: Status | undefined;
        while (!ctx.signal.aborted) {
          if (status !== last) {
            last = status;
            yield create(HealthCheckResponseSchema, { status });
          }
          await new Promise<void>((resolve) => {
            watchers.add(resolve);
            ctx.signal.addEventListener('abort', () => resolve(), { once: true });
          });
        }
      },
    });
    options.register(router);
  };
  const handler = connectNodeAdapter({ routes, interceptors, grpcWeb: false });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.debug({ service: options.name, port }, 'rpc server listening');

  const setServing = (serving: boolean) => {
    status = serving ? Status.SERVING : Status.NOT_SERVING;
    for (const wake of watchers) wake();
    watchers.clear();
  };
  return {
    port,
    setServing,
    close: () =>
      new Promise<void>((resolve) => {
        setServing(false);
        server.close(() => resolve());
        // Idle client sessions would hold close() open forever; ask them to go away (in-flight streams finish).
        for (const session of sessions) session.close();
      }),
  };
}
