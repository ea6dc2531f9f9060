import type { ApiKey, KeyBillingEvent, LedgerEntry, LedgerEntryKind, PlanTerms, Session, Team, User } from './model';
import type { KeyUsageTotal, UsageDebit } from './usage-debits';

/** The time source; tests pass a fixed clock. */
export interface Clock {
  now(): Date;
}

/** Slow, salted password hashing (scrypt in production). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
}

export interface UserRepository {
  /** Inserts; returns false when the email is taken. */
  create(user: User): Promise<boolean>;
  findById(id: string): Promise<User | null>;
  findByEmail(email: string): Promise<User | null>;
  listByTeam(teamId: string): Promise<User[]>;
}

export type NewTeam = Omit<Team, 'balanceMicroCredits' | 'lastRenewedMonth'>;

export interface TeamRepository {
  /** Creates the team with its owner as the first member and a zero balance. */
  create(team: NewTeam): Promise<void>;
  findById(id: string): Promise<Team | null>;
  /** The team a user belongs to (the one they own first). */
  findByUserId(userId: string): Promise<Team | null>;
  /** Locks the team row until the transaction ends and returns it; serialises balance changes. */
  lock(id: string): Promise<Team | null>;
  /** Locks several teams' rows in id order (so batches never deadlock) and returns those that exist. */
  lockMany(ids: string[]): Promise<Team[]>;
  isMember(teamId: string, userId: string): Promise<boolean>;
  updateTerms(id: string, terms: PlanTerms): Promise<void>;
  setBlocked(id: string, blocked: boolean, reason: string): Promise<void>;
  setLastRenewedMonth(id: string, month: string): Promise<void>;
  listPaidTeamIds(): Promise<string[]>;
}

export interface SessionRepository {
  create(session: Session): Promise<void>;
  findByTokenHash(tokenHash: string): Promise<Session | null>;
  deleteByTokenHash(tokenHash: string): Promise<void>;
  extend(id: string, expiresAt: Date): Promise<void>;
}

/** An API key with the state of its team, as authentication needs it. */
export interface ApiKeyWithTeam {
  key: ApiKey;
  teamBlocked: boolean;
}

export interface ApiKeyRepository {
  create(key: ApiKey): Promise<void>;
  findBySecretHash(secretHash: string): Promise<ApiKeyWithTeam | null>;
  /** Active (not revoked) key of the team, or null. */
  findActive(teamId: string, keyId: string): Promise<ApiKey | null>;
  /** Active keys of the team, newest first. */
  listActive(teamId: string): Promise<ApiKey[]>;
  revoke(keyId: string, at: Date): Promise<void>;
  /** Adds a batch's metered requests to each key's counters in one statement; unknown keys are skipped. */
  addUsageTotals(totals: KeyUsageTotal[]): Promise<void>;
}

export interface NewLedgerEntry {
  id: string;
  teamId: string;
  kind: LedgerEntryKind;
  amountMicroCredits: bigint;
  note: string;
  usageId?: string | null;
  keyId?: string | null;
  createdAt: Date;
}

export interface LedgerRepository {
  /**
   * Appends an entry and moves the team's cached balance by its amount in the
   * same transaction; returns the entry with its balance-after.
   */
  append(entry: NewLedgerEntry): Promise<LedgerEntry>;
  /**
   * Inserts a batch's usage debits in one statement and moves each team's
   * cached balance once, by the sum of its debits. The caller holds the teams'
   * row locks, which is what makes the precomputed balance-after exact.
   */
  appendUsageDebits(debits: UsageDebit[]): Promise<void>;
  /** Which of these usage ids already have a debit. */
  debitedAmong(usageIds: string[]): Promise<Set<string>>;
  hasGrant(teamId: string): Promise<boolean>;
  /** Sum of usage debits since `since`, as a positive number. */
  usageSince(teamId: string, since: Date): Promise<bigint>;
  recent(teamId: string, limit: number): Promise<LedgerEntry[]>;
}

export interface RenewalRepository {
  /** Records that `teamId` was renewed for `month`; false when it already was. */
  claim(teamId: string, month: string): Promise<boolean>;
}

/** The transactional outbox: events committed with the state change that caused them. */
export interface EventOutbox {
  append(event: KeyBillingEvent): Promise<void>;
}

/** Every repository, bound to one transaction (or to none for plain reads). */
export interface Repositories {
  users: UserRepository;
  teams: TeamRepository;
  sessions: SessionRepository;
  keys: ApiKeyRepository;
  ledger: LedgerRepository;
  renewals: RenewalRepository;
  outbox: EventOutbox;
}

/** Runs work atomically: all of it commits, or none of it does. */
export interface UnitOfWork {
  /** Repositories outside any transaction, for reads and single writes. */
  readonly repos: Repositories;
  transaction<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
}
