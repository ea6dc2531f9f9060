import { createPrismaUnitOfWork } from '../../src/adapters/prisma.repositories';
import { systemClock } from '../../src/adapters/system-clock';
import { recordUsage } from '../../src/application/billing';
import type { UseCaseDeps } from '../../src/application/deps';
import { signUp } from '../../src/application/sign-up';
import { FREE_ALLOWANCE_MICRO } from '../../src/domain/money';
import { plainPasswordHasher } from '../fakes/in-memory-unit-of-work';
import { createKeyBillingDatabase } from '../factories/database';

describe('ledger on real Postgres', () => {
  let db: Awaited<ReturnType<typeof createKeyBillingDatabase>>;
  let deps: UseCaseDeps;
  beforeAll(async () => {
    db = await createKeyBillingDatabase('kb_ledger');
    const uow = createPrismaUnitOfWork(db.prisma, db.schema.name, () => ({ append: async () => undefined }));
    deps = { uow, clock: systemClock, passwords: plainPasswordHasher };
  });
  afterAll(() => db.close());

  it('when the same usage is delivered concurrently, then exactly one debit is written and the cached balance equals the ledger sum', async () => {
    const { team } = await signUp(deps, { email: 'race@example.com', password: 'password1' });
    const usage = {
      usageId: 'inf-race',
      teamId: team.id,
      keyId: '',
      model: 'm',
      inputTokens: 3n,
      outputTokens: 4n,
      costMicroCredits: 2_500n,
      occurredAt: new Date(),
    };
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => recordUsage(deps, usage)));
    expect(outcomes.filter((o) => o === 'debited')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(3);

    const entries = await db.prisma.ledgerEntry.findMany({ where: { teamId: team.id } });
    const ledgerSum = entries.reduce((sum, e) => sum + e.amountMicroCredits, 0n);
    const row = await db.prisma.team.findUniqueOrThrow({ where: { id: team.id } });
    expect(entries.filter((e) => e.usageId === 'inf-race')).toHaveLength(1);
    expect(row.balanceMicroCredits).toBe(FREE_ALLOWANCE_MICRO - 2_500n);
    expect(row.balanceMicroCredits).toBe(ledgerSum);
  });

  it('when usage names an unknown team, then nothing is written', async () => {
    const outcome = await recordUsage(deps, {
      usageId: 'inf-ghost',
      teamId: '00000000-0000-4000-8000-000000000000',
      keyId: '',
      model: 'm',
      inputTokens: 1n,
      outputTokens: 1n,
      costMicroCredits: 1n,
      occurredAt: new Date(),
    });
    expect(outcome).toBe('unknown_team');
    expect(await db.prisma.ledgerEntry.count({ where: { usageId: 'inf-ghost' } })).toBe(0);
  });
});
