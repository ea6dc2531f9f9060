import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { PasswordHasher } from '../domain/ports';

const KEY_LENGTH = 64;
/** N=2^15, r=8, p=1: about 32 MiB and tens of milliseconds per hash on this class of machine. */
const DEFAULT_COST: ScryptOptions = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/**
 * scrypt password hashes stored as `scrypt$N$r$p$salt$hash` (base64url), so the
 * cost can be raised later without invalidating existing hashes.
 */
export function createScryptPasswordHasher(cost: ScryptOptions = DEFAULT_COST): PasswordHasher {
  return {
    async hash(password) {
      const salt = randomBytes(16);
      const key = await derive(password, salt, cost);
      return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
    },
    async verify(password, stored) {
      const [scheme, n, r, p, salt, hash] = stored.split('$');
      if (scheme !== 'scrypt' || !salt || !hash) return false;
      const expected = Buffer.from(hash, 'base64url');
      const N = Number(n);
      const key = await derive(password, Buffer.from(salt, 'base64url'), {
        N,
        r: Number(r),
        p: Number(p),
        maxmem: Math.max(64 * 1024 * 1024, 256 * N * Number(r)),
      });
      return key.length === expected.length && timingSafeEqual(key, expected);
    },
  };
}
