import type { RequestHandler, Response } from 'express';
import { AppError, Reasons } from '@whetstone/errors';
import { edgeCheck, requestChecks, type LimitDecision, type RateLimiter, type RateLimitSettings } from '../../domain/rate-limit';
import type { AuthContext } from './auth';

function enforce(decision: LimitDecision, res: Response, headers: boolean): void {
  if (!decision.allowed) {
    const { check, retryAfterSeconds } = decision;
    throw new AppError('ResourceExhausted', Reasons.RATE_LIMITED, `Rate limit exceeded: ${check.rule.limit} requests per ${check.rule.windowSeconds} s for this ${check.scope}. Retry after ${retryAfterSeconds} s.`, {
      retryAfterSeconds,
      metadata: { scope: check.scope, code: check.rule.code },
    });
  }
  if (headers) {
    res.set({
      'X-RateLimit-Limit': String(decision.limit),
      'X-RateLimit-Remaining': String(decision.remaining),
      'X-RateLimit-Reset': String(decision.resetSeconds),
    });
  }
}

/** The always-on edge limit by observed IP, before any other work. */
export function edgeLimit(limiter: RateLimiter, settings: RateLimitSettings, now: () => number): RequestHandler {
  return async (req, res, next) => {
    enforce(await limiter.consume([edgeCheck(settings, req.ip ?? 'unknown')], now()), res, false);
    next();
  };
}

/** The endpoint's per-user limit, or the per-IP defaults; sets X-RateLimit-* on success. */
export function requestLimit(limiter: RateLimiter, settings: RateLimitSettings, now: () => number): RequestHandler {
  return async (req, res, next) => {
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
