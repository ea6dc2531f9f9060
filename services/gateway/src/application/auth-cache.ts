import { createHash } from 'node:crypto';
import type { Principal } from './ports';

interface Entry {
  principal: Principal;
  expiresAt: number;
}

/**
 * Successful API-key authentications, keyed by SHA-256 of the secret (the
 * secret itself is never held). Entries expire after a short TTL, or at the
 * key's own expires_at when that comes first, and are
 * dropped at once when a KeyRevoked or AccountBlocked invalidation arrives.
 */
export class AuthCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
  ) {}

  static fingerprint(secret: string): string {
    return createHash('sha256').update(secret).digest('hex');
  }

  get(fingerprint: string, now: number): Principal | undefined {
    const entry = this.entries.get(fingerprint);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(fingerprint);
      return undefined;
    }
    return entry.principal;
  }

  /** Hold a look-up for the TTL, or only until `notAfter` (the key's own expiry, Unix ms) when that is sooner. */
  set(fingerprint: string, principal: Principal, now: number, notAfter: number | null = null): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(fingerprint, { principal, expiresAt: Math.min(now + this.ttlMs, notAfter ?? Infinity) });
  }

  /** Drop every entry of a key (revocation) or of a whole team (account blocked). */
  invalidate(target: { keyId?: string; teamId?: string }): number {
    let dropped = 0;
    for (const [fp, entry] of this.entries) {
      if (
        (target.keyId && entry.principal.keyId === target.keyId) ||
        (target.teamId && entry.principal.teamId === target.teamId)
      ) {
        this.entries.delete(fp);
        dropped++;
      }
    }
    return dropped;
  }
}

/** An invalidation message, as carried on keys.v1 and the Redis fan-out channel. */
export interface Invalidation {
  keyId?: string;
  teamId?: string;
}
