import { AppError, type ErrorKind } from './app-error';
import { BILLING_REASONS, Reasons } from './reasons';
import { asDependencyUnavailable } from './unavailable';

/** Which public envelope a response must use. */
export type Surface = 'generic' | 'openai' | 'anthropic';

export interface HttpErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Where the response goes, beyond its envelope. */
export interface HttpErrorOptions {
  /**
   * The request is to the Messages endpoint (`/v1/messages` and the paths below it), the one place 529 exists. Default:
   * true for the Anthropic envelope, so a Messages stream's or batch's error body is rendered as the endpoint's own.
   */
  messagesEndpoint?: boolean;
}

interface Row {
  status: number;
  /** The status on the Messages endpoint when it differs (529: upstream saturated exists only there). */
  messagesStatus?: number;
  /** OpenAI `error.type`. */
  openai: string;
  /** Anthropic `error.type`. */
  anthropic: string;
}

/** THE table: error kind → HTTP status and the error type of each compatible surface. */
const BY_KIND: Record<ErrorKind, Row> = {
  InvalidArgument: { status: 422, openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  Malformed: { status: 400, openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  Unauthenticated: { status: 401, openai: 'authentication_error', anthropic: 'authentication_error' },
  PermissionDenied: { status: 403, openai: 'permission_error', anthropic: 'permission_error' },
  PaymentRequired: { status: 402, openai: 'insufficient_quota', anthropic: 'billing_error' },
  NotFound: { status: 404, openai: 'not_found_error', anthropic: 'not_found_error' },
  AlreadyExists: { status: 409, openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  FailedPrecondition: { status: 409, openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  PayloadTooLarge: { status: 413, openai: 'invalid_request_error', anthropic: 'request_too_large' },
  TooEarly: { status: 425, openai: 'model_warming', anthropic: 'overloaded_error' },
  ResourceExhausted: { status: 429, openai: 'rate_limit_error', anthropic: 'rate_limit_error' },
  Unavailable: { status: 503, openai: 'server_error', anthropic: 'api_error' },
  DeadlineExceeded: { status: 503, openai: 'server_error', anthropic: 'timeout_error' },
  Cancelled: { status: 400, openai: 'invalid_request_error', anthropic: 'invalid_request_error' },
  Internal: { status: 500, openai: 'server_error', anthropic: 'api_error' },
};

/** Reasons whose status differs from their kind's. */
const BY_REASON: Record<string, Partial<Row>> = {
  [Reasons.MODEL_RESTRICTED]: { status: 451, openai: 'permission_error', anthropic: 'permission_error' },
  [Reasons.UPSTREAM_OVERLOADED]: {
    status: 503,
    messagesStatus: 529,
    openai: 'server_error',
    anthropic: 'overloaded_error',
  },
  [Reasons.HEADERS_TOO_LARGE]: { status: 431, openai: 'invalid_request_error', anthropic: 'request_too_large' },
  [Reasons.REQUEST_TIMEOUT]: { status: 408, openai: 'invalid_request_error', anthropic: 'timeout_error' },
  [Reasons.CREDIT_CEILING_REACHED]: { status: 403, openai: 'insufficient_quota', anthropic: 'billing_error' },
  [Reasons.CARD_REQUIRED]: { status: 403, openai: 'insufficient_quota', anthropic: 'billing_error' },
};

const GENERIC_500_MESSAGE = 'An unexpected error occurred. It has been logged; please retry or contact support.';

/** Where a billing denial sends the user to fix it; the gateway may override via metadata. */
const DEFAULT_RESOLUTION_URL = '/dashboard#credits';

/** The public, lower-case code of an error: metadata `code` if set, else its reason. */
export function publicCode(err: AppError): string {
  return err.metadata.code ?? err.reason.toLowerCase();
}

/** The status of an error: its row's, or the Messages endpoint's own (529) there. */
export function statusOf(err: AppError, surface: Surface = 'generic', options: HttpErrorOptions = {}): number {
  const row = { ...BY_KIND[err.kind], ...BY_REASON[err.reason] };
  const messages = options.messagesEndpoint ?? surface === 'anthropic';
  return messages ? (row.messagesStatus ?? row.status) : row.status;
}

/**
 * Render any thrown value as the HTTP response of the given surface.
 * A lost database or cache connection is a 503 with Retry-After (asDependencyUnavailable); other
 * unknown errors become a generic 500 whose message reveals nothing.
 */
export function toHttpError(thrown: unknown, surface: Surface, options: HttpErrorOptions = {}): HttpErrorResponse {
  const err =
    thrown instanceof AppError ? (thrown.kind !== 'Internal' ? thrown : null) : asDependencyUnavailable(thrown);
  if (!err) return internal(surface);

  const row = { ...BY_KIND[err.kind], ...BY_REASON[err.reason] };
  const status = statusOf(err, surface, options);
  const code = publicCode(err);
  const headers: Record<string, string> = {};

  if (err.retryAfterSeconds !== undefined) {
    headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfterSeconds)));
  }
  if (status === 429) {
    headers['x-ratelimit-scope'] = err.metadata.scope ?? 'ip';
    headers['x-ratelimit-code'] = code;
    headers['retry-after'] ??= '1';
  }
  if (status === 425) {
    const seconds = Math.min(60, Math.max(1, err.retryAfterSeconds ?? 5));
    headers['retry-after'] = String(seconds);
    headers['retry-after-ms'] = String(seconds * 1000);
    headers['x-should-retry'] = surface === 'openai' ? 'true' : 'false';
  }
  const billing = BILLING_REASONS.has(err.reason);
  // A conflict with the resource's state (a model that is not servable, a job that has ended) does not clear within
  // a client's retry backoff: the official clients, which retry 409 by default, are told not to.
  if (billing || status === 409) headers['x-should-retry'] = 'false';

  if (surface === 'openai') {
    return {
      status,
      headers,
      body: {
        error: {
          code: status === 425 ? 'model_warming' : code,
          type: row.openai,
          param: err.fieldErrors[0]?.field ?? null,
          message: describe(err),
          ...(billing ? { resolution_url: err.metadata.resolution_url ?? DEFAULT_RESOLUTION_URL } : {}),
        },
      },
    };
  }
  if (surface === 'anthropic') {
    // Billing denials carry what the other envelopes do, inside `error`: which denial, and where to resolve it.
    const extra = billing ? { code, resolution_url: err.metadata.resolution_url ?? DEFAULT_RESOLUTION_URL } : {};
    return {
      status,
      headers,
      body: { type: 'error', error: { type: row.anthropic, message: describe(err), ...extra } },
    };
  }

  if (billing) {
    return {
      status,
      headers,
      body: { code, message: err.message, resolution_url: err.metadata.resolution_url ?? DEFAULT_RESOLUTION_URL },
    };
  }
  if (status === 422) {
    return { status, headers, body: { detail: err.message, errors: err.fieldErrors } };
  }
  if (status === 429) {
    return { status, headers, body: { detail: err.message, code, scope: headers['x-ratelimit-scope'] } };
  }
  return { status, headers, body: { detail: err.message } };
}

function describe(err: AppError): string {
  if (err.fieldErrors.length === 0) return err.message;
  return `${err.message}: ${err.fieldErrors.map((f) => `${f.field}: ${f.message}`).join('; ')}`;
}

function internal(surface: Surface): HttpErrorResponse {
  if (surface === 'openai') {
    return {
      status: 500,
      headers: {},
      body: { error: { code: 'internal_error', type: 'server_error', param: null, message: GENERIC_500_MESSAGE } },
    };
  }
  if (surface === 'anthropic') {
    return {
      status: 500,
      headers: {},
      body: { type: 'error', error: { type: 'api_error', message: GENERIC_500_MESSAGE } },
    };
  }
  return { status: 500, headers: {}, body: { error: 'internal_error', message: GENERIC_500_MESSAGE } };
}
