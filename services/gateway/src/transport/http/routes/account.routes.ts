import type { Response } from 'express';
import type { Api } from '../api';
import type { KeyBilling } from '../../../application/ports';
import type { AuthCache, Invalidation } from '../../../application/auth-cache';
import { authOf } from '../auth';
import { AppError, Reasons } from '@whetstone/errors';
import {
  CreateApiKeyBody,
  CreateApiKeyResponse,
  DeleteApiKeyBody,
  ListApiKeysResponse,
  LogInBody,
  Me,
  SignUpBody,
  SuccessMessage,
} from '../schemas';

export interface AccountRouteDeps {
  keyBilling: KeyBilling;
  cache: AuthCache;
  /** Tell every other gateway replica to drop a cached key at once. */
  broadcast: (invalidation: Invalidation) => Promise<void>;
  sessionCookie: string;
  secureCookies: boolean;
  /** Takes one log-in attempt for this email and client IP, or throws 429 once they are used up. */
  loginAttempt: (email: string, ip: string | undefined) => Promise<void>;
}

const SESSION_DAYS = 30;

function setSessionCookie(res: Response, deps: AccountRouteDeps, token: string): void {
  res.cookie(deps.sessionCookie, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: deps.secureCookies,
    path: '/',
    maxAge: SESSION_DAYS * 24 * 3600 * 1000,
  });
}

/** Dashboard sessions and API keys, exactly as the spec's API keys section. */
export function registerAccountRoutes(api: Api, deps: AccountRouteDeps): void {
  api.route(
    {
      method: 'post',
      path: '/auth/signup',
      summary: 'Create a user, a team and the free allowance, and log in',
      tag: 'Dashboard',
      auth: 'none',
      body: SignUpBody,
      response: { status: 201, description: 'Signed up and logged in', schema: Me },
    },
    async ({ res, body }) => {
      await deps.keyBilling.signUp(body.email, body.password);
      const session = await deps.keyBilling.logIn(body.email, body.password);
      setSessionCookie(res, deps, session.sessionToken);
      return meBody(session);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/auth/login',
      summary: 'Log in; sets an HttpOnly session cookie',
      tag: 'Dashboard',
      auth: 'none',
      body: LogInBody,
      response: { status: 200, description: 'Logged in', schema: Me },
    },
    async ({ req, res, body }) => {
      await deps.loginAttempt(body.email, req.ip);
      const session = await deps.keyBilling.logIn(body.email, body.password);
      setSessionCookie(res, deps, session.sessionToken);
      return meBody(session);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/auth/logout',
      summary: 'End the dashboard session',
      tag: 'Dashboard',
      auth: 'session',
      response: { status: 200, description: 'Logged out', schema: SuccessMessage },
    },
    async ({ res }) => {
      const auth = authOf(res);
      if (auth.kind === 'session') await deps.keyBilling.logOut(auth.sessionToken);
      res.clearCookie(deps.sessionCookie, { path: '/' });
      return { success: true, message: 'Logged out.' };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/auth/me',
      summary: 'The logged-in user, team and CSRF token',
      tag: 'Dashboard',
      auth: 'session',
      response: { status: 200, description: 'Current session', schema: Me },
    },
    ({ res }) => {
      const auth = authOf(res);
      if (auth.kind !== 'session')
        throw new AppError('Unauthenticated', Reasons.SESSION_REQUIRED, 'Log in to the dashboard first.');
      return meBody(auth.session);
    },
  );
  registerApiKeyRoutes(api, deps);
}

/** API keys and the usage they accrue; creating one needs a dashboard session. */
function registerApiKeyRoutes(api: Api, deps: AccountRouteDeps): void {
  api.route(
    {
      method: 'post',
      path: '/create-api-key',
      summary: 'Create an API key (dashboard session only; an API key gets 403); the secret is shown once',
      tag: 'API keys',
      auth: 'key-or-session',
      body: CreateApiKeyBody,
      response: { status: 200, description: 'The new key', schema: CreateApiKeyResponse },
    },
    async ({ res, body }) => {
      const auth = authOf(res);
      if (auth.kind !== 'session') {
        throw new AppError(
          'PermissionDenied',
          Reasons.KEY_CREATION_REQUIRES_DASHBOARD,
          'API key creation is only allowed from the web dashboard.',
        );
      }
      res.set('Cache-Control', 'no-store');
      return deps.keyBilling.createApiKey(
        auth.principal,
        body.name,
        body.expires_at ? new Date(body.expires_at) : undefined,
      );
    },
  );

  api.route(
    {
      method: 'get',
      path: '/list-api-keys',
      summary: "List the team's API keys with usage; never their secrets",
      tag: 'API keys',
      auth: 'key-or-session',
      response: { status: 200, description: 'Keys', schema: ListApiKeysResponse },
    },
    async ({ res }) => {
      const keys = await deps.keyBilling.listApiKeys(authOf(res).principal.teamId);
      return { keys, count: keys.length };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/delete-api-key',
      summary: 'Revoke an API key, immediately and irreversibly',
      tag: 'API keys',
      auth: 'key-or-session',
      body: DeleteApiKeyBody,
      response: { status: 200, description: 'Revoked', schema: SuccessMessage },
    },
    async ({ res, body }) => {
      const result = await deps.keyBilling.revokeApiKey(authOf(res).principal.teamId, body.key_id);
      deps.cache.invalidate({ keyId: body.key_id });
      await deps.broadcast({ keyId: body.key_id });
      return result;
    },
  );

  api.route(
    {
      method: 'get',
      path: '/billing/usage',
      summary: 'Credit balance, plan, recent ledger entries and per-key usage',
      tag: 'Billing',
      auth: 'key-or-session',
      response: { status: 200, description: 'Usage' },
    },
    async ({ res }) => deps.keyBilling.getUsage(authOf(res).principal.teamId),
  );
}

function meBody(s: {
  user: { id: string; email: string; createdAt: string | null };
  team: { id: string; name: string };
  csrfToken: string;
  expiresAt: string | null;
}) {
  return {
    user: { id: s.user.id, email: s.user.email, created_at: s.user.createdAt },
    team: s.team,
    csrf_token: s.csrfToken,
    expires_at: s.expiresAt,
  };
}
