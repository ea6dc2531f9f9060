/**
 * key-billing's gRPC server on connect-node (HTTP/2, gRPC protocol).
 *
 * This is a local seam: @whetstone/rpc's `createRpcServer` had not landed when
 * this service was built. It keeps the contract that package is to own: typed
 * AppErrors cross the wire as a status code plus a `whetstone.common.v1.ErrorDetail`,
 * and anything else becomes INTERNAL with a generic message (the cause is logged,
 * never sent). Swap it for createRpcServer when that exists.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { AppError, type ErrorKind } from '@whetstone/errors';
import { ErrorDetailSchema } from '@whetstone/proto';
import type { Logger } from '@whetstone/telemetry';

const CODE_OF: Record<ErrorKind, Code> = {
  InvalidArgument: Code.InvalidArgument,
  Malformed: Code.InvalidArgument,
  Unauthenticated: Code.Unauthenticated,
  PermissionDenied: Code.PermissionDenied,
  PaymentRequired: Code.FailedPrecondition,
  NotFound: Code.NotFound,
  AlreadyExists: Code.AlreadyExists,
  FailedPrecondition: Code.FailedPrecondition,
  PayloadTooLarge: Code.ResourceExhausted,
  TooEarly: Code.Unavailable,
  ResourceExhausted: Code.ResourceExhausted,
  Unavailable: Code.Unavailable,
  DeadlineExceeded: Code.DeadlineExceeded,
  Cancelled: Code.Canceled,
  Internal: Code.Internal,
};

const GENERIC_INTERNAL = 'Internal server error';

/** AppError → ConnectError with the typed detail; unknown errors → INTERNAL, logged, not sent. */
export function errorInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof AppError && err.kind !== 'Internal') {
        const detail = create(ErrorDetailSchema, {
          reason: err.reason,
          kind: err.kind,
          fieldViolations: err.fieldErrors.map((f) => ({ field: f.field, message: f.message, code: f.code ?? '' })),
          retryAfterSeconds: err.retryAfterSeconds ?? 0,
          metadata: err.metadata,
        });
        throw new ConnectError(err.message, CODE_OF[err.kind], undefined, [{ desc: ErrorDetailSchema, value: detail }]);
      }
      if (err instanceof ConnectError && err.code !== Code.Internal && err.code !== Code.Unknown) throw err;
      logger.error({ err, procedure: req.method.name }, 'unhandled error in RPC handler');
      throw new ConnectError(GENERIC_INTERNAL, Code.Internal);
    }
  };
}

/** Read the typed error back out of a ConnectError (client side). */
export function appErrorFromConnect(err: unknown): AppError | null {
  const connectError = ConnectError.from(err);
  const [detail] = connectError.findDetails(ErrorDetailSchema);
  if (!detail) return null;
  return AppError.fromJSON({
    kind: detail.kind,
    reason: detail.reason,
    message: connectError.rawMessage,
    fieldErrors: detail.fieldViolations.map((f) => ({ field: f.field, message: f.message, ...(f.code ? { code: f.code } : {}) })),
    ...(detail.retryAfterSeconds ? { retryAfterSeconds: detail.retryAfterSeconds } : {}),
    metadata: { ...detail.metadata },
  });
}

export interface RunningRpcServer {
  port: number;
  /** Stop accepting calls, let in-flight calls finish, then close. */
  close(): Promise<void>;
}

/** Listen on `port` (0 picks a free one) and serve what `register` adds to the router. */
export async function startRpcServer(options: {
  port: number;
  host?: string;
  logger: Logger;
  register: (router: ConnectRouter) => void;
  /** Run inside the error mapping, so they see typed AppErrors. */
  interceptors?: Interceptor[];
}): Promise<RunningRpcServer> {
  const interceptors = [errorInterceptor(options.logger), ...(options.interceptors ?? [])];
  const handler = connectNodeAdapter({ routes: options.register, interceptors, grpcWeb: false });
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
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle client sessions would hold close() open forever; ask them to go away.
        for (const session of sessions) session.close();
      }),
  };
}
