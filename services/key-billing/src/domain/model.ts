/** The entities key-billing owns. Plain data; rules live in the sibling modules. */

export type Plan = 'free' | 'paid';

export type LedgerEntryKind =
  'signup_allowance' | 'grant' | 'plan_renewal' | 'usage' | 'overage_invoiced' | 'adjustment';

export interface User {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
}

/** A team's commercial terms as the operator set them. */
export interface PlanTerms {
  plan: Plan;
  includedMicroCredits: bigint;
  overageEnabled: boolean;
  overageCeilingMicroCredits: bigint;
  paymentMethodVerified: boolean;
}

export interface Team extends PlanTerms {
  id: string;
  name: string;
  ownerUserId: string;
  blocked: boolean;
  blockedReason: string;
  /** Cached running balance; always equal to the sum of the team's ledger. */
  balanceMicroCredits: bigint;
  lastRenewedMonth: string | null;
  createdAt: Date;
}

export interface Session {
  id: string;
  tokenHash: string;
  userId: string;
  teamId: string;
  csrfToken: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface ApiKey {
  id: string;
  teamId: string;
  userId: string;
  name: string;
  secretHash: string;
  lastDigits: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  usageTokens: bigint;
  usageCostMicroCredits: bigint;
  requestCount: bigint;
  lastUsedAt: Date | null;
}

export interface LedgerEntry {
  id: string;
  teamId: string;
  kind: LedgerEntryKind;
  /** Signed; debits are negative. */
  amountMicroCredits: bigint;
  balanceAfterMicroCredits: bigint;
  note: string;
  usageId: string | null;
  keyId: string | null;
  createdAt: Date;
}

/** Events key-billing publishes on `keys.v1`, written in the same transaction as the change. */
export type KeyBillingEvent =
  { type: 'KeyRevoked'; keyId: string; teamId: string } | { type: 'AccountBlocked'; teamId: string; blocked: boolean };

/** One metered request, as consumed from `billing.usage.v1`. */
export interface UsageRecord {
  usageId: string;
  teamId: string;
  keyId: string;
  model: string;
  inputTokens: bigint;
  outputTokens: bigint;
  costMicroCredits: bigint;
  occurredAt: Date;
}
