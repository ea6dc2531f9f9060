/** Credits are the billing unit (1 credit = $0.01); money is stored as integer micro-credits. */
export const MICRO_PER_CREDIT = 1_000_000n;

/** Micro-credits as a (possibly fractional) number of credits, for display. */
export function microToCredits(micro: bigint): number {
  return Number(micro) / Number(MICRO_PER_CREDIT);
}
