import { create, fromBinary } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { UsageRecordedSchema } from '@whetstone/proto/inference/v1';
import { AccountBlockedSchema, KeyRevokedSchema } from '@whetstone/proto/keybilling/v1';
import { Plan } from '@whetstone/proto/keybilling/v1';
import { runAdminCli } from '../../src/cli/admin';
import { FREE_ALLOWANCE_MICRO, MICRO_PER_CREDIT } from '../../src/domain/money';
import { rpcError, startHarness, type Harness } from './harness';

const credits = (n: number) => BigInt(n) * MICRO_PER_CREDIT;
let seq = 0;
const email = () => `user${++seq}-${Date.now().toString(36)}@example.com`;

describe('key-billing over gRPC (real Postgres, service on port 0)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  async function signedUp() {
    const address = email();
    const res = await h.client.signUp({ email: address, password: 'correct horse battery' });
    return { email: address, user: res.user!, team: res.team! };
  }

  it('when a user signs up, logs in, reads the session and logs out, then the session stops working', async () => {
    const { email: address, user, team } = await signedUp();
    expect(team).toMatchObject({ plan: Plan.FREE, ownerUserId: user.id, blocked: false });

    const login = await h.client.logIn({ email: address.toUpperCase(), password: 'correct horse battery' });
    expect(login.sessionToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(login.csrfToken).not.toBe(login.sessionToken);
    expect(login.user?.id).toBe(user.id);
    const stored = await h.db.prisma.session.findFirstOrThrow({ where: { userId: user.id } });
    expect(stored.tokenHash).not.toContain(login.sessionToken);

    const session = await h.client.getSession({ sessionToken: login.sessionToken });
    expect(session).toMatchObject({ csrfToken: login.csrfToken, user: { id: user.id }, team: { id: team.id } });
    expect(Number(session.expiresAt!.seconds) * 1000).toBeGreaterThan(Date.now() + 29 * 24 * 3600 * 1000);

    await h.client.logOut({ sessionToken: login.sessionToken });
    expect(await rpcError(h.client.getSession({ sessionToken: login.sessionToken }))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'SESSION_REQUIRED',
    });
    expect(await rpcError(h.client.logIn({ email: address, password: 'wrong password!' }))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'INVALID_CREDENTIALS',
    });
    expect(await rpcError(h.client.signUp({ email: address, password: 'another password' }))).toMatchObject({
      kind: 'AlreadyExists',
      reason: 'EMAIL_TAKEN',
    });
  });

  it('when a key is created, used, listed and revoked, then the secret is shown once and a KeyRevoked event is in the outbox', async () => {
    const { user, team } = await signedUp();
    const created = await h.client.createApiKey({ teamId: team.id, userId: user.id, name: 'ci' });
    expect(created.secretKey).toMatch(/^wst_sk_[A-Za-z0-9_-]{43}$/);
    expect(created.paymentCustomerCreated).toBe(false);
    expect(created.key).toMatchObject({ name: 'ci', teamId: team.id, apiKeyLastDigits: created.secretKey.slice(-4) });

    const auth = await h.client.authenticateApiKey({ secretKey: created.secretKey });
    expect(auth.caller).toMatchObject({ keyId: created.key!.id, teamId: team.id, userId: user.id });

    const list = await h.client.listApiKeys({ teamId: team.id });
    expect(list.keys).toHaveLength(1);
    expect(JSON.stringify(list.keys, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(
      created.secretKey.slice(7),
    );
    expect(list.keys[0]).toMatchObject({
      id: created.key!.id,
      apiKeyLastDigits: created.secretKey.slice(-4),
      requestCount: 0n,
      usageCost: 0,
    });

    const other = await signedUp();
    expect(await rpcError(h.client.revokeApiKey({ teamId: other.team.id, keyId: created.key!.id }))).toMatchObject({
      kind: 'NotFound',
      reason: 'API_KEY_NOT_FOUND',
    });

    const revoked = await h.client.revokeApiKey({ teamId: team.id, keyId: created.key!.id });
    expect(revoked).toMatchObject({ success: true, message: 'API key revoked.' });
    expect(await rpcError(h.client.authenticateApiKey({ secretKey: created.secretKey }))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'API_KEY_REVOKED',
    });
    expect((await h.client.listApiKeys({ teamId: team.id })).keys).toEqual([]);

    const events = await h.db.prisma.outboxEvent.findMany({ where: { topic: 'keys.v1', key: team.id } });
    expect(events.map((e) => e.type)).toEqual(['whetstone.keybilling.v1.KeyRevoked']);
    expect(fromBinary(KeyRevokedSchema, events[0]!.payload)).toMatchObject({ keyId: created.key!.id, teamId: team.id });
  });

  it('when an account is blocked, then its keys fail with ACCOUNT_BLOCKED until it is unblocked', async () => {
    const { user, team, email: address } = await signedUp();
    const { secretKey } = await h.client.createApiKey({ teamId: team.id, userId: user.id, name: 'k' });
    const blocked = await h.admin.setAccountBlocked({
      account: { selector: { case: 'email', value: address } },
      blocked: true,
      reason: 'fraud review',
    });
    expect(blocked.account?.team).toMatchObject({ blocked: true, blockedReason: 'fraud review' });
    expect(await rpcError(h.client.authenticateApiKey({ secretKey }))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'ACCOUNT_BLOCKED',
    });

    await h.admin.setAccountBlocked({
      account: { selector: { case: 'teamId', value: team.id } },
      blocked: false,
      reason: '',
    });
    expect((await h.client.authenticateApiKey({ secretKey })).caller?.teamId).toBe(team.id);
    const events = await h.db.prisma.outboxEvent.findMany({ where: { key: team.id }, orderBy: { id: 'asc' } });
    expect(events.map((e) => fromBinary(AccountBlockedSchema, e.payload).blocked)).toEqual([true, false]);
    expect(await rpcError(h.client.authenticateApiKey({ secretKey: 'wst_sk_' + 'A'.repeat(43) }))).toMatchObject({
      reason: 'API_KEY_INVALID',
    });
  });

  it('when a key passes its expiry, then it fails with API_KEY_EXPIRED', async () => {
    const { user, team } = await signedUp();
    const created = await h.client.createApiKey({
      teamId: team.id,
      userId: user.id,
      name: 'temp',
      expiresAt: timestampFromDate(new Date(Date.now() + 3_600_000)),
    });
    expect((await h.client.authenticateApiKey({ secretKey: created.secretKey })).caller?.keyId).toBe(created.key!.id);
    await h.db.prisma.apiKey.update({
      where: { id: created.key!.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(await rpcError(h.client.authenticateApiKey({ secretKey: created.secretKey }))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'API_KEY_EXPIRED',
    });
    expect(
      await rpcError(
        h.client.createApiKey({
          teamId: team.id,
          userId: user.id,
          name: 'past',
          expiresAt: timestampFromDate(new Date(Date.now() - 1000)),
        }),
      ),
    ).toMatchObject({
      kind: 'InvalidArgument',
      reason: 'VALIDATION_FAILED',
    });
  });

  it('when the same UsageRecorded is delivered twice, then the team is debited once and the key shows the usage', async () => {
    const { user, team } = await signedUp();
    const { key } = await h.client.createApiKey({ teamId: team.id, userId: user.id, name: 'metered' });
    const occurredAt = new Date('2026-11-20T10:00:00Z');
    const event = create(UsageRecordedSchema, {
      usageId: `inf-${team.id}`,
      teamId: team.id,
      keyId: key!.id,
      model: 'whetstone-extract-small',
      inputTokens: 120n,
      outputTokens: 30n,
      costMicroCredits: 1_500_000n,
      occurredAt: timestampFromDate(occurredAt),
    });
    expect(await h.app.onUsageRecorded(event)).toBe('debited');
    expect(await h.app.onUsageRecorded(event)).toBe('duplicate');

    const usage = await h.client.getUsage({ teamId: team.id });
    expect(usage.account?.balanceMicroCredits).toBe(FREE_ALLOWANCE_MICRO - 1_500_000n);
    expect(usage.recentEntries.filter((e) => e.usageId === event.usageId)).toHaveLength(1);
    expect(usage.keys[0]).toMatchObject({
      id: key!.id,
      usageTokens: 150n,
      usageCostMicroCredits: 1_500_000n,
      usageCost: 1.5,
      requestCount: 1n,
    });
    expect(Number(usage.keys[0]!.lastUsedAt!.seconds) * 1000).toBe(occurredAt.getTime());
  });

  it('when usage arrives in batches, then each usage id is debited once, across teams, within and across batches', async () => {
    const a = (await signedUp()).team.id;
    const b = (await signedUp()).team.id;
    const usage = (team: string, id: string) =>
      create(UsageRecordedSchema, { usageId: `${id}-${team}`, teamId: team, model: 'm', costMicroCredits: 1_000n });
    const first = [usage(a, 'u1'), usage(b, 'u1'), usage(a, 'u2'), usage(a, 'u1')];
    expect(await h.app.onUsageRecordedBatch(first)).toEqual(['debited', 'debited', 'debited', 'duplicate']);
    expect(
      await h.app.onUsageRecordedBatch([
        usage(b, 'u1'),
        usage(b, 'u2'),
        usage('00000000-0000-4000-8000-000000000000', 'x'),
      ]),
    ).toEqual(['duplicate', 'debited', 'unknown_team']);
    expect((await h.client.getUsage({ teamId: a })).account?.balanceMicroCredits).toBe(FREE_ALLOWANCE_MICRO - 2_000n);
    expect((await h.client.getUsage({ teamId: b })).account?.balanceMicroCredits).toBe(FREE_ALLOWANCE_MICRO - 2_000n);
  });

  it('when a free team has no balance left, then CheckSpendable is 402 OUT_OF_CREDITS with a resolution url', async () => {
    const { team } = await signedUp();
    expect(await h.client.checkSpendable({ teamId: team.id, estimatedCostMicroCredits: 1n })).toMatchObject({
      ok: true,
      balanceMicroCredits: FREE_ALLOWANCE_MICRO,
    });
    await h.app.onUsageRecorded(
      create(UsageRecordedSchema, {
        usageId: `all-${team.id}`,
        teamId: team.id,
        model: 'm',
        costMicroCredits: FREE_ALLOWANCE_MICRO,
      }),
    );
    const err = await rpcError(h.client.checkSpendable({ teamId: team.id, estimatedCostMicroCredits: 1n }));
    expect(err).toMatchObject({ kind: 'PaymentRequired', reason: 'OUT_OF_CREDITS' });
    expect(err.metadata.resolution_url).toBe('/dashboard#credits');
    expect(await rpcError(h.client.checkSpendable({ teamId: team.id, directModel: true }))).toMatchObject({
      reason: 'DIRECT_MODEL_REQUIRES_CREDITS',
    });

    const metrics = await fetch(h.metricsUrl);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(
      /key_billing_rpc_handled_total\{method="CheckSpendable",outcome="OUT_OF_CREDITS"\} [1-9]/,
    );
  });

  it('when a paid team draws overage, then it is allowed below the ceiling and 403 CREDIT_CEILING_REACHED past it', async () => {
    const { team } = await signedUp();
    const plan = await h.admin.changePlan({
      account: { selector: { case: 'teamId', value: team.id } },
      plan: Plan.PAID,
      includedMicroCredits: credits(1000),
      overageEnabled: true,
      overageCeilingMicroCredits: credits(100),
      paymentMethodVerified: true,
    });
    expect(plan.account).toMatchObject({ includedMicroCredits: credits(1000), overageEnabled: true });
    const balance = plan.account!.balanceMicroCredits;
    await h.app.onUsageRecorded(
      create(UsageRecordedSchema, {
        usageId: `big-${team.id}`,
        teamId: team.id,
        model: 'm',
        costMicroCredits: balance + credits(60),
      }),
    );

    expect(await h.client.checkSpendable({ teamId: team.id, estimatedCostMicroCredits: credits(30) })).toMatchObject({
      ok: true,
      overage: true,
      balanceMicroCredits: -credits(60),
    });
    const err = await rpcError(h.client.checkSpendable({ teamId: team.id, estimatedCostMicroCredits: credits(50) }));
    expect(err).toMatchObject({ kind: 'PermissionDenied', reason: 'CREDIT_CEILING_REACHED' });
    expect(err.metadata.resolution_url).toBe('/dashboard#credits');
    expect((await h.client.getUsage({ teamId: team.id })).account?.overageUsedMicroCredits).toBe(credits(60));
  });

  it('when monthly renewal runs twice for the same month, then each paid team is renewed once', async () => {
    const { team } = await signedUp();
    await h.admin.changePlan({
      account: { selector: { case: 'teamId', value: team.id } },
      plan: Plan.PAID,
      includedMicroCredits: credits(200),
    });
    await h.app.onUsageRecorded(
      create(UsageRecordedSchema, {
        usageId: `r-${team.id}`,
        teamId: team.id,
        model: 'm',
        costMicroCredits: credits(650),
      }),
    );
    // Far future, so no other test's team was renewed for this month yet.
    const now = timestampFromDate(new Date(`2199-0${1 + (seq % 9)}-02T00:00:00Z`));
    const first = await h.admin.renewMonthly({ now });
    const second = await h.admin.renewMonthly({ now });
    expect(first.renewedCount).toBeGreaterThanOrEqual(1);
    expect(second).toMatchObject({
      billingMonth: first.billingMonth,
      renewedCount: 0,
      alreadyRenewedCount: first.renewedCount + first.alreadyRenewedCount,
    });
    const shown = await h.admin.getAccount({ account: { selector: { case: 'teamId', value: team.id } } });
    expect(shown.account).toMatchObject({ balanceMicroCredits: credits(200), lastRenewedMonth: first.billingMonth });
    expect(await h.db.prisma.planRenewal.count({ where: { teamId: team.id, billingMonth: first.billingMonth } })).toBe(
      1,
    );
  });

  it('when the admin CLI grants credits by email, then the balance grows and `show` prints it', async () => {
    const { email: address, team } = await signedUp();
    let out = '';
    let err = '';
    const io = {
      out: (t: string) => void (out += t),
      err: (t: string) => void (err += t),
      env: { KEY_BILLING_ADDR: h.addr },
    };
    expect(
      await runAdminCli(['grant-credits', '--email', address, '--credits', '12.5', '--note', 'goodwill'], io),
    ).toBe(0);
    expect(err).toBe('');
    expect(out).toContain('Granted 12.5 credits.');
    expect(out).toContain('512.5 credits');
    const usage = await h.client.getUsage({ teamId: team.id });
    expect(usage.account?.balanceMicroCredits).toBe(FREE_ALLOWANCE_MICRO + 12_500_000n);
    expect(usage.recentEntries[0]).toMatchObject({ amountMicroCredits: 12_500_000n, note: 'goodwill' });

    out = '';
    expect(await runAdminCli(['show', '--team', team.id], io)).toBe(0);
    expect(out).toMatch(/Balance\s+512\.5 credits/);
    expect(out).toContain(address);
    expect(await runAdminCli(['grant-credits', '--email', address], io)).toBe(2);
    expect(err).toContain('--credits must be a number');
    err = '';
    expect(await runAdminCli(['show', '--email', 'nobody@example.com'], io)).toBe(1);
    expect(err).toContain('USER_NOT_FOUND');
  });
});

describe('admin token guard', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ adminToken: 'test-admin-token-0123456789' });
  });
  afterAll(() => h.close());

  it('when ADMIN_TOKEN is set, then admin calls without it are Unauthenticated and the CLI with it succeeds', async () => {
    expect(await rpcError(h.admin.renewMonthly({}))).toMatchObject({
      kind: 'Unauthenticated',
      reason: 'ADMIN_TOKEN_INVALID',
    });
    let out = '';
    const io = {
      out: (t: string) => void (out += t),
      err: () => undefined,
      env: { KEY_BILLING_ADDR: h.addr, ADMIN_TOKEN: 'test-admin-token-0123456789' },
    };
    expect(await runAdminCli(['renew'], io)).toBe(0);
    expect(out).toMatch(/Billing month \d{4}-\d{2}: 0 team\(s\) renewed/);
  });
});
