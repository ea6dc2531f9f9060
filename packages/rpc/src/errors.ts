import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { anyPack, anyUnpack } from '@bufbuild/protobuf/wkt';
import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { AppError, Reasons, asDependencyUnavailable, type ErrorKind } from '@whetstone/errors';
import { type ErrorDetail, ErrorDetailSchema } from '@whetstone/proto/common/v1';
import { StatusSchema } from '@whetstone/proto/google/rpc';

/** Error kind → gRPC status code. The reason travels in the ErrorDetail. */
export const CODE_OF: Record<ErrorKind, GrpcStatus> = {
  InvalidArgument: GrpcStatus.INVALID_ARGUMENT,
  Malformed: GrpcStatus.INVALID_ARGUMENT,
  Unauthenticated: GrpcStatus.UNAUTHENTICATED,
  PermissionDenied: GrpcStatus.PERMISSION_DENIED,
  PaymentRequired: GrpcStatus.FAILED_PRECONDITION,
  NotFound: GrpcStatus.NOT_FOUND,
  AlreadyExists: GrpcStatus.ALREADY_EXISTS,
  FailedPrecondition: GrpcStatus.FAILED_PRECONDITION,
  PayloadTooLarge: GrpcStatus.RESOURCE_EXHAUSTED,
  TooEarly: GrpcStatus.UNAVAILABLE,
  ResourceExhausted: GrpcStatus.RESOURCE_EXHAUSTED,
  Unavailable: GrpcStatus.UNAVAILABLE,
  DeadlineExceeded: GrpcStatus.DEADLINE_EXCEEDED,
  Cancelled: GrpcStatus.CANCELLED,
  Internal: GrpcStatus.INTERNAL,
};

export const GENERIC_INTERNAL = 'Internal server error';
const DETAILS_KEY = 'grpc-status-details-bin';

/** The status name in snake case, for metric labels (`not_found`). */
export function codeName(code: GrpcStatus): string {
  return (GrpcStatus[code] ?? 'UNKNOWN').toLowerCase();
}

/** A typed error as the ErrorDetail it travels in (a gRPC status's detail, a stored batch result). */
export function errorDetailOf(err: AppError): ErrorDetail {
  return create(ErrorDetailSchema, {
    reason: err.reason,
    kind: err.kind,
    fieldViolations: err.fieldErrors.map((f) => ({ field: f.field, message: f.message, code: f.code ?? '' })),
    retryAfterSeconds: err.retryAfterSeconds ?? 0,
    metadata: err.metadata,
    retryable: err.retryable,
  });
}

/** The typed error an ErrorDetail and its message describe. */
export function appErrorOfDetail(detail: ErrorDetail, message: string): AppError {
  return AppError.fromJSON({
    kind: detail.kind,
    reason: detail.reason,
    message,
    fieldErrors: detail.fieldViolations.map((f) => ({
      field: f.field,
      message: f.message,
      ...(f.code ? { code: f.code } : {}),
    })),
    ...(detail.retryAfterSeconds ? { retryAfterSeconds: detail.retryAfterSeconds } : {}),
    metadata: { ...detail.metadata },
    retryable: detail.retryable,
  });
}

/**
 * Server side: an AppError becomes its status code plus a google.rpc.Status
 * carrying a whetstone.common.v1.ErrorDetail; a lost database connection becomes
 * UNAVAILABLE (asDependencyUnavailable); anything else becomes INTERNAL with a
 * generic message (the caller logs the cause, never sends it).
 */
export function toServiceError(thrown: unknown): Partial<ServiceError> & { code: GrpcStatus } {
  const err = asDependencyUnavailable(thrown) ?? thrown;
  if (!(err instanceof AppError) || err.kind === 'Internal')
    return { code: GrpcStatus.INTERNAL, details: GENERIC_INTERNAL };
  const code = CODE_OF[err.kind];
  const detail = errorDetailOf(err);
  const status = create(StatusSchema, { code, message: err.message, details: [anyPack(ErrorDetailSchema, detail)] });
  const metadata = new Metadata();
  metadata.set(DETAILS_KEY, Buffer.from(toBinary(StatusSchema, status)));
  return { code, details: err.message, metadata };
}

/** Read the typed error out of a failed call's trailers; null when it carries none. */
export function appErrorFromStatus(message: string, trailers: Metadata | undefined): AppError | null {
  const raw = trailers?.get(DETAILS_KEY)[0];
  if (!raw) return null;
  const status = fromBinary(StatusSchema, typeof raw === 'string' ? Buffer.from(raw, 'base64') : raw);
  for (const any of status.details) {
    const detail = anyUnpack(any, ErrorDetailSchema);
    if (!detail) continue;
    return appErrorOfDetail(detail, status.message || message);
  }
  return null;
}

/**
 * Client side: every failure becomes an AppError, so callers (the gateway)
 * render it with the one HTTP table. Untyped failures keep no remote text.
 */
export function toAppError(err: unknown, target: string): AppError {
  if (err instanceof AppError) return err;
  const e = err as Partial<ServiceError>;
  const typed = appErrorFromStatus(e.details ?? '', e.metadata);
  if (typed) return typed;
  if (e.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return new AppError('DeadlineExceeded', Reasons.DEPENDENCY_UNAVAILABLE, `${target} did not answer in time`, {
      cause: err,
    });
  }
  if (
    e.code === GrpcStatus.UNAVAILABLE ||
    e.code === GrpcStatus.CANCELLED ||
    e.code === GrpcStatus.ABORTED ||
    e.code === undefined
  ) {
    return new AppError('Unavailable', Reasons.DEPENDENCY_UNAVAILABLE, `${target} is temporarily unavailable`, {
      retryAfterSeconds: 1,
      cause: err,
    });
  }
  return new AppError('Internal', Reasons.INTERNAL, GENERIC_INTERNAL, { cause: err });
}
