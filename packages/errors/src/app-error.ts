/**
 * The closed set of error kinds. Every layer speaks these; transports map them
 * (gRPC codes in @whetstone/rpc, HTTP statuses and envelopes in ./http-table).
 */
export const ERROR_KINDS = [
  'InvalidArgument',
  'Malformed',
  'Unauthenticated',
  'PermissionDenied',
  'PaymentRequired',
  'NotFound',
  'AlreadyExists',
  'FailedPrecondition',
  'PayloadTooLarge',
  'TooEarly',
  'ResourceExhausted',
  'Unavailable',
  'DeadlineExceeded',
  'Cancelled',
  'Internal',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** One field-level validation problem, as carried in 422 `errors` arrays. */
export interface FieldError {
  /** Dotted path of the offending field, e.g. `datasets.0.name`. */
  field: string;
  /** What is wrong with it, for a human. */
  message: string;
  /** Stable machine code, e.g. `required`, `too_small`. */
  code?: string;
}

export interface AppErrorOptions {
  fieldErrors?: FieldError[];
  /** Seconds after which a retry may succeed (429, 425, 503). */
  retryAfterSeconds?: number;
  /** Small string map for the envelope, e.g. the rate-limit scope. Never secrets. */
  metadata?: Record<string, string>;
  /** Whether the same request may succeed later; defaults by kind (see RETRYABLE_KINDS). */
  retryable?: boolean;
  cause?: unknown;
}

/** Kinds whose failures may pass if the same work is tried again later (infrastructure, not the request). */
export const RETRYABLE_KINDS: ReadonlySet<ErrorKind> = new Set([
  'Unavailable',
  'DeadlineExceeded',
  'ResourceExhausted',
  'TooEarly',
  'Internal',
]);

/**
 * A typed, expected failure. `reason` is a stable UPPER_SNAKE identifier that
 * clients and the HTTP table key on; `message` is safe to show to callers.
 */
export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly reason: string;
  readonly fieldErrors: FieldError[];
  readonly retryAfterSeconds: number | undefined;
  readonly metadata: Record<string, string>;
  /** Whether trying the same work again may succeed; decides job retries, never a message regex. */
  readonly retryable: boolean;

  constructor(kind: ErrorKind, reason: string, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.kind = kind;
    this.reason = reason;
    this.fieldErrors = options.fieldErrors ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.metadata = options.metadata ?? {};
    this.retryable = options.retryable ?? RETRYABLE_KINDS.has(kind);
  }

  /** The serialisable form carried across process boundaries. */
  toJSON(): WireError {
    return {
      kind: this.kind,
      reason: this.reason,
      message: this.message,
      fieldErrors: this.fieldErrors,
      ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
      metadata: this.metadata,
      retryable: this.retryable,
    };
  }

  static fromJSON(wire: WireError): AppError {
    const kind = (ERROR_KINDS as readonly string[]).includes(wire.kind) ? (wire.kind as ErrorKind) : 'Internal';
    return new AppError(kind, wire.reason, wire.message, {
      fieldErrors: wire.fieldErrors ?? [],
      ...(wire.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: wire.retryAfterSeconds }),
      metadata: wire.metadata ?? {},
      ...(wire.retryable === undefined ? {} : { retryable: wire.retryable }),
    });
  }
}

export interface WireError {
  kind: string;
  reason: string;
  message: string;
  fieldErrors?: FieldError[];
  retryAfterSeconds?: number;
  metadata?: Record<string, string>;
  retryable?: boolean;
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** Shorthands for the common kinds; each takes a stable reason. */
export const errors = {
  invalid: (reason: string, message: string, fieldErrors: FieldError[] = []) =>
    new AppError('InvalidArgument', reason, message, { fieldErrors }),
  notFound: (reason: string, message: string) => new AppError('NotFound', reason, message),
  alreadyExists: (reason: string, message: string) => new AppError('AlreadyExists', reason, message),
  precondition: (reason: string, message: string) => new AppError('FailedPrecondition', reason, message),
  denied: (reason: string, message: string) => new AppError('PermissionDenied', reason, message),
  unauthenticated: (reason: string, message: string) => new AppError('Unauthenticated', reason, message),
  unavailable: (reason: string, message: string, retryAfterSeconds?: number) =>
    new AppError('Unavailable', reason, message, retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  internal: (message = 'Internal server error', cause?: unknown) =>
    new AppError('Internal', 'INTERNAL', message, { cause }),
};

/** What may be shown to a user, or stored as a failure reason, for any error. */
export interface Failure {
  /** Stable UPPER_SNAKE code: the AppError's reason, or INTERNAL. */
  code: string;
  /** Safe to show: the AppError's message, or a generic sentence for anything unexpected. */
  message: string;
  retryable: boolean;
}

/** The message users see for an error nobody anticipated; its cause goes to the service log only. */
export const INTERNAL_MESSAGE = 'An internal error occurred; it has been logged.';

/**
 * An error as users may see it. Typed errors keep their reason and message;
 * anything else (a bug, a driver error) becomes INTERNAL with a generic
 * message, so raw `err.message` text never leaks into responses or stored
 * failure reasons. Log the original error next to where this is called.
 */
export function failureOf(err: unknown): Failure {
  if (err instanceof AppError && err.kind !== 'Internal')
    return { code: err.reason, message: err.message, retryable: err.retryable };
  return { code: 'INTERNAL', message: INTERNAL_MESSAGE, retryable: err instanceof AppError ? err.retryable : true };
}

/** `failureOf(err).message`: the text a user may see for any error. */
export function publicMessage(err: unknown): string {
  return failureOf(err).message;
}
