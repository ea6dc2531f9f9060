/**
 * Read your writes: an inference id is a UUIDv7, so it says when it was minted.
 * An id that the history has not ingested yet may still be on its way (outbox →
 * relay → event log → consumer) only if it is recent; older unknown ids are
 * answered at once, and so are ids that are not UUIDv7s (never minted by the router).
 */
export function mayBeInFlight(idTimeMs: number | null, nowMs: number, windowMs: number): boolean {
  if (idTimeMs === null) return false;
  const age = nowMs - idTimeMs;
  // A little tolerance for clock skew between the router's host and this one.
  return age >= -5_000 && age <= windowMs;
}
