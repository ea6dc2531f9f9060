import type { Request, RequestHandler, Response } from 'express';
import { AppError, Reasons } from '@whetstone/errors';
import {
  edgeCheck,
  hasEndpointLimit,
  loginCheck,
  preAuthChecks,
  requestChecks,
  type LimitCheck,
  type LimitDecision,
  type RateLimiter,
  type RateLimitSettings,
} from '../../domain/rate-limit';
import type { AuthContext } from './auth';

function enforce(decision: LimitDecision, res: Response, headers: boolean): void {
  if (!decision.allowed) {
    const { check, retryAfterSeconds } = decision;
    throw new AppError(
      'ResourceExhausted',
      Reasons.RATE_LIMITED,
      `Rate limit exceeded: ${check.rule.limit} requests per ${check.rule.windowSeconds} s for this ${check.scope}. Retry after ${retryAfterSeconds} s.`,
      {
        retryAfterSeconds,
        metadata: { scope: check.scope, code: check.rule.code },
      },
    );
  }
  if (headers) {
    res.set({
      'X-RateLimit-Limit': String(decision.limit),
      'X-RateLimit-Remaining': String(decision.remaining),
      'X-RateLimit-Reset': String(decision.resetSeconds),
    });
  }
}

/**
 * Count a request only if the server did not fail it: once a 5xx has been
 * sent, what it consumed is given back, so an outage does not use up the
 * callers' budgets (they would get 429 for the server's fault). A release that
 * fails (e.g. Redis down too) leaves the count: the limit errs towards safety.
 */
function giveBackOnServerError(res: Response, limiter: RateLimiter, checks: LimitCheck[], at: number): void {
  res.once('finish', () => {
    if (res.statusCode >= 500) limiter.release(checks, at).catch(() => undefined);
  });
}

/**
 * Before authentication, for every request: the edge limit, and the per-IP
 * defaults where the endpoint has no limit of its own (one Redis call). On an
 * endpoint with its own limit, a request whose API key the auth cache already
 * holds (`authCached`: authentication costs no I/O) has its edge counter
 * consumed together with the endpoint's, after authentication: one Redis round
 * trip per warm call instead of two.
 */
export function preAuthLimit(
  limiter: RateLimiter,
  settings: RateLimitSettings,
  now: () => number,
  authCached: (req: Request) => boolean = () => false,
): RequestHandler {
  return async (req, res, next) => {
    const ip = req.ip ?? 'unknown';
    const withDefaults = !hasEndpointLimit(req.method, req.path);
    if (!withDefaults && authCached(req)) {
      res.locals.edgeDeferred = true;
      return next();
    }
    const checks = preAuthChecks(settings, req.method, req.path, ip);
    const at = now();
    enforce(await limiter.consume(checks, at), res, withDefaults);
    giveBackOnServerError(res, limiter, checks, at);
    next();
  };
}

/** After authentication, only on endpoints with their own per-user limit; sets X-RateLimit-* on success. */
export function endpointLimit(limiter: RateLimiter, settings: RateLimitSettings, now: () => number): RequestHandler {
  return async (req, res, next) => {
    if (!hasEndpointLimit(req.method, req.path)) return next();
    const auth = res.locals.auth as AuthContext | undefined;
    const caller = {
      ip: req.ip ?? 'unknown',
      ...(auth?.principal.teamId ? { teamId: auth.principal.teamId } : {}),
      ...(auth?.principal.keyId ? { keyId: auth.principal.keyId } : {}),
      ...(auth?.principal.userId ? { userId: auth.principal.userId } : {}),
    };
    const checks = requestChecks(settings, req.method, req.path, caller);
    if (res.locals.edgeDeferred) checks.unshift(edgeCheck(settings, caller.ip));
    const at = now();
    enforce(await limiter.consume(checks, at), res, true);
    giveBackOnServerError(res, limiter, checks, at);
    next();
  };
}

/**
 * Before a log-in attempt: one attempt from the email+IP counter, or 429 with
 * Retry-After once it is used up (the password is not checked at all then).
 */
export function loginLimit(
  limiter: RateLimiter,
  settings: RateLimitSettings,
  now: () => number,
): (email: string, ip: string | undefined) => Promise<void> {
  return async (email, ip) => {
    const decision = await limiter.consume([loginCheck(settings, email, ip ?? 'unknown')], now());
    if (!decision.allowed)
      throw new AppError(
        'ResourceExhausted',
        Reasons.RATE_LIMITED,
        `Too many log-in attempts for this account from this address. Retry after ${decision.retryAfterSeconds} s.`,
        { retryAfterSeconds: decision.retryAfterSeconds, metadata: { scope: 'ip', code: decision.check.rule.code } },
      );
  };
}
