import { createHash, randomBytes } from 'node:crypto';

/** Every Whetstone API key starts with this. */
export const API_KEY_PREFIX = 'wst_sk_';

/** How many trailing characters of a key are kept for identification. */
export const LAST_DIGITS = 4;

/** Dashboard sessions last 30 days from their last use (sliding). */
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** A session's expiry moves forward at most once per this interval, to bound writes. */
export const SESSION_SLIDE_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * SHA-256 hex of a high-entropy secret (API key, session token). A fast hash is
 * right for 256-bit random secrets: there is nothing to brute-force, and
 * authentication sits on the request path. Passwords use scrypt instead.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A new API key: prefix + 43 base64url characters (256 random bits). */
export function newApiKeySecret(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** A new opaque token (session, CSRF): 256 random bits, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `secret` has the shape of a key this service could have minted. */
export function looksLikeApiKey(secret: string): boolean {
  return secret.startsWith(API_KEY_PREFIX) && /^[A-Za-z0-9_-]{32,}$/.test(secret.slice(API_KEY_PREFIX.length));
}

/** Lower-cased, trimmed email, or null when it is not plausibly an address. */
export function normalizeEmail(email: string): string | null {
  const value = email.trim().toLowerCase();
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value) && value.length <= 254 ? value : null;
}
