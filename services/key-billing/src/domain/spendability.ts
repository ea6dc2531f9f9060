import { AppError } from '@whetstone/errors';
import type { Team } from './model';
import { BILLING_RESOLUTION_URL, KeyBillingReasons as R } from './reasons';

/** What a spend check needs to know beyond the team row. */
export interface SpendContext {
  /** Whether the team ever received operator-granted (paid-for) credits. */
  hasGrantedCredits: boolean;
}

export interface SpendDecision {
  /** True when the request will draw overage past the included credits. */
  overage: boolean;
}

const billingDenial = (kind: 'PaymentRequired' | 'PermissionDenied', reason: string, message: string) =>
  new AppError(kind, reason, message, { metadata: { resolution_url: BILLING_RESOLUTION_URL } });

/**
 * May `team` start a request estimated at `estimate` micro-credits? Throws the
 * denial (402/403 reasons) or returns how it will be paid.
 *
 * - A direct call to a supported base model needs a paid plan or granted credits.
 * - Free plan: allowed while the balance is positive; the last request may take it below zero.
 * - Paid plan: allowed while the balance (included plus granted credits) is positive; past
 *   that, overage if enabled and a payment method is on file, until the monthly ceiling.
 *   Overage drawn this month is the negative part of the balance, because renewal
 *   invoices it and resets the balance each billing month.
 */
export function decideSpend(team: Team, estimate: bigint, directModel: boolean, context: SpendContext): SpendDecision {
  if (team.blocked) throw new AppError('Unauthenticated', R.ACCOUNT_BLOCKED, 'This account is blocked.');
  const cost = estimate > 0n ? estimate : 0n;
  const balance = team.balanceMicroCredits;

  if (directModel && team.plan === 'free' && !context.hasGrantedCredits) {
    throw billingDenial(
      'PaymentRequired',
      R.DIRECT_MODEL_REQUIRES_CREDITS,
      'Calling this model directly requires purchased credits.',
    );
  }
  if (balance > 0n) return { overage: balance - cost < 0n };
  if (team.plan === 'free' || !team.overageEnabled) {
    throw billingDenial('PaymentRequired', R.OUT_OF_CREDITS, 'Your credit balance is exhausted.');
  }
  if (!team.paymentMethodVerified) {
    throw billingDenial('PermissionDenied', R.CARD_REQUIRED, 'Overage requires a verified payment method.');
  }
  const overageUsed = -balance;
  if (overageUsed >= team.overageCeilingMicroCredits || overageUsed + cost > team.overageCeilingMicroCredits) {
    throw billingDenial(
      'PermissionDenied',
      R.CREDIT_CEILING_REACHED,
      "Your plan's monthly overage ceiling is reached.",
    );
  }
  return { overage: true };
}
