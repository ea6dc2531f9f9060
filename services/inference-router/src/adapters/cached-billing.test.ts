import { cachedBilling } from './cached-billing';

describe('cachedBilling', () => {
  it('asks once per team per window, and never caches a denial', async () => {
    let clock = 0;
    let calls = 0;
    let deny = false;
    const billing = cachedBilling(
      {
        checkSpendable: async () =>
          void (
            calls++,
            deny &&
              (() => {
                throw new Error('402');
              })()
          ),
      },
      1000,
      () => clock,
    );
    await billing.checkSpendable('t', 1n, false);
    await billing.checkSpendable('t', 1n, false);
    expect(calls).toBe(1);
    clock = 1001;
    deny = true;
    await expect(billing.checkSpendable('t', 1n, false)).rejects.toThrow('402');
    await expect(billing.checkSpendable('t', 1n, false)).rejects.toThrow('402');
    expect(calls).toBe(3);
  });
});
