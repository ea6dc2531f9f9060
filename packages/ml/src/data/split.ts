import { fnv1a } from '../text/tokenize';

/** The deterministic held-out decision for one example (the same rule as splitHeldOut). */
export function isHeldOut(example: unknown, options: { heldOutFraction?: number; seed?: string } = {}): boolean {
  return isHeldOutJson(JSON.stringify(example), options);
}

/** isHeldOut for an example already serialised with JSON.stringify. */
export function isHeldOutJson(json: string, options: { heldOutFraction?: number; seed?: string } = {}): boolean {
  return fnv1a(`${options.seed ?? 'whetstone'}\u0000${json}`) / 0x1_0000_0000 < (options.heldOutFraction ?? 0.1);
}

/**
 * A deterministic train/held-out split: each example goes by a hash of its
 * content and the seed, so the same file always splits the same way and an
 * evaluation never trains on its own test rows.
 */
export function splitHeldOut<T>(
  examples: T[],
  options: { heldOutFraction?: number; seed?: string } = {},
): { train: T[]; heldOut: T[] } {
  const train: T[] = [];
  const heldOut: T[] = [];
  for (const e of examples) (isHeldOut(e, options) ? heldOut : train).push(e);
  return { train, heldOut };
}
