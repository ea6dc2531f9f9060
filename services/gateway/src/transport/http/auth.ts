import type { Request, RequestHandler, Response } from 'express';
import { AppError, Reasons } from '@whetstone/errors';
import { AuthCache } from '../../application/auth-cache';
import type { KeyBilling, Principal, SessionView } from '../../application/ports';

export const KEY_PREFIX = 'wst_sk_';
const KEY_SHAPE = /^wst_sk_[A-Za-z0-9_-]{32,128}$/;

/** Who made the request, stored on `res.locals.auth`. */
export type AuthContext =
  | { kind: 'key'; principal: Principal; fingerprint: string }
  | { kind: 'session'; principal: Principal; session: SessionView; sessionToken: string };

export function authOf(res: Response): AuthContext {
  const auth = res.locals.auth as AuthContext | undefined;
  if (!auth) throw new AppError('Unauthenticated', Reasons.API_KEY_MISSING, 'Authentication required');
  return auth;
}

export interface AuthDeps {
  keyBilling: KeyBilling;
  cache: AuthCache;
  sessionCookie: string;
  now: () => number;
}

/** The API key of a request: `X-API-Key`, or `Authorization: Bearer …` (both accepted on every route). */
export function presentedKey(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const authorization = req.headers.authorization;
  if (authorization && /^bearer\s+/i.test(authorization))
    return authorization.replace(/^bearer\s+/i, '').trim() || undefined;
  return undefined;
}

export function sessionTokenOf(req: Request, cookieName: string): string | undefined {
  const cookie = req.headers.cookie;
  if (!cookie) return undefined;
  for (const part of cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name !== cookieName) continue;
    const raw = rest.join('=');
    try {
      return decodeURIComponent(raw) || undefined;
    } catch {
      // Undecodable: pass it on as is; key-billing will not know it, so the caller gets 401.
      return raw || undefined;
    }
  }
  return undefined;
}

async function authenticateKey(deps: AuthDeps, secret: string): Promise<AuthContext> {
  if (!secret.startsWith(KEY_PREFIX)) {
    throw new AppError(
      'Unauthenticated',
      Reasons.API_KEY_MALFORMED,
      `Invalid API key format: keys must start with '${KEY_PREFIX}'.`,
    );
  }
  if (!KEY_SHAPE.test(secret)) {
    throw new AppError(
      'Unauthenticated',
      Reasons.API_KEY_MALFORMED,
      `Malformed API key: expected '${KEY_PREFIX}' followed by at least 32 letters, digits, '-' or '_'.`,
    );
  }
  const fingerprint = AuthCache.fingerprint(secret);
  const cached = deps.cache.get(fingerprint, deps.now());
  if (cached) return { kind: 'key', principal: cached, fingerprint };
  const { principal, expiresAtMs } = await deps.keyBilling.authenticateApiKey(secret);
  deps.cache.set(fingerprint, principal, deps.now(), expiresAtMs);
  return { kind: 'key', principal, fingerprint };
}

async function authenticateSession(deps: AuthDeps, token: string): Promise<AuthContext> {
  try {
    const session = await deps.keyBilling.getSession(token);
    return {
      kind: 'session',
      session,
      sessionToken: token,
      principal: { keyId: '', teamId: session.team.id, userId: session.user.id },
    };
  } catch (err) {
    if (
      err instanceof AppError &&
      (err.kind === 'NotFound' || err.kind === 'Unauthenticated') &&
      err.reason !== Reasons.ACCOUNT_BLOCKED
    ) {
      throw new AppError('Unauthenticated', Reasons.SESSION_REQUIRED, 'Your session has expired; log in again.');
    }
    throw err;
  }
}

/**
 * Authenticate with an API key (preferred when present) or, where allowed,
 * the dashboard session cookie. Cookie-authenticated mutations must carry the
 * session's CSRF token in `X-CSRF-Token` and, if sent, a same-origin `Origin`.
 */
export function authenticate(
  deps: AuthDeps,
  options: { session: boolean; key: boolean; publicOrigin: string },
): RequestHandler {
  return async (req, res, next) => {
    const secret = presentedKey(req);
    if (secret !== undefined && options.key) {
      res.locals.auth = await authenticateKey(deps, secret);
      return next();
    }
    const token = options.session ? sessionTokenOf(req, deps.sessionCookie) : undefined;
    if (token) {
      const auth = await authenticateSession(deps, token);
      if (!SAFE_METHODS.has(req.method) && auth.kind === 'session')
        checkCsrf(req, auth.session.csrfToken, options.publicOrigin);
      res.locals.auth = auth;
      return next();
    }
    if (secret !== undefined && !options.key) {
      throw new AppError(
        'PermissionDenied',
        Reasons.KEY_CREATION_REQUIRES_DASHBOARD,
        'This route needs a dashboard session.',
      );
    }
    if (options.key) {
      throw new AppError(
        'Unauthenticated',
        Reasons.API_KEY_MISSING,
        `Missing API key: send it in the X-API-Key header or as Authorization: Bearer <key> (keys start with '${KEY_PREFIX}').`,
      );
    }
    throw new AppError('Unauthenticated', Reasons.SESSION_REQUIRED, 'Log in to the dashboard first.');
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function checkCsrf(req: Request, expected: string, publicOrigin: string): void {
  const origin = req.headers.origin;
  if (origin && origin !== publicOrigin && origin !== `${req.protocol}://${req.get('host')}`) {
    throw new AppError('PermissionDenied', Reasons.CSRF_TOKEN_INVALID, 'Cross-origin request refused.');
  }
  if (req.headers['x-csrf-token'] !== expected) {
    throw new AppError(
      'PermissionDenied',
      Reasons.CSRF_TOKEN_INVALID,
      'Missing or invalid X-CSRF-Token header for a cookie-authenticated request.',
    );
  }
}
