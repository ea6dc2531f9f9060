import type { Clock } from '../domain/ports';

/** The real clock. */
export const systemClock: Clock = { now: () => new Date() };
