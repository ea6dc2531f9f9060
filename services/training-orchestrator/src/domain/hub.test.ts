import { REPO_ID, isNonPublicAddress } from './hub';

describe('hub target checks', () => {
  it('refuses loopback, private, link-local and metadata addresses, and accepts public ones', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      'not-an-ip',
    ])
      expect(isNonPublicAddress(a)).toBe(true);
    for (const a of ['8.8.8.8', '52.1.2.3', '172.32.0.1', '2606:4700::1111']) expect(isNonPublicAddress(a)).toBe(false);
  });

  it('accepts owner/name repository ids only', () => {
    expect(REPO_ID.test('acme/ner-model')).toBe(true);
    for (const bad of ['ner-model', 'acme/', '../x/y', 'a/b/c', 'acme/ner model'])
      expect(REPO_ID.test(bad)).toBe(false);
  });
});
