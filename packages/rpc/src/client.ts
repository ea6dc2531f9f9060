import type { DescService } from '@bufbuild/protobuf';
import type { CallOptions, Client } from '@connectrpc/connect';
import type { Context } from '@opentelemetry/api';
import * as grpc from '@grpc/grpc-js';
import { Health, HealthCheckResponse_ServingStatus as Status } from '@whetstone/proto/grpc/health/v1';
import type { Logger } from '@whetstone/telemetry';
import { methodDefinition } from './codec';
import { CALLER_HEADER, endRpcSpan, inboundDeadline, injectTrace, startRpcSpan } from './context';
import { toAppError } from './errors';

export interface RpcClientOptions {
  /**
   * Where the service is: `host:port` (one connection, to whatever the name resolves to first), or a gRPC target
   * URI that balances round-robin over every address it names: `dns:///host:port` (every A/AAAA record,
   * re-resolved when a connection closes, e.g. a Kubernetes headless Service), or `ipv4:a:p,b:q` (a fixed list).
   */
  addr: string;
  /** Our own service name, sent as `x-whetstone-caller`. */
  caller: string;
  /** Default deadline of each call; a call may pass its own `timeoutMs`. */
  timeoutMs?: number;
  /** Extra metadata on every call (e.g. the operator CLI's admin token). Never logged. */
  headers?: Record<string, string>;
  logger?: Logger;
}

/** One HTTP/2 channel per address, shared by every client of that address in this process. */
const channels = new Map<string, grpc.Client>();

/** A gRPC target URI (`dns:///…`, `ipv4:…`, `ipv6:…`, `unix:…`), as opposed to a plain `host:port`. */
export function isTargetUri(addr: string): boolean {
  return /^(dns|ipv4|ipv6|unix|unix-abstract):/.test(addr);
}

/**
 * Channel options of a target URI: round_robin over every resolved address, so each replica behind a headless
 * Service gets its share of calls (pick_first, grpc-js's default, sends everything to one), and DNS asked again
 * at most every 5 s when a connection drops (servers close connections past `maxConnectionAgeMs`, see the
 * server factory, which is when added replicas are found).
 */
export const BALANCED_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  'grpc.dns_min_time_between_resolutions_ms': 5_000,
};

function channelFor(addr: string): grpc.Client {
  let channel = channels.get(addr);
  if (!channel) {
    channel = new grpc.Client(addr, grpc.credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 30_000,
      // A restarted service is called again within about a second of listening: grpc-js's default
      // reconnect backoff grows to 120 s, which left callers failing fast long after it was back.
      'grpc.initial_reconnect_backoff_ms': 250,
      'grpc.max_reconnect_backoff_ms': 1_000,
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
      ...(isTargetUri(addr) ? BALANCED_CHANNEL_OPTIONS : {}),
    });
    channels.set(addr, channel);
  }
  return channel;
}

/** Close every cached channel (tests and shutdown). */
export function closeRpcChannels(): void {
  for (const channel of channels.values()) channel.close();
  channels.clear();
}

/**
 * THE gRPC client factory. Same shape as a Connect `Client<T>` (generated
 * protobuf-es types), on grpc-js underneath. Calls reject with AppError (typed
 * errors survive the hop; transport failures become Unavailable), carry the
 * trace context and caller identity, and have a default deadline.
 */
export function createRpcClient<T extends DescService>(service: T, options: RpcClientOptions): Client<T> {
  const channel = channelFor(options.addr);
  const target = service.name;
  const client: Record<string, unknown> = {};

  const metadataFor = (traceContext: Context, call?: CallOptions) => {
    const metadata = new grpc.Metadata();
    metadata.set(CALLER_HEADER, options.caller);
    for (const [k, v] of Object.entries(injectTrace(traceContext))) metadata.set(k, v);
    for (const [k, v] of Object.entries(options.headers ?? {})) metadata.set(k, v);
    if (call?.headers) for (const [k, v] of new Headers(call.headers)) metadata.set(k, v);
    return metadata;
  };
  // A call made while handling another never outlives the inbound call's deadline.
  const deadlineFor = (call?: CallOptions) => ({
    deadline: Math.min(
      Date.now() + (call?.timeoutMs ?? options.timeoutMs ?? 5_000),
      inboundDeadline() ?? Number.POSITIVE_INFINITY,
    ),
  });

  for (const method of service.methods) {
    const def = methodDefinition(method);
    if (method.methodKind === 'unary') {
      client[method.localName] = (request: unknown, call?: CallOptions) =>
        new Promise((resolve, reject) => {
          const { span, ctx } = startRpcSpan('client', service.typeName, method.name);
          const pending = channel.makeUnaryRequest(
            def.path,
            def.requestSerialize,
            def.responseDeserialize,
            request,
            metadataFor(ctx, call),
            deadlineFor(call),
            (err, res) => {
              endRpcSpan(span, err?.code ?? 0);
              if (err) reject(toAppError(err, target));
              else resolve(res);
            },
          );
          call?.signal?.addEventListener('abort', () => pending.cancel(), { once: true });
        });
    } else if (method.methodKind === 'server_streaming') {
      client[method.localName] = (request: unknown, call?: CallOptions) =>
        (async function* () {
          const { span, ctx } = startRpcSpan('client', service.typeName, method.name);
          const stream = channel.makeServerStreamRequest(
            def.path,
            def.requestSerialize,
            def.responseDeserialize,
            request,
            metadataFor(ctx, call),
            deadlineFor(call),
          );
          call?.signal?.addEventListener('abort', () => stream.cancel(), { once: true });
          let code = grpc.status.CANCELLED; // unless it ends or fails below: the consumer stopped early
          try {
            for await (const message of stream) yield message;
            code = grpc.status.OK;
          } catch (err) {
            code = (err as { code?: number }).code ?? grpc.status.UNKNOWN;
            throw toAppError(err, target);
          } finally {
            endRpcSpan(span, code);
          }
        })();
    }
  }
  return client as Client<T>;
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
