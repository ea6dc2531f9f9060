/** One training progress report, as the engine gives it. */
export interface Progress {
  step: number;
  totalSteps: number;
  epoch: number;
  loss: number;
  learningRate: number;
  /** Training rows per second. */
  examplesPerSecond: number;
  etaSeconds: number;
  /** Held-out figures after the latest finished epoch (f1, precision, recall, headline, per_label …). */
  metrics?: { f1: number; headline?: string };
}

/** Reports to the orchestrator closer together than this are dropped (the last step is always sent). */
export const PROGRESS_EVERY_MS = 250;
/** Progress lines in the job's log closer together than this are dropped, so a log reads like a non-TTY console. */
export const PROGRESS_LOG_EVERY_MS = 5_000;

export function shouldReport(p: Progress, nowMs: number, lastMs: number, everyMs = PROGRESS_EVERY_MS): boolean {
  return nowMs - lastMs >= everyMs || p.step >= p.totalSteps;
}

/** The figures a progress line states, kept with it as numbers. */
export function stepMetricsOf(p: Progress): { step: number; totalSteps: number; epoch: number; trainLoss: number } {
  return { step: p.step, totalSteps: p.totalSteps, epoch: p.epoch, trainLoss: p.loss };
}

export function progressLine(p: Progress): string {
  const f1 = p.metrics ? ` held-out ${headlineName(p.metrics)} ${p.metrics.f1.toFixed(4)}` : '';
  return `step ${p.step}/${p.totalSteps} epoch ${p.epoch} loss ${p.loss.toFixed(4)} ${p.examplesPerSecond} rows/s ETA ${p.etaSeconds}s${f1}`;
}

const headlineName = (m: { headline?: string }): string =>
  m.headline === 'accuracy' ? 'accuracy' : m.headline === 'entity_span_micro_f1' ? 'span F1' : 'F1';

/** How often a lease is renewed: well within it, never more than every 5 s nor less than every 0.5 s. */
export function heartbeatEveryMs(leaseMs: number): number {
  return Math.max(500, Math.min(5_000, leaseMs / 4));
}
