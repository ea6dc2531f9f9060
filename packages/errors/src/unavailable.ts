import { AppError } from './app-error';
import { Reasons } from './reasons';

/**
 * Codes that say "the database (or cache) is not there right now", wherever a driver puts them:
 * Prisma (P1001 cannot reach, P1002/P1008 timed out, P1017 server closed the connection, P2024 pool
 * timeout, P2037 too many connections), adapter-pg's driver error kinds, Postgres SQLSTATEs (class 08
 * connection exceptions, 57P01–57P03 shutdown or starting up, 53300 too many connections) and Node
 * socket errors.
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
  'P2037',
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** Messages of pg and ioredis that carry no code but mean the same. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable/,
  /^timeout exceeded when trying to connect/,
  /^Client was closed and is not queryable/,
  /^Connection is closed\.?$/,
  /^Reached the max retries per request limit/,
  /^Stream isn't writeable and enableOfflineQueue options is false/,
];

/** Seconds a client is told to wait before retrying while a dependency is down. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * THE mapping from a lost database or cache connection to a typed error: Unavailable
 * (`DEPENDENCY_UNAVAILABLE`, Retry-After), which transports render as gRPC UNAVAILABLE and HTTP 503,
 * instead of an unknown error's INTERNAL/500. Anything else gives undefined. It looks at the error,
 * its `cause` chain and Prisma's `meta.driverAdapterError`.
 */
export function asDependencyUnavailable(err: unknown): AppError | undefined {
  if (err instanceof AppError) return undefined;
  if (!lostConnection(err, 0)) return undefined;
  return new AppError('Unavailable', Reasons.DEPENDENCY_UNAVAILABLE, 'A backing service is temporarily unavailable', {
    retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
    cause: err,
  });
}

function lostConnection(value: unknown, depth: number): boolean {
  if (depth > 4 || value === null || typeof value !== 'object') return false;
  const e = value as Record<string, unknown>;
  for (const key of ['code', 'errorCode', 'originalCode', 'kind'] as const) {
    const code = e[key];
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  }
  if (e.name === 'MaxRetriesPerRequestError') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true;
  const meta = e.meta as Record<string, unknown> | undefined;
  return (
    lostConnection(e.cause, depth + 1) ||
    lostConnection(meta?.driverAdapterError, depth + 1) ||
    // Node's AggregateError (a connect to several addresses that all refused).
    (Array.isArray(e.errors) && e.errors.some((inner) => lostConnection(inner, depth + 1)))
  );
}
