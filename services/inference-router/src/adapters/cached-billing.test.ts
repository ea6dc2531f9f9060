import { cachedBilling } from './cached-billing';

/** A key-billing fake that counts checks and denies while `deny` is set. */
function fakeBilling() {
  const state = { calls: 0, deny: false };
  const inner = {
    checkSpendable: async () => {
      state.calls++;
      if (state.deny) throw new Error('402');
    },
  };
  return { state, inner };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('cachedBilling', () => {
  it('when a team calls within a window, then key-billing is asked once', async () => {
    let clock = 0;
    const { state, inner } = fakeBilling();
    const billing = cachedBilling(inner, 1000, () => clock);
    await billing.checkSpendable('t', 1n, false);
    clock = 999;
    await billing.checkSpendable('t', 1n, false);
    expect(state.calls).toBe(1);
  });

  it('when the answer is one window old, then the call goes on and one refresh runs in the background', async () => {
    let clock = 0;
    const { state, inner } = fakeBilling();
    const billing = cachedBilling(inner, 1000, () => clock);
    await billing.checkSpendable('t', 1n, false);
    clock = 1500;
    await Promise.all([billing.checkSpendable('t', 1n, false), billing.checkSpendable('t', 1n, false)]);
    await settle();
    expect(state.calls).toBe(2);
    clock = 2400; // refreshed at 1500: fresh again
    await billing.checkSpendable('t', 1n, false);
    expect(state.calls).toBe(2);
  });

  it('when a background refresh is denied, then the next call waits for the check and gets the denial', async () => {
    let clock = 0;
    const { state, inner } = fakeBilling();
    const billing = cachedBilling(inner, 1000, () => clock);
    await billing.checkSpendable('t', 1n, false);
    clock = 1001;
    state.deny = true;
    await billing.checkSpendable('t', 1n, false);
    await settle();
    await expect(billing.checkSpendable('t', 1n, false)).rejects.toThrow('402');
    await expect(billing.checkSpendable('t', 1n, false)).rejects.toThrow('402');
    expect(state.calls).toBe(4);
  });

  it('when a team was not seen for two windows, then the call waits for key-billing', async () => {
    let clock = 0;
    const { state, inner } = fakeBilling();
    const billing = cachedBilling(inner, 1000, () => clock);
    await billing.checkSpendable('t', 1n, false);
    clock = 2000;
    state.deny = true;
    await expect(billing.checkSpendable('t', 1n, false)).rejects.toThrow('402');
    expect(state.calls).toBe(2);
  });
});
