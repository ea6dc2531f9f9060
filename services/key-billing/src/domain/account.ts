import { billingMonthOf } from './billing-month';
import type { Team } from './model';

/** A team's billing state as the dashboard and operators see it. */
export interface AccountView {
  team: Team;
  balanceMicroCredits: bigint;
  includedMicroCredits: bigint;
  overageEnabled: boolean;
  overageCeilingMicroCredits: bigint;
  overageUsedMicroCredits: bigint;
  paymentMethodVerified: boolean;
  billingMonth: string;
  usedThisMonthMicroCredits: bigint;
  lastRenewedMonth: string;
}

/** Derive the account view; overage used is the negative part of a paid team's balance. */
export function accountView(team: Team, usedThisMonth: bigint, now: Date): AccountView {
  const balance = team.balanceMicroCredits;
  return {
    team,
    balanceMicroCredits: balance,
    includedMicroCredits: team.plan === 'paid' ? team.includedMicroCredits : 0n,
    overageEnabled: team.plan === 'paid' && team.overageEnabled,
    overageCeilingMicroCredits: team.plan === 'paid' ? team.overageCeilingMicroCredits : 0n,
    overageUsedMicroCredits: team.plan === 'paid' && balance < 0n ? -balance : 0n,
    paymentMethodVerified: team.paymentMethodVerified,
    billingMonth: billingMonthOf(now),
    usedThisMonthMicroCredits: usedThisMonth,
    lastRenewedMonth: team.lastRenewedMonth ?? '',
  };
}
