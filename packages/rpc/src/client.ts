import type { DescService } from '@bufbuild/protobuf';
import { createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Health, HealthCheckResponse_ServingStatus as Status } from '@whetstone/proto/src/gen/grpc/health/v1/health_pb';
import type { Logger } from '@whetstone/telemetry';
import { clientContextInterceptor } from './context';
import { toAppError } from './errors';

export interface RpcClientOptions {
  /** `host:port` of the service. */
  addr: string;
  /** Our own service name, sent as `x-whetstone-caller`. */
  caller: string;
  /** Default deadline of each call; a call may pass its own `timeoutMs`. */
  timeoutMs?: number;
  logger?: Logger;
  interceptors?: Interceptor[];
}

/** One HTTP/2 connection per address, shared by every client of that address in this process. */
const transports = new Map<string, ReturnType<typeof createGrpcTransport>>();

function transportFor(options: RpcClientOptions) {
  const key = `${options.addr}|${options.caller}|${options.timeoutMs ?? 5000}|${options.interceptors?.length ?? 0}`;
  let transport = transports.get(key);
  if (!transport) {
    transport = createGrpcTransport({
      baseUrl: `http://${options.addr}`,
      defaultTimeoutMs: options.timeoutMs ?? 5_000,
      interceptors: [clientContextInterceptor(options.caller), ...(options.interceptors ?? [])],
      pingIntervalMs: 30_000,
    });
    if (!options.interceptors?.length) transports.set(key, transport);
  }
  return transport;
}

/**
 * THE gRPC client factory. Calls reject with AppError (typed errors survive
 * the hop; transport failures become Unavailable), carry the trace context
 * and caller identity, and have a default deadline.
 */
export function createRpcClient<T extends DescService>(service: T, options: RpcClientOptions): Client<T> {
  const client = createClient(service, transportFor(options)) as Record<string, (...args: unknown[]) => unknown>;
  const target = service.typeName.split('.').pop() ?? options.addr;
  // Connect re-wraps whatever an interceptor throws, so typed errors are restored here, per method.
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(client)) {
    wrapped[name] = (...args: unknown[]) => {
      const result = method(...args);
      if (result instanceof Promise) return result.catch((err: unknown) => Promise.reject(toAppError(err, target)));
      return rethrowing(result as AsyncIterable<unknown>, target);
    };
  }
  return wrapped as Client<T>;
}

async function* rethrowing<T>(stream: AsyncIterable<T>, target: string): AsyncIterable<T> {
  try {
    yield* stream;
  } catch (err) {
    throw toAppError(err, target);
  }
}

/** grpc.health.v1 against a service; `check()` is false rather than throwing. */
export function createHealthChecker(options: RpcClientOptions): { check(service?: string): Promise<boolean> } {
  const client = createRpcClient(Health, { timeoutMs: 1_000, ...options });
  return {
    async check(service = '') {
      try {
        const res = await client.check({ service });
        return res.status === Status.SERVING;
      } catch {
        return false;
      }
    },
  };
}
