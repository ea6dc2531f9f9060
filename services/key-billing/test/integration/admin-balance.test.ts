import { LedgerEntryKind } from '@whetstone/proto/keybilling/v1';
import { runAdminCli } from '../../src/cli/admin';
import { FREE_ALLOWANCE_MICRO, MICRO_PER_CREDIT } from '../../src/domain/money';
import { rpcError, startHarness, type Harness } from './harness';

const credits = (n: number) => BigInt(n) * MICRO_PER_CREDIT;
let seq = 0;

/** The operator commands that drive credit denials: adjust-balance and set-ceiling, over real gRPC and Postgres. */
describe('admin: balance adjustments and overage ceilings', () => {
  let h: Harness;
  let out = '';
  let err = '';
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const cli = (...args: string[]) => {
    out = '';
    err = '';
    return runAdminCli(args, {
      out: (t) => void (out += t),
      err: (t) => void (err += t),
      env: { KEY_BILLING_ADDR: h.addr },
    });
  };

  async function team() {
    const res = await h.client.signUp({ email: `adj${++seq}-${Date.now()}@example.com`, password: 'correct horse' });
    return res.team!.id;
  }

  const spend = (teamId: string) =>
    rpcError(h.client.checkSpendable({ teamId, estimatedCostMicroCredits: 1_000n, directModel: false }));

  it('when the operator debits then credits a balance with a reason, then each is one adjustment in the ledger and spendability follows', async () => {
    const teamId = await team();
    expect(await cli('adjust-balance', '--team', teamId, '--debit', '500', '--reason', 'chargeback #12')).toBe(0);
    expect(err).toBe('');
    expect(out).toContain('Debited 500 credits.');
    expect(out).toMatch(/Balance\s+0 credits/);
    expect(await spend(teamId)).toMatchObject({ kind: 'PaymentRequired', reason: 'OUT_OF_CREDITS' });

    expect(await cli('adjust-balance', '--team', teamId, '--credit', '2.5', '--reason', 'goodwill')).toBe(0);
    expect(out).toContain('Credited 2.5 credits.');
    const usage = await h.client.getUsage({ teamId });
    expect(usage.account?.balanceMicroCredits).toBe(credits(2) + MICRO_PER_CREDIT / 2n);
    expect(usage.recentEntries.slice(0, 2)).toEqual([
      expect.objectContaining({ kind: LedgerEntryKind.ADJUSTMENT, amountMicroCredits: 2_500_000n, note: 'goodwill' }),
      expect.objectContaining({
        kind: LedgerEntryKind.ADJUSTMENT,
        amountMicroCredits: -FREE_ALLOWANCE_MICRO,
        note: 'chargeback #12',
      }),
    ]);
    await h.client.checkSpendable({ teamId, estimatedCostMicroCredits: 1_000n, directModel: false });
    expect(await cli('show', '--team', teamId)).toBe(0);
    expect(out).toMatch(/adjustment\s+-500\s+balance 0\s+chargeback #12/);
  });

  it('when an adjustment has no reason, a zero amount, or both flags, then nothing is written and the problem is named', async () => {
    const teamId = await team();
    expect(await cli('adjust-balance', '--team', teamId, '--credit', '5')).toBe(2);
    expect(err).toContain('--reason is required');
    expect(await cli('adjust-balance', '--team', teamId, '--credit', '5', '--debit', '5', '--reason', 'x')).toBe(2);
    expect(err).toContain('exactly one of --credit or --debit');
    expect(await cli('adjust-balance', '--team', teamId, '--credit', '0', '--reason', 'x')).toBe(1);
    expect(err).toContain('VALIDATION_FAILED');
    expect(
      await rpcError(
        h.admin.adjustBalance({
          account: { selector: { case: 'teamId', value: teamId } },
          microCredits: 5n,
          reason: ' ',
        }),
      ),
    ).toMatchObject({ kind: 'InvalidArgument', fieldErrors: [expect.objectContaining({ field: 'reason' })] });
    expect((await h.client.getUsage({ teamId })).recentEntries).toHaveLength(1);
  });

  it('when a paid team without a card runs out, then card_required; with a card, overage runs to the ceiling set, then credit_ceiling_reached', async () => {
    const teamId = await team();
    expect(await cli('set-ceiling', '--team', teamId, '--ceiling-credits', '10')).toBe(1);
    expect(err).toContain('PLAN_HAS_NO_OVERAGE');

    expect(await cli('set-plan', '--team', teamId, '--plan', 'paid', '--included-credits', '0')).toBe(0);
    expect(await cli('set-ceiling', '--team', teamId, '--ceiling-credits', '10')).toBe(0);
    expect(out).toContain('overage on up to 10 credits');
    expect(
      await cli('adjust-balance', '--team', teamId, '--debit', '500', '--reason', 'test: spend the allowance'),
    ).toBe(0);
    expect(await spend(teamId)).toMatchObject({
      kind: 'PermissionDenied',
      reason: 'CARD_REQUIRED',
      metadata: { resolution_url: '/dashboard#credits' },
    });

    expect(await cli('set-plan', '--team', teamId, '--plan', 'paid', '--card-verified', 'yes')).toBe(0);
    await h.client.checkSpendable({ teamId, estimatedCostMicroCredits: 1_000n, directModel: false });
    expect(await cli('adjust-balance', '--team', teamId, '--debit', '10', '--reason', 'test: draw the overage')).toBe(
      0,
    );
    expect(await spend(teamId)).toMatchObject({ kind: 'PermissionDenied', reason: 'CREDIT_CEILING_REACHED' });

    expect(await cli('set-ceiling', '--team', teamId, '--ceiling-credits', '20')).toBe(0);
    await h.client.checkSpendable({ teamId, estimatedCostMicroCredits: 1_000n, directModel: false });
    expect(await cli('set-ceiling', '--team', teamId, '--ceiling-credits', '20', '--overage', 'no')).toBe(0);
    expect(await spend(teamId)).toMatchObject({ kind: 'PaymentRequired', reason: 'OUT_OF_CREDITS' });
  });

  it('when asked for help, then each new command prints its usage and options', async () => {
    expect(await cli('adjust-balance', '--help')).toBe(0);
    expect(out).toContain('Usage: pnpm whetstone admin adjust-balance');
    expect(out).toContain('--email <address>');
    expect(await cli('set-ceiling', '--help')).toBe(0);
    expect(out).toContain('--ceiling-credits <n>');
    expect(await cli('--help')).toBe(0);
    expect(out).toMatch(/adjust-balance\s+credit or debit/);
    expect(out).toMatch(/set-ceiling\s+set a paid team/);
  });
});
