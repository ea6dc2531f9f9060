import { isUuid } from '@whetstone/errors';
import type { ApiKey, LedgerEntry, PlanTerms, Session, Team, User } from '../domain/model';
import type {
  ApiKeyRepository,
  EventOutbox,
  LedgerRepository,
  NewLedgerEntry,
  NewTeam,
  Repositories,
  RenewalRepository,
  SessionRepository,
  TeamRepository,
  UnitOfWork,
  UserRepository,
} from '../domain/ports';
import { Prisma, type PrismaClient } from '../generated/prisma/client';

/** A Prisma client or an interactive-transaction client. */
export type Db = PrismaClient | Prisma.TransactionClient;

// Ids arrive from callers as strings; a non-UUID can match nothing, and must not reach a uuid column (isUuid).

const isUniqueViolation = (err: unknown) => err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';

type TeamRow = Prisma.TeamGetPayload<object>;
const toTeam = (row: TeamRow): Team => ({ ...row });
type LedgerRow = Prisma.LedgerEntryGetPayload<object>;
const toEntry = (row: LedgerRow): LedgerEntry => ({ ...row });

function users(db: Db): UserRepository {
  return {
    async create(user) {
      try {
        await db.user.create({ data: user });
        return true;
      } catch (err) {
        if (isUniqueViolation(err)) return false;
        throw err;
      }
    },
    findById: (id) => (isUuid(id) ? db.user.findUnique({ where: { id } }) : Promise.resolve(null)),
    findByEmail: (email) => db.user.findUnique({ where: { email } }),
    async listByTeam(teamId) {
      if (!isUuid(teamId)) return [];
      const rows = await db.teamMember.findMany({
        where: { teamId },
        include: { user: true },
        orderBy: { createdAt: 'asc' },
      });
      return rows.map((m): User => m.user);
    },
  };
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

function teams(db: Db, schema: string): TeamRepository {
  const table = Prisma.raw(`${quoteIdent(schema)}."teams"`);
  return {
    async create(team: NewTeam) {
      await db.team.create({ data: { ...team, members: { create: { userId: team.ownerUserId, role: 'owner' } } } });
    },
    async findById(id) {
      if (!isUuid(id)) return null;
      const row = await db.team.findUnique({ where: { id } });
      return row && toTeam(row);
    },
    async findByUserId(userId) {
      if (!isUuid(userId)) return null;
      const member = await db.teamMember.findFirst({
        where: { userId },
        orderBy: { createdAt: 'asc' },
        include: { team: true },
      });
      return member && toTeam(member.team);
    },
    async lock(id) {
      if (!isUuid(id)) return null;
      // Prisma has no SELECT ... FOR UPDATE; take the row lock, then read through Prisma.
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM ${table} WHERE id = ${id}::uuid FOR UPDATE`;
      if (locked.length === 0) return null;
      const row = await db.team.findUnique({ where: { id } });
      return row && toTeam(row);
    },
    async lockMany(ids) {
      const valid = ids.filter(isUuid).sort();
      if (valid.length === 0) return [];
      await db.$queryRaw`SELECT id FROM ${table} WHERE id = ANY(${valid}::uuid[]) ORDER BY id FOR UPDATE`;
      return (await db.team.findMany({ where: { id: { in: valid } } })).map(toTeam);
    },
    async isMember(teamId, userId) {
      if (!isUuid(teamId) || !isUuid(userId)) return false;
      return (await db.teamMember.count({ where: { teamId, userId } })) > 0;
    },
    async updateTerms(id, terms: PlanTerms) {
      await db.team.update({ where: { id }, data: terms });
    },
    async setBlocked(id, blocked, reason) {
      await db.team.update({ where: { id }, data: { blocked, blockedReason: reason } });
    },
    async setLastRenewedMonth(id, month) {
      await db.team.update({ where: { id }, data: { lastRenewedMonth: month } });
    },
    async listPaidTeamIds() {
      const rows = await db.team.findMany({
        where: { plan: 'paid' },
        select: { id: true },
        orderBy: { createdAt: 'asc' },
      });
      return rows.map((r) => r.id);
    },
  };
}

function sessions(db: Db): SessionRepository {
  return {
    async create(session: Session) {
      await db.session.create({ data: session });
    },
    findByTokenHash: (tokenHash) => db.session.findUnique({ where: { tokenHash } }),
    async deleteByTokenHash(tokenHash) {
      await db.session.deleteMany({ where: { tokenHash } });
    },
    async extend(id, expiresAt) {
      await db.session.update({ where: { id }, data: { expiresAt } });
    },
  };
}

function keys(db: Db, schema: string): ApiKeyRepository {
  const apiKeys = Prisma.raw(`${quoteIdent(schema)}."api_keys"`);
  const teamsTable = Prisma.raw(`${quoteIdent(schema)}."teams"`);
  return {
    async create(key: ApiKey) {
      await db.apiKey.create({ data: key });
    },
    async findBySecretHash(secretHash) {
      // The authentication hot path: one joined query (measured 0.7 ms vs 2 ms for findUnique + include).
      const rows = await db.$queryRaw<(ApiKey & { teamBlocked: boolean })[]>`
        SELECT k.id, k.team_id AS "teamId", k.user_id AS "userId", k.name, k.secret_hash AS "secretHash",
               k.last_digits AS "lastDigits", k.created_at AS "createdAt", k.expires_at AS "expiresAt",
               k.revoked_at AS "revokedAt", k.usage_tokens AS "usageTokens",
               k.usage_cost_micro_credits AS "usageCostMicroCredits", k.request_count AS "requestCount",
               k.last_used_at AS "lastUsedAt", t.blocked AS "teamBlocked"
        FROM ${apiKeys} k JOIN ${teamsTable} t ON t.id = k.team_id
        WHERE k.secret_hash = ${secretHash}`;
      const row = rows[0];
      if (!row) return null;
      const { teamBlocked, ...key } = row;
      return { key, teamBlocked };
    },
    findActive: (teamId, keyId) =>
      isUuid(teamId) && isUuid(keyId)
        ? db.apiKey.findFirst({ where: { id: keyId, teamId, revokedAt: null } })
        : Promise.resolve(null),
    listActive: (teamId) =>
      isUuid(teamId)
        ? db.apiKey.findMany({ where: { teamId, revokedAt: null }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] })
        : Promise.resolve([]),
    async revoke(keyId, at) {
      await db.apiKey.update({ where: { id: keyId }, data: { revokedAt: at } });
    },
    async addUsageTotals(totals) {
      const valid = totals.filter((t) => isUuid(t.keyId));
      if (valid.length === 0) return;
      // Usage events may arrive out of order; last_used_at only ever moves forward (GREATEST skips NULL).
      await db.$executeRaw`
        UPDATE ${apiKeys} k SET
          usage_tokens = k.usage_tokens + d.tokens,
          usage_cost_micro_credits = k.usage_cost_micro_credits + d.cost,
          request_count = k.request_count + d.requests,
          last_used_at = GREATEST(k.last_used_at, d.at)
        FROM unnest(${valid.map((t) => t.keyId)}::uuid[], ${valid.map((t) => String(t.tokens))}::bigint[],
                    ${valid.map((t) => String(t.costMicroCredits))}::bigint[], ${valid.map((t) => String(t.requests))}::bigint[],
                    ${valid.map((t) => t.lastUsedAt.toISOString())}::timestamptz[]) AS d(id, tokens, cost, requests, at)
        WHERE k.id = d.id`;
    },
  };
}

function ledger(db: Db, schema: string): LedgerRepository {
  const teamsTable = Prisma.raw(`${quoteIdent(schema)}."teams"`);
  return {
    async append(entry: NewLedgerEntry) {
      // The UPDATE takes the team's row lock, so balance-after is exact under concurrency.
      const team = await db.team.update({
        where: { id: entry.teamId },
        data: { balanceMicroCredits: { increment: entry.amountMicroCredits } },
        select: { balanceMicroCredits: true },
      });
      const row = await db.ledgerEntry.create({
        data: {
          id: entry.id,
          teamId: entry.teamId,
          kind: entry.kind,
          amountMicroCredits: entry.amountMicroCredits,
          balanceAfterMicroCredits: team.balanceMicroCredits,
          note: entry.note,
          usageId: entry.usageId ?? null,
          keyId: entry.keyId && isUuid(entry.keyId) ? entry.keyId : null,
          createdAt: entry.createdAt,
        },
      });
      return toEntry(row);
    },
    async appendUsageDebits(debits) {
      await db.ledgerEntry.createMany({
        data: debits.map((d) => ({ ...d, kind: 'usage', keyId: d.keyId && isUuid(d.keyId) ? d.keyId : null })),
      });
      const byTeam = new Map<string, bigint>();
      for (const d of debits) byTeam.set(d.teamId, (byTeam.get(d.teamId) ?? 0n) + d.amountMicroCredits);
      await db.$executeRaw`
        UPDATE ${teamsTable} t SET balance_micro_credits = t.balance_micro_credits + d.delta, updated_at = now()
        FROM unnest(${[...byTeam.keys()]}::uuid[], ${[...byTeam.values()].map(String)}::bigint[]) AS d(id, delta)
        WHERE t.id = d.id`;
    },
    async debitedAmong(usageIds) {
      const rows = await db.ledgerEntry.findMany({ where: { usageId: { in: usageIds } }, select: { usageId: true } });
      return new Set(rows.map((r) => r.usageId!));
    },
    hasGrant: async (teamId) =>
      isUuid(teamId) && (await db.ledgerEntry.count({ where: { teamId, kind: 'grant' } })) > 0,
    async usageSince(teamId, since) {
      const sum = await db.ledgerEntry.aggregate({
        where: { teamId, kind: 'usage', createdAt: { gte: since } },
        _sum: { amountMicroCredits: true },
      });
      return -(sum._sum.amountMicroCredits ?? 0n);
    },
    async recent(teamId, limit) {
      const rows = await db.ledgerEntry.findMany({
        where: { teamId },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit,
      });
      return rows.map(toEntry);
    },
  };
}

function renewals(db: Db): RenewalRepository {
  return {
    async claim(teamId, month) {
      const result = await db.planRenewal.createMany({ data: [{ teamId, billingMonth: month }], skipDuplicates: true });
      return result.count === 1;
    },
  };
}

/** Builds the outbox bound to a transaction (or to no transaction). */
export type OutboxFactory = (db: Db) => EventOutbox;

/** The Prisma-backed unit of work over the service's schema. */
export function createPrismaUnitOfWork(prisma: PrismaClient, schema: string, outbox: OutboxFactory): UnitOfWork {
  const bind = (db: Db): Repositories => ({
    users: users(db),
    teams: teams(db, schema),
    sessions: sessions(db),
    keys: keys(db, schema),
    ledger: ledger(db, schema),
    renewals: renewals(db),
    outbox: outbox(db),
  });
  return {
    repos: bind(prisma),
    transaction: (work) => prisma.$transaction((tx) => work(bind(tx)), { timeout: 15_000, maxWait: 10_000 }),
  };
}
