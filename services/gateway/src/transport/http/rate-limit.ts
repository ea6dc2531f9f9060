import type { RequestHandler, Response } from 'express';
import { AppError, Reasons } from '@whetstone/errors';
import {
  hasEndpointLimit,
  preAuthChecks,
  requestChecks,
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
 * Before authentication, for every request: the edge limit, and the per-IP
 * defaults where the endpoint has no limit of its own (one Redis call).
 */
export function preAuthLimit(limiter: RateLimiter, settings: RateLimitSettings, now: () => number): RequestHandler {
  return async (req, res, next) => {
    const ip = req.ip ?? 'unknown';
    const withDefaults = !hasEndpointLimit(req.method, req.path);
    enforce(await limiter.consume(preAuthChecks(settings, req.method, req.path, ip), now()), res, withDefaults);
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
    enforce(await limiter.consume(requestChecks(settings, req.method, req.path, caller), now()), res, true);
    next();
  };
}
