/** One training progress report, as the engine gives it. */
export interface Progress {
  step: number;
  totalSteps: number;
  epoch: number;
  loss: number;
  learningRate: number;
  examplesPerSecond: number;
  etaSeconds: number;
}

/** Reports closer together than this are dropped (the last step is always sent). */
export const PROGRESS_EVERY_MS = 250;

export function shouldReport(p: Progress, nowMs: number, lastMs: number): boolean {
  return nowMs - lastMs >= PROGRESS_EVERY_MS || p.step >= p.totalSteps;
}

export function progressLine(p: Progress): string {
  return `step ${p.step}/${p.totalSteps} epoch ${p.epoch} loss ${p.loss.toFixed(4)} ${p.examplesPerSecond} examples/s ETA ${p.etaSeconds}s`;
}

/** How often a lease is renewed: well within it, never more than every 5 s nor less than every 0.5 s. */
export function heartbeatEveryMs(leaseMs: number): number {
  return Math.max(500, Math.min(5_000, leaseMs / 4));
}
