/**
 * The request-rate policy of the spec's Limits table, as pure data and rules.
 * A per-endpoint limit replaces the per-IP default for that endpoint and is
 * scoped to the billing team, then the API key, then the user, then the IP.
 * The edge limit is separate and always on.
 */

export type LimitScope = 'edge' | 'ip' | 'team' | 'key' | 'user';

export interface LimitRule {
  /** Stable id, part of the counter key. */
  id: string;
  limit: number;
  windowSeconds: number;
  /** The public `code` in 429 bodies and `X-RateLimit-Code`. */
  code: string;
}

export interface RateLimitSettings {
  edgePerMinute: number;
  ipPerMinute: number;
  ipPerHour: number;
  inferencePerMinute: number;
  chatPerMinute: number;
  glinerPerMinute: number;
  generatePerMinute: number;
  trainingJobsPerMinute: number;
  /** Dashboard log-in attempts per email and client IP, per 15 minutes (brute-force guard). */
  loginPer15Minutes: number;
}

export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  edgePerMinute: 100_000,
  ipPerMinute: 20_000,
  ipPerHour: 1_000_000,
  inferencePerMinute: 5_000,
  chatPerMinute: 5_000,
  glinerPerMinute: 15_000,
  generatePerMinute: 120,
  trainingJobsPerMinute: 20,
  loginPer15Minutes: 10,
};

interface EndpointLimit {
  matches: (method: string, path: string) => boolean;
  rule: (s: RateLimitSettings) => LimitRule;
}

const post = (test: (path: string) => boolean) => (method: string, path: string) => method === 'POST' && test(path);
/** A message batch's or OpenAI batch's creation counts once; its requests run at the batch worker's pace. */
const CHAT_PATHS = new Set([
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/responses',
  '/v1/messages',
  '/v1/messages/batches',
  '/v1/batches',
]);

const ENDPOINT_LIMITS: EndpointLimit[] = [
  // Project endpoints, the decision route and embeddings (an extraction model's encoder) are native inference too.
  {
    matches: post(
      (p) =>
        p === '/inference' ||
        p === '/v1/systemone' ||
        p === '/v1/embeddings' ||
        /^\/projects\/[^/]+\/inference$/.test(p),
    ),
    rule: (s) => ({ id: 'inference', limit: s.inferencePerMinute, windowSeconds: 60, code: 'inference_rate_limit' }),
  },
  {
    matches: post((p) => CHAT_PATHS.has(p)),
    rule: (s) => ({ id: 'chat', limit: s.chatPerMinute, windowSeconds: 60, code: 'chat_rate_limit' }),
  },
  {
    matches: post((p) => p === '/gliner-2' || p.startsWith('/gliner-2/')),
    rule: (s) => ({ id: 'gliner', limit: s.glinerPerMinute, windowSeconds: 60, code: 'gliner_rate_limit' }),
  },
  {
    matches: post((p) => p === '/generate' || p.startsWith('/generate/')),
    rule: (s) => ({ id: 'generate', limit: s.generatePerMinute, windowSeconds: 60, code: 'generate_rate_limit' }),
  },
  {
    // A fine-tuning job is a training job: both routes draw on one budget.
    matches: post((p) => p === '/core/training-jobs' || p === '/v1/fine_tuning/jobs'),
    rule: (s) => ({
      id: 'training_jobs',
      limit: s.trainingJobsPerMinute,
      windowSeconds: 60,
      code: 'training_jobs_rate_limit',
    }),
  },
];

/** Who a request is, as far as rate limiting cares. */
export interface Caller {
  ip: string;
  teamId?: string;
  keyId?: string;
  userId?: string;
}

/** One counter to check: a rule applied to one subject. */
export interface LimitCheck {
  rule: LimitRule;
  scope: LimitScope;
  subject: string;
}

export function edgeCheck(settings: RateLimitSettings, ip: string): LimitCheck {
  return {
    rule: { id: 'edge', limit: settings.edgePerMinute, windowSeconds: 60, code: 'edge_rate_limit' },
    scope: 'edge',
    subject: ip,
  };
}

/**
 * Log-in attempts for one email from one IP. Keyed on both, so a guesser is
 * slowed on every account it tries while the owner, logging in from elsewhere,
 * is not locked out by someone else's failures.
 */
export function loginCheck(settings: RateLimitSettings, email: string, ip: string): LimitCheck {
  return {
    rule: { id: 'login', limit: settings.loginPer15Minutes, windowSeconds: 900, code: 'login_rate_limit' },
    scope: 'ip',
    subject: `${email.trim().toLowerCase()}|${ip}`,
  };
}

/** True when the endpoint has its own per-user limit (which needs the caller's identity). */
export function hasEndpointLimit(method: string, path: string): boolean {
  return ENDPOINT_LIMITS.some((e) => e.matches(method, path));
}

/** The request's own limit: the endpoint's (scoped team → key → user → IP), else the per-IP defaults. */
export function requestChecks(settings: RateLimitSettings, method: string, path: string, caller: Caller): LimitCheck[] {
  const endpoint = ENDPOINT_LIMITS.find((e) => e.matches(method, path));
  if (endpoint) {
    const [scope, subject] = callerScope(caller);
    return [{ rule: endpoint.rule(settings), scope, subject }];
  }
  return [
    {
      rule: { id: 'ip_minute', limit: settings.ipPerMinute, windowSeconds: 60, code: 'ip_rate_limit' },
      scope: 'ip',
      subject: caller.ip,
    },
    {
      rule: { id: 'ip_hour', limit: settings.ipPerHour, windowSeconds: 3600, code: 'ip_hourly_rate_limit' },
      scope: 'ip',
      subject: caller.ip,
    },
  ];
}

/**
 * Checks that need no identity, consumed before authentication in one atomic
 * call: the edge limit, plus the per-IP defaults when the endpoint has no limit
 * of its own. Endpoint limits are consumed after authentication.
 */
export function preAuthChecks(settings: RateLimitSettings, method: string, path: string, ip: string): LimitCheck[] {
  const edge = edgeCheck(settings, ip);
  return hasEndpointLimit(method, path) ? [edge] : [edge, ...requestChecks(settings, method, path, { ip })];
}

function callerScope(caller: Caller): [LimitScope, string] {
  if (caller.teamId) return ['team', caller.teamId];
  if (caller.keyId) return ['key', caller.keyId];
  if (caller.userId) return ['user', caller.userId];
  return ['ip', caller.ip];
}

/** Outcome of consuming one request from a set of counters. */
export type LimitDecision =
  | { allowed: true; limit: number; remaining: number; resetSeconds: number }
  | { allowed: false; check: LimitCheck; retryAfterSeconds: number };

/** Port: consumes one request from every check atomically, or none if any is exhausted. */
export interface RateLimiter {
  consume(checks: LimitCheck[], now: number): Promise<LimitDecision>;
  /**
   * Give back what `consume(checks, at)` took, in the windows of `at` (never
   * below zero): a request the server failed does not use up the caller's budget.
   */
  release(checks: LimitCheck[], at: number): Promise<void>;
}

/** Fixed-window counter key: the same on every replica for the same window. */
export function counterKey(check: LimitCheck, now: number): { key: string; windowEndsAt: number } {
  const windowMs = check.rule.windowSeconds * 1000;
  const start = Math.floor(now / windowMs) * windowMs;
  return { key: `rl:${check.rule.id}:${check.scope}:${check.subject}:${start}`, windowEndsAt: start + windowMs };
}
