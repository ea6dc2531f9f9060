import { timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
export { timestampFromDate };
import {
  LedgerEntryKind as PbLedgerEntryKind,
  Plan as PbPlan,
  type Account as PbAccount,
  type AccountSelector as PbAccountSelector,
  type ChangePlanRequest as PbChangePlanRequest,
  type ApiKey as PbApiKey,
  type LedgerEntry as PbLedgerEntry,
  type Team as PbTeam,
  type User as PbUser,
} from '@whetstone/proto/keybilling/v1';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { GenMessage } from '@bufbuild/protobuf/codegenv2';
import { errors } from '@whetstone/errors';
import type { AccountSelector, changePlan } from '../../application/admin';
import type { AccountView } from '../../domain/account';
import type { ApiKey, LedgerEntry, LedgerEntryKind, Plan, Team, User } from '../../domain/model';
import { microToCredits } from '../../domain/money';
import { KeyBillingReasons as R } from '../../domain/reasons';

type Init<T> = T extends { $typeName: string } ? MessageInitShape<GenMessage<T>> : never;

const ts = (date: Date | null | undefined): Timestamp | undefined => (date ? timestampFromDate(date) : undefined);

export const dateOf = (t: Timestamp | undefined): Date | null => (t ? timestampDate(t) : null);

const PLAN_TO_PB: Record<Plan, PbPlan> = { free: PbPlan.FREE, paid: PbPlan.PAID };

const KIND_TO_PB: Record<LedgerEntryKind, PbLedgerEntryKind> = {
  signup_allowance: PbLedgerEntryKind.SIGNUP_ALLOWANCE,
  grant: PbLedgerEntryKind.GRANT,
  plan_renewal: PbLedgerEntryKind.PLAN_RENEWAL,
  usage: PbLedgerEntryKind.USAGE,
  overage_invoiced: PbLedgerEntryKind.OVERAGE_INVOICED,
  adjustment: PbLedgerEntryKind.ADJUSTMENT,
};

export function planFromPb(plan: PbPlan): Plan {
  if (plan === PbPlan.FREE) return 'free';
  if (plan === PbPlan.PAID) return 'paid';
  throw errors.invalid(R.VALIDATION_FAILED, 'A plan is required', [
    { field: 'plan', message: 'must be PLAN_FREE or PLAN_PAID', code: 'required' },
  ]);
}

export function selectorFromPb(selector: PbAccountSelector | undefined): AccountSelector {
  const choice = selector?.selector;
  if (choice?.case === 'teamId') return { teamId: choice.value };
  if (choice?.case === 'email') return { email: choice.value };
  throw errors.invalid(R.VALIDATION_FAILED, 'An account is required', [
    { field: 'account', message: 'set team_id or email', code: 'required' },
  ]);
}

export const userToPb = (user: User): Init<PbUser> => ({
  id: user.id,
  email: user.email,
  createdAt: ts(user.createdAt),
});

export const teamToPb = (team: Team): Init<PbTeam> => ({
  id: team.id,
  name: team.name,
  ownerUserId: team.ownerUserId,
  plan: PLAN_TO_PB[team.plan],
  blocked: team.blocked,
  blockedReason: team.blockedReason,
  createdAt: ts(team.createdAt),
});

export const apiKeyToPb = (key: ApiKey): Init<PbApiKey> => ({
  id: key.id,
  name: key.name,
  createdAt: ts(key.createdAt),
  apiKeyLastDigits: key.lastDigits,
  expiresAt: ts(key.expiresAt),
  lastUsedAt: ts(key.lastUsedAt),
  teamId: key.teamId,
  userId: key.userId,
  usageTokens: key.usageTokens,
  usageCostMicroCredits: key.usageCostMicroCredits,
  usageCost: microToCredits(key.usageCostMicroCredits),
  requestCount: key.requestCount,
});

export const ledgerEntryToPb = (entry: LedgerEntry): Init<PbLedgerEntry> => ({
  id: entry.id,
  teamId: entry.teamId,
  kind: KIND_TO_PB[entry.kind],
  amountMicroCredits: entry.amountMicroCredits,
  balanceAfterMicroCredits: entry.balanceAfterMicroCredits,
  note: entry.note,
  usageId: entry.usageId ?? '',
  keyId: entry.keyId ?? '',
  createdAt: ts(entry.createdAt),
});

export const accountToPb = (account: AccountView): Init<PbAccount> => ({
  team: teamToPb(account.team),
  balanceMicroCredits: account.balanceMicroCredits,
  includedMicroCredits: account.includedMicroCredits,
  overageEnabled: account.overageEnabled,
  overageCeilingMicroCredits: account.overageCeilingMicroCredits,
  overageUsedMicroCredits: account.overageUsedMicroCredits,
  paymentMethodVerified: account.paymentMethodVerified,
  billingMonth: account.billingMonth,
  usedThisMonthMicroCredits: account.usedThisMonthMicroCredits,
  lastRenewedMonth: account.lastRenewedMonth,
});

/** A ChangePlan request as the use case takes it: unset optional fields stay unset (they keep their values). */
export function planChangeFromPb(req: PbChangePlanRequest): Parameters<typeof changePlan>[1] {
  return {
    account: selectorFromPb(req.account),
    plan: planFromPb(req.plan),
    ...(req.includedMicroCredits === undefined ? {} : { includedMicroCredits: req.includedMicroCredits }),
    ...(req.overageEnabled === undefined ? {} : { overageEnabled: req.overageEnabled }),
    ...(req.overageCeilingMicroCredits === undefined
      ? {}
      : { overageCeilingMicroCredits: req.overageCeilingMicroCredits }),
    ...(req.paymentMethodVerified === undefined ? {} : { paymentMethodVerified: req.paymentMethodVerified }),
  };
}
