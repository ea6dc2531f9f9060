import type { ApiKey, KeyBillingEvent, LedgerEntry, Session, Team, User } from '../../src/domain/model';
import type {
  ApiKeyRepository,
  Clock,
  EventOutbox,
  LedgerRepository,
  PasswordHasher,
  RenewalRepository,
  Repositories,
  SessionRepository,
  TeamRepository,
  UnitOfWork,
  UserRepository,
} from '../../src/domain/ports';

/** In-memory state behind the ports, for unit tests of domain rules and use cases. */
export interface MemoryState {
  users: Map<string, User>;
  teams: Map<string, Team>;
  members: { teamId: string; userId: string }[];
  sessions: Map<string, Session>;
  keys: Map<string, ApiKey>;
  ledger: LedgerEntry[];
  renewals: Set<string>;
  events: KeyBillingEvent[];
}

/**
 * A fake UnitOfWork: transactions run against a copy of the state that is
 * committed only if the work succeeds, so rollback behaviour is real.
 */
export function createInMemoryUnitOfWork(): UnitOfWork & { state: MemoryState } {
  let state: MemoryState = emptyState();

  const bind = (s: () => MemoryState): Repositories => ({
    users: memoryUsers(s),
    teams: memoryTeams(s),
    sessions: memorySessions(s),
    keys: memoryKeys(s),
    ledger: memoryLedger(s),
    renewals: memoryRenewals(s),
    outbox: memoryOutbox(s),
  });

  return {
    get state() {
      return state;
    },
    repos: bind(() => state),
    async transaction(work) {
      const draft = copyState(state);
      const result = await work(bind(() => draft));
      state = draft;
      return result;
    },
  };
}

function memoryUsers(s: () => MemoryState): UserRepository {
  return {
    async create(user) {
      if ([...s().users.values()].some((u) => u.email === user.email)) return false;
      s().users.set(user.id, { ...user });
      return true;
    },
    findById: async (id) => s().users.get(id) ?? null,
    findByEmail: async (email) => [...s().users.values()].find((u) => u.email === email) ?? null,
    listByTeam: async (teamId) =>
      s()
        .members.filter((m) => m.teamId === teamId)
        .map((m) => s().users.get(m.userId)!),
  };
}

function memoryTeams(s: () => MemoryState): TeamRepository {
  return {
    async create(team) {
      s().teams.set(team.id, { ...team, balanceMicroCredits: 0n, lastRenewedMonth: null });
      s().members.push({ teamId: team.id, userId: team.ownerUserId });
    },
    findById: async (id) => clone(s().teams.get(id)),
    findByUserId: async (userId) => clone(s().teams.get(s().members.find((m) => m.userId === userId)?.teamId ?? '')),
    lock: async (id) => clone(s().teams.get(id)),
    lockMany: async (ids) =>
      [...ids]
        .sort()
        .map((id) => clone(s().teams.get(id)))
        .filter((t): t is Team => t !== null),
    isMember: async (teamId, userId) => s().members.some((m) => m.teamId === teamId && m.userId === userId),
    async updateTerms(id, terms) {
      Object.assign(s().teams.get(id)!, terms);
    },
    async setBlocked(id, blocked, reason) {
      Object.assign(s().teams.get(id)!, { blocked, blockedReason: reason });
    },
    async setLastRenewedMonth(id, month) {
      s().teams.get(id)!.lastRenewedMonth = month;
    },
    listPaidTeamIds: async () => [...s().teams.values()].filter((t) => t.plan === 'paid').map((t) => t.id),
  };
}

function memorySessions(s: () => MemoryState): SessionRepository {
  return {
    async create(session) {
      s().sessions.set(session.tokenHash, { ...session });
    },
    findByTokenHash: async (hash) => s().sessions.get(hash) ?? null,
    async deleteByTokenHash(hash) {
      s().sessions.delete(hash);
    },
    async extend(id, expiresAt) {
      for (const session of s().sessions.values()) if (session.id === id) session.expiresAt = expiresAt;
    },
  };
}

