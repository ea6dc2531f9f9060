/** The UTC calendar month of `at` as YYYY-MM: the billing month. */
export function billingMonthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** The first instant of the billing month containing `at`. */
export function startOfBillingMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}
