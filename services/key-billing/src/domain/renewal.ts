import type { Team } from './model';

/** The ledger amounts a paid team's monthly renewal writes. */
export interface RenewalAmounts {
  /** Clears last month's overage (billed outside the ledger): minus the negative balance, or 0. */
  overageInvoiced: bigint;
  /** Tops the balance up to the included credits; unused included credits do not accumulate. */
  topUp: bigint;
}

/**
 * Renewal of a paid plan: overage drawn last month is invoiced (the balance
 * returns to zero), then the balance is topped up to the included amount.
 * Credits above the included amount (grants) are kept.
 */
export function renewalAmounts(team: Pick<Team, 'balanceMicroCredits' | 'includedMicroCredits'>): RenewalAmounts {
  const balance = team.balanceMicroCredits;
  const overageInvoiced = balance < 0n ? -balance : 0n;
  const afterInvoice = balance + overageInvoiced;
  const topUp = team.includedMicroCredits > afterInvoice ? team.includedMicroCredits - afterInvoice : 0n;
  return { overageInvoiced, topUp };
}