function memoryKeys(s: () => MemoryState): ApiKeyRepository {
  return {
    async create(key) {
      s().keys.set(key.id, { ...key });
    },
    async findBySecretHash(hash) {
      const key = [...s().keys.values()].find((k) => k.secretHash === hash);
      return key ? { key: { ...key }, teamBlocked: s().teams.get(key.teamId)?.blocked ?? false } : null;
    },
    findActive: async (teamId, keyId) => {
      const key = s().keys.get(keyId);
      return key && key.teamId === teamId && !key.revokedAt ? { ...key } : null;
    },
    listActive: async (teamId) =>
      [...s().keys.values()]
        .filter((k) => k.teamId === teamId && !k.revokedAt)
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()),
    async revoke(keyId, at) {
      s().keys.get(keyId)!.revokedAt = at;
    },
    async addUsageTotals(totals) {
      for (const t of totals) {
        const key = s().keys.get(t.keyId);
        if (!key) continue;
        key.usageTokens += t.tokens;
        key.usageCostMicroCredits += t.costMicroCredits;
        key.requestCount += t.requests;
        if (!key.lastUsedAt || key.lastUsedAt < t.lastUsedAt) key.lastUsedAt = t.lastUsedAt;
      }
    },
  };
}

function memoryLedger(s: () => MemoryState): LedgerRepository {
  return {
    async append(entry) {
      const team = s().teams.get(entry.teamId)!;
      team.balanceMicroCredits += entry.amountMicroCredits;
      const row: LedgerEntry = {
        usageId: null,
        keyId: null,
        ...entry,
        balanceAfterMicroCredits: team.balanceMicroCredits,
      };
      s().ledger.push(row);
      return { ...row };
    },
    async appendUsageDebits(debits) {
      for (const d of debits) {
        if (s().ledger.some((e) => e.usageId === d.usageId)) throw new Error(`unique violation: usage_id ${d.usageId}`);
        s().teams.get(d.teamId)!.balanceMicroCredits += d.amountMicroCredits;
        s().ledger.push({ ...d, kind: 'usage' });
      }
    },
    debitedAmong: async (ids) =>
      new Set(s().ledger.flatMap((e) => (e.usageId && ids.includes(e.usageId) ? [e.usageId] : []))),
    hasGrant: async (teamId) => s().ledger.some((e) => e.teamId === teamId && e.kind === 'grant'),
    usageSince: async (teamId, since) =>
      -s()
        .ledger.filter((e) => e.teamId === teamId && e.kind === 'usage' && e.createdAt >= since)
        .reduce((sum, e) => sum + e.amountMicroCredits, 0n),
    recent: async (teamId, limit) =>
      s()
        .ledger.filter((e) => e.teamId === teamId)
        .reverse()
        .slice(0, limit),
  };
}

function memoryRenewals(s: () => MemoryState): RenewalRepository {
  return {
    async claim(teamId, month) {
      const key = `${teamId}/${month}`;
      if (s().renewals.has(key)) return false;
      s().renewals.add(key);
      return true;
    },
  };
}

function memoryOutbox(s: () => MemoryState): EventOutbox {
  return {
    async append(event) {
      s().events.push(event);
    },
  };
}

function emptyState(): MemoryState {
  return {
    users: new Map(),
    teams: new Map(),
    members: [],
    sessions: new Map(),
    keys: new Map(),
    ledger: [],
    renewals: new Set(),
    events: [],
  };
}

function clone<T extends object>(value: T | undefined): T | null {
  return value ? { ...value } : null;
}

function copyState(s: MemoryState): MemoryState {
  const copyMap = <T extends object>(m: Map<string, T>) => new Map([...m].map(([k, v]) => [k, { ...v }]));
  return {
    users: copyMap(s.users),
    teams: copyMap(s.teams),
    members: [...s.members],
    sessions: copyMap(s.sessions),
    keys: copyMap(s.keys),
    ledger: s.ledger.map((e) => ({ ...e })),
    renewals: new Set(s.renewals),
    events: [...s.events],
  };
}

/** A clock the test moves by hand. */
export function fixedClock(start: Date): Clock & { set(at: Date): void; advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    set: (at) => {
      now = at;
    },
    advance: (ms) => {
      now = new Date(now.getTime() + ms);
    },
  };
}

/** A reversible, instant "hash" so unit tests don't pay for scrypt. */
export const plainPasswordHasher: PasswordHasher = {
  hash: async (password) => `plain$${password}`,
  verify: async (password, stored) => stored === `plain$${password}`,
};
