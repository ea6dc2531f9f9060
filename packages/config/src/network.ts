import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';

/**
 * True for addresses a server-side request must not reach unless the operator
 * allows it: loopback, private (RFC 1918, unique-local), link-local (incl. the
 * cloud metadata address), carrier-grade NAT, unspecified and multicast.
 */
export function isNonPublicAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 4) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224
    );
  }
  if (v === 6) {
    const x = address.toLowerCase();
    if (x === '::' || x === '::1') return true;
    if (x.startsWith('::ffff:')) return isNonPublicAddress(x.slice(7));
    return /^f[cd]/.test(x) || /^fe[89ab]/.test(x) || x.startsWith('ff');
  }
  return true;
}

/** The shape of `dns.lookup` that `net.connect` (and so an undici Agent's `connect.lookup`) calls. */
export type ConnectLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * A connect-time `lookup` that refuses non-public addresses for hosts the
 * operator did not allow. A check before the request resolves the name once
 * and the connection resolves it again, so a name whose answer changes in
 * between (DNS rebinding) would slip through; this one checks the very
 * addresses the socket connects to. Literal IPs never reach a lookup: check
 * them before the request.
 */
export function publicOnlyLookup(
  allowed: (host: string) => boolean,
  resolve: typeof dnsLookup = dnsLookup,
): ConnectLookup {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const bad = allowed(hostname.toLowerCase()) ? undefined : addresses.find((a) => isNonPublicAddress(a.address));
      if (bad)
        return callback(
          Object.assign(new Error(`${hostname} resolves to a non-public address; the operator has not allowed it`), {
            code: 'ENONPUBLIC',
          }),
          [],
        );
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
