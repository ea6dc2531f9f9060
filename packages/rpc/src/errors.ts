import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { AppError, Reasons, type ErrorKind } from '@whetstone/errors';
import { ErrorDetailSchema } from '@whetstone/proto';
import type { Logger } from '@whetstone/telemetry';

/** Error kind → gRPC status code. The reason travels in the ErrorDetail. */
export const CODE_OF: Record<ErrorKind, Code> = {
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

export const GENERIC_INTERNAL = 'Internal server error';

/** Server side: AppError → status + typed detail; anything else → INTERNAL, logged, never sent. */
export function serverErrorInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof AppError && err.kind !== 'Internal') throw toConnectError(err);
      // Connect's own typed errors (deadline, cancel, unimplemented) carry no private text.
      if (err instanceof ConnectError && err.code !== Code.Internal && err.code !== Code.Unknown) throw err;
      logger.error({ err, procedure: `${req.service.typeName}/${req.method.name}` }, 'unhandled error in RPC handler');
      throw new ConnectError(GENERIC_INTERNAL, Code.Internal);
    }
  };
}

export function toConnectError(err: AppError): ConnectError {
  const detail = create(ErrorDetailSchema, {
    reason: err.reason,
    kind: err.kind,
    fieldViolations: err.fieldErrors.map((f) => ({ field: f.field, message: f.message, code: f.code ?? '' })),
    retryAfterSeconds: err.retryAfterSeconds ?? 0,
    metadata: err.metadata,
  });
  return new ConnectError(err.message, CODE_OF[err.kind], undefined, [{ desc: ErrorDetailSchema, value: detail }]);
}

/** Read the typed error back out of a ConnectError; null when it carries none. */
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

/**
 * Client side: every failure becomes an AppError, so callers (the gateway)
 * render it with the one HTTP table. Untyped failures keep no remote text.
 */
export function toAppError(err: unknown, target: string): AppError {
  if (err instanceof AppError) return err;
  const typed = appErrorFromConnect(err);
  if (typed) return typed;
  const connectError = ConnectError.from(err);
  const code = connectError.code;
  if (code === Code.DeadlineExceeded) {
    return new AppError('DeadlineExceeded', Reasons.DEPENDENCY_UNAVAILABLE, `${target} did not answer in time`, { cause: err });
  }
  // Anything that did not come back from the server (refused, reset, DNS) is a transport failure.
  const fromServer = (connectError as { isWireError?: boolean }).isWireError === true;
  if (!fromServer || code === Code.Unavailable || code === Code.Canceled || code === Code.Aborted) {
    return new AppError('Unavailable', Reasons.DEPENDENCY_UNAVAILABLE, `${target} is temporarily unavailable`, { retryAfterSeconds: 1, cause: err });
  }
  return new AppError('Internal', Reasons.INTERNAL, GENERIC_INTERNAL, { cause: err });
}
