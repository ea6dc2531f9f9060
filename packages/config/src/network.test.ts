import type { LookupAddress } from 'node:dns';
import { isNonPublicAddress, publicOnlyLookup } from './network';

/** Every class of address a server-side request must not reach unless allowed, with one example each. */
const NON_PUBLIC_EXAMPLES: Record<string, string> = {
  'loopback v4': '127.0.0.1',
  'loopback v6': '::1',
  unspecified: '0.0.0.0',
  'private 10/8': '10.1.2.3',
  'private 172.16/12': '172.16.5.4',
  'private 192.168/16': '192.168.1.1',
  'link-local v4': '169.254.10.10',
  'cloud metadata': '169.254.169.254',
  'carrier-grade NAT': '100.64.0.1',
  'unique-local v6': 'fd00::1',
  'link-local v6': 'fe80::1',
  'v4-mapped loopback': '::ffff:127.0.0.1',
  multicast: '224.0.0.1',
};

/** A resolver that answers each name from a script, one answer per call (the next call gets the next one). */
function scripted(answers: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve = ((hostname: string, _options: unknown, callback: (e: Error | null, a: LookupAddress[]) => void) => {
    calls.push(hostname);
    const next = answers[hostname]?.shift();
    if (!next) return callback(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), []);
    callback(null, [{ address: next, family: next.includes(':') ? 6 : 4 }]);
  }) as never;
  return { resolve, calls };
}

const ask = (lookup: ReturnType<typeof publicOnlyLookup>, host: string, all = false) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    lookup(host, { all }, (err, address) => resolve({ err, address })),
  );

describe('isNonPublicAddress', () => {
  it.each(Object.entries(NON_PUBLIC_EXAMPLES))('when the address is %s (%s), then it is not public', (_c, address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it('when the address is public, then it is', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '172.32.0.1', '100.128.0.1'])
      expect({ address, blocked: isNonPublicAddress(address) }).toEqual({ address, blocked: false });
  });
});

describe('publicOnlyLookup, the connect-time check', () => {
  it('when a name rebinds from a public address to a private one, then the connection after the change is refused', async () => {
    const dns = scripted({ 'rebind.example': ['93.184.216.34', '169.254.169.254'] });
    const lookup = publicOnlyLookup(() => false, dns.resolve);
    expect(await ask(lookup, 'rebind.example')).toEqual({ err: null, address: '93.184.216.34' });
    const second = await ask(lookup, 'rebind.example');
    expect(second.err?.code).toBe('ENONPUBLIC');
    expect(second.err?.message).not.toContain('169.254');
  });

  it.each(Object.entries(NON_PUBLIC_EXAMPLES))(
    'when a name resolves to %s (%s), then it is refused, unless the operator allows that host',
    async (_c, address) => {
      const refused = await ask(
        publicOnlyLookup(() => false, scripted({ 'x.example': [address] }).resolve),
        'x.example',
      );
      expect(refused.err?.code).toBe('ENONPUBLIC');
      const allowed = publicOnlyLookup((h) => h === 'x.example', scripted({ 'x.example': [address] }).resolve);
      expect(await ask(allowed, 'x.example', true)).toEqual({
        err: null,
        address: [{ address, family: address.includes(':') ? 6 : 4 }],
      });
    },
  );

  it('when the real resolver answers localhost, then it is refused (no network needed)', async () => {
    expect(
      (
        await ask(
          publicOnlyLookup(() => false),
          'localhost',
        )
      ).err?.code,
    ).toBe('ENONPUBLIC');
  });
});
