import { MICRO_PER_CREDIT } from '@whetstone/catalog';

// 1 credit = $0.01 = MICRO_PER_CREDIT (1,000,000) micro-credits; all stored money is integer micro-credits.
export { MICRO_PER_CREDIT, microToCredits } from '@whetstone/catalog';

/**
 * The free plan's one-time allowance: 500 credits ($5.00), granted at signup
 * and never renewed.
 */
export const FREE_ALLOWANCE_MICRO = 500n * MICRO_PER_CREDIT;

/** Included credits a team gets when moved to the paid plan without an explicit amount: 2,000 credits ($20.00). */
export const DEFAULT_PAID_INCLUDED_MICRO = 2_000n * MICRO_PER_CREDIT;

/**
 * Parse a decimal credit amount ("12", "0.5", "-3.25") exactly into micro-credits.
 * Returns null when the text is not a decimal with at most 6 fractional digits.
 */
export function parseCredits(text: string): bigint | null {
  const match = /^(-)?(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) return null;
  const [, sign, whole, fraction = ''] = match;
  const micro = BigInt(whole!) * MICRO_PER_CREDIT + BigInt(fraction.padEnd(6, '0'));
  return sign ? -micro : micro;
}

/** Micro-credits formatted as credits with up to 6 decimals, e.g. 1500000n → "1.5". */
export function formatCredits(micro: bigint): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const whole = abs / MICRO_PER_CREDIT;
  const fraction = (abs % MICRO_PER_CREDIT).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
