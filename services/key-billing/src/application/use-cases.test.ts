import { AppError } from '@whetstone/errors';
import { createInMemoryUnitOfWork, fixedClock, plainPasswordHasher } from '../../test/fakes/in-memory-unit-of-work';
import { FREE_ALLOWANCE_MICRO, MICRO_PER_CREDIT } from '../domain/money';
import { changePlan, grantCredits, renewMonthly, setAccountBlocked } from './admin';
import { authenticateApiKey, createApiKey, revokeApiKey } from './api-keys';
import { checkSpendable, recordUsage } from './billing';
import type { UseCaseDeps } from './deps';
import { getSession, logIn, logOut } from './sessions';
import { signUp } from './sign-up';

const credits = (n: number) => BigInt(n) * MICRO_PER_CREDIT;
const DAY = 24 * 60 * 60 * 1000;

function setup() {
  const uow = createInMemoryUnitOfWork();
  const clock = fixedClock(new Date('2026-11-10T12:00:00Z'));
  const deps: UseCaseDeps = { uow, clock, passwords: plainPasswordHasher };
  return { uow, clock, deps };
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw err;
  return err;
}

describe('key-billing use cases (in-memory ports)', () => {
  it('when a user signs up, then the team is on the free plan with the one-time allowance in the ledger', async () => {
    const { deps, uow } = setup();
    const { user, team } = await signUp(deps, { email: ' Ada@Example.com ', password: 'correct horse' });
    expect(user.email).toBe('ada@example.com');
    expect(team).toMatchObject({ plan: 'free', ownerUserId: user.id, balanceMicroCredits: FREE_ALLOWANCE_MICRO });
    expect(uow.state.ledger).toEqual([
      expect.objectContaining({ kind: 'signup_allowance', amountMicroCredits: FREE_ALLOWANCE_MICRO }),
    ]);
    expect(await rejection(signUp(deps, { email: 'ada@example.com', password: 'another one' }))).toMatchObject({
      kind: 'AlreadyExists',
      reason: 'EMAIL_TAKEN',
    });
  });

  it('when signup details are invalid, then every bad field is reported', async () => {
    const err = await rejection(signUp(setup().deps, { email: 'nope', password: 'short' }));
    expect(err.kind).toBe('InvalidArgument');
    expect(err.fieldErrors.map((f) => f.field)).toEqual(['email', 'password']);
  });

  it('when a session is 30 days idle, then it is expired; used within that, it slides', async () => {
    const { deps, clock } = setup();
    await signUp(deps, { email: 'a@b.co', password: 'password1' });
    expect(await rejection(logIn(deps, { email: 'a@b.co', password: 'wrong-password' }))).toMatchObject({
      reason: 'INVALID_CREDENTIALS',
    });
    const session = await logIn(deps, { email: 'a@b.co', password: 'password1' });
    clock.advance(20 * DAY);
    const seen = await getSession(deps, { sessionToken: session.sessionToken });
    expect(seen.expiresAt.getTime()).toBe(clock.now().getTime() + 30 * DAY);
    clock.advance(31 * DAY);
    expect(await rejection(getSession(deps, { sessionToken: session.sessionToken }))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'SESSION_REQUIRED',
    });
    const again = await logIn(deps, { email: 'a@b.co', password: 'password1' });
    await logOut(deps, { sessionToken: again.sessionToken });
    expect(await rejection(getSession(deps, { sessionToken: again.sessionToken }))).toMatchObject({
      reason: 'SESSION_REQUIRED',
    });
  });

  it('when a key is revoked, then authentication says API_KEY_REVOKED and a KeyRevoked event was written', async () => {
    const { deps, uow } = setup();
    const { user, team } = await signUp(deps, { email: 'k@b.co', password: 'password1' });
    const { secretKey, key } = await createApiKey(deps, {
      teamId: team.id,
      userId: user.id,
      name: 'ci',
      expiresAt: null,
    });
    expect(secretKey).toMatch(/^wst_sk_[A-Za-z0-9_-]{43}$/);
    expect(key.lastDigits).toBe(secretKey.slice(-4));
    expect(await authenticateApiKey(deps, { secretKey })).toEqual({
      keyId: key.id,
      teamId: team.id,
      userId: user.id,
      expiresAt: null,
    });
    await revokeApiKey(deps, { teamId: team.id, keyId: key.id });
    expect(await rejection(authenticateApiKey(deps, { secretKey }))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'API_KEY_REVOKED',
    });
    expect(uow.state.events).toEqual([{ type: 'KeyRevoked', keyId: key.id, teamId: team.id }]);
    expect(await rejection(authenticateApiKey(deps, { secretKey: 'wst_sk_' + 'x'.repeat(43) }))).toMatchObject({
      reason: 'API_KEY_INVALID',
    });
  });

  it("when a team revokes another team's key, then it is NotFound and nothing changes", async () => {
    const { deps, uow } = setup();
    const a = await signUp(deps, { email: 'a@b.co', password: 'password1' });
    const b = await signUp(deps, { email: 'b@b.co', password: 'password1' });
    const { key } = await createApiKey(deps, { teamId: a.team.id, userId: a.user.id, name: 'mine', expiresAt: null });
    expect(await rejection(revokeApiKey(deps, { teamId: b.team.id, keyId: key.id }))).toMatchObject({
      kind: 'NotFound',
      reason: 'API_KEY_NOT_FOUND',
    });
    expect(uow.state.keys.get(key.id)!.revokedAt).toBeNull();
    expect(uow.state.events).toEqual([]);
    expect(
      await rejection(createApiKey(deps, { teamId: a.team.id, userId: b.user.id, name: 'x', expiresAt: null })),
    ).toMatchObject({ reason: 'NOT_A_TEAM_MEMBER' });
  });

  it('when a key has expired or its team is blocked, then authentication fails with the matching reason', async () => {
    const { deps, clock } = setup();
    const { user, team } = await signUp(deps, { email: 'e@b.co', password: 'password1' });
    const expiring = await createApiKey(deps, {
      teamId: team.id,
      userId: user.id,
      name: 'short',
      expiresAt: new Date(clock.now().getTime() + DAY),
    });
    const plain = await createApiKey(deps, { teamId: team.id, userId: user.id, name: 'long', expiresAt: null });
    clock.advance(2 * DAY);
    expect(await rejection(authenticateApiKey(deps, { secretKey: expiring.secretKey }))).toMatchObject({
      reason: 'API_KEY_EXPIRED',
    });
    await setAccountBlocked(deps, { account: { teamId: team.id }, blocked: true, reason: 'fraud review' });
    expect(await rejection(authenticateApiKey(deps, { secretKey: plain.secretKey }))).toMatchObject({
      reason: 'ACCOUNT_BLOCKED',
    });
    await setAccountBlocked(deps, { account: { email: 'e@b.co' }, blocked: false, reason: '' });
    expect((await authenticateApiKey(deps, { secretKey: plain.secretKey })).keyId).toBe(plain.key.id);
  });

  it('when the same usage is recorded twice, then it is debited once and the key counters move once', async () => {
    const { deps, uow, clock } = setup();
    const { user, team } = await signUp(deps, { email: 'u@b.co', password: 'password1' });
    const { key } = await createApiKey(deps, { teamId: team.id, userId: user.id, name: 'k', expiresAt: null });
    const usage = {
      usageId: 'inf-1',
      teamId: team.id,
      keyId: key.id,
      model: 'm',
      inputTokens: 10n,
      outputTokens: 5n,
      costMicroCredits: 1234n,
      occurredAt: clock.now(),
    };
    expect(await recordUsage(deps, usage)).toBe('debited');
    expect(await recordUsage(deps, usage)).toBe('duplicate');
    expect(uow.state.teams.get(team.id)!.balanceMicroCredits).toBe(FREE_ALLOWANCE_MICRO - 1234n);
    expect(uow.state.keys.get(key.id)).toMatchObject({
      usageTokens: 15n,
      usageCostMicroCredits: 1234n,
      requestCount: 1n,
      lastUsedAt: clock.now(),
    });
  });

  it('when a free team spends its allowance, then the next check is 402 and a grant restores it', async () => {
    const { deps, clock } = setup();
    const { team } = await signUp(deps, { email: 'f@b.co', password: 'password1' });
    await recordUsage(deps, {
      usageId: 'all',
      teamId: team.id,
      keyId: '',
      model: 'm',
      inputTokens: 1n,
      outputTokens: 1n,
      costMicroCredits: FREE_ALLOWANCE_MICRO,
      occurredAt: clock.now(),
    });
    expect(
      await rejection(checkSpendable(deps, { teamId: team.id, estimatedCostMicroCredits: 1n, directModel: false })),
    ).toMatchObject({ kind: 'PaymentRequired', reason: 'OUT_OF_CREDITS' });
    await grantCredits(deps, { account: { email: 'f@b.co' }, microCredits: credits(5), note: 'top-up' });
    expect(await checkSpendable(deps, { teamId: team.id, estimatedCostMicroCredits: 1n, directModel: true })).toEqual({
      overage: false,
      balanceMicroCredits: credits(5),
    });
  });

  it('when monthly renewal runs twice in a month, then a paid team is renewed once and overage is invoiced', async () => {
    const { deps, uow, clock } = setup();
    const { team } = await signUp(deps, { email: 'p@b.co', password: 'password1' });
    const account = await changePlan(deps, {
      account: { teamId: team.id },
      plan: 'paid',
      includedMicroCredits: credits(1000),
      overageEnabled: true,
      overageCeilingMicroCredits: credits(100),
      paymentMethodVerified: true,
    });
    expect(account.balanceMicroCredits).toBe(credits(1000));
    await recordUsage(deps, {
      usageId: 'big',
      teamId: team.id,
      keyId: '',
      model: 'm',
      inputTokens: 1n,
      outputTokens: 1n,
      costMicroCredits: credits(1050),
      occurredAt: clock.now(),
    });
    expect(
      (await checkSpendable(deps, { teamId: team.id, estimatedCostMicroCredits: credits(10), directModel: false }))
        .overage,
    ).toBe(true);

    const december = new Date('2026-12-01T00:05:00Z');
    expect(await renewMonthly(deps, { now: december })).toEqual({
      billingMonth: '2026-12',
      renewed: 1,
      alreadyRenewed: 0,
    });
    expect(await renewMonthly(deps, { now: december })).toEqual({
      billingMonth: '2026-12',
      renewed: 0,
      alreadyRenewed: 1,
    });
    expect(uow.state.teams.get(team.id)!.balanceMicroCredits).toBe(credits(1000));
    expect(uow.state.ledger.slice(-2).map((e) => [e.kind, e.amountMicroCredits])).toEqual([
      ['overage_invoiced', credits(50)],
      ['plan_renewal', credits(1000)],
    ]);
  });

  it('when a transaction fails half-way, then none of its writes are kept', async () => {
    const { deps, uow } = setup();
    await signUp(deps, { email: 'r@b.co', password: 'password1' });
    const before = uow.state.ledger.length;
    await expect(
      uow.transaction(async (repos) => {
        await repos.outbox.append({ type: 'AccountBlocked', teamId: 'x', blocked: true });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(uow.state.events).toEqual([]);
    expect(uow.state.ledger.length).toBe(before);
  });
});
