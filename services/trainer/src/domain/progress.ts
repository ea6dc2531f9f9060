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
  /** Decoders: the share of the step's scored tokens ranked first. */
  tokenAccuracy?: number;
  /** Decoders, on the step that ends an epoch: the held-out rows' loss and token accuracy. */
  validation?: { loss: number; tokenAccuracy: number };
}

/** The figures of a progress line, kept with it as numbers (the orchestrator's StepMetrics). */
export interface StepFigures {
  step: number;
  totalSteps: number;
  epoch: number;
  trainLoss: number;
  trainMeanTokenAccuracy?: number;
  validLoss?: number;
  validMeanTokenAccuracy?: number;
}

/** Reports to the orchestrator closer together than this are dropped (the last step is always sent). */
export const PROGRESS_EVERY_MS = 250;
/** Progress lines in the job's log closer together than this are dropped, so a log reads like a non-TTY console. */
export const PROGRESS_LOG_EVERY_MS = 5_000;

/** Whether to pass a report on: the last step and a step with held-out figures always, others every `everyMs`. */
export function shouldReport(p: Progress, nowMs: number, lastMs: number, everyMs = PROGRESS_EVERY_MS): boolean {
  return nowMs - lastMs >= everyMs || p.step >= p.totalSteps || p.validation !== undefined;
}

/** The figures a progress line states, kept with it as numbers. */
export function stepMetricsOf(p: Progress): StepFigures {
  return {
    step: p.step,
    totalSteps: p.totalSteps,
    epoch: p.epoch,
    trainLoss: p.loss,
    ...(p.tokenAccuracy !== undefined ? { trainMeanTokenAccuracy: p.tokenAccuracy } : {}),
    ...(p.validation ? { validLoss: p.validation.loss, validMeanTokenAccuracy: p.validation.tokenAccuracy } : {}),
  };
}

export function progressLine(p: Progress): string {
  const f1 = p.metrics ? ` held-out ${headlineName(p.metrics)} ${p.metrics.f1.toFixed(4)}` : '';
  const accuracy = p.tokenAccuracy !== undefined ? ` token accuracy ${p.tokenAccuracy.toFixed(4)}` : '';
  const validation = p.validation
    ? ` held-out loss ${p.validation.loss.toFixed(4)} token accuracy ${p.validation.tokenAccuracy.toFixed(4)}`
    : '';
  return `step ${p.step}/${p.totalSteps} epoch ${p.epoch} loss ${p.loss.toFixed(4)}${accuracy} ${p.examplesPerSecond} rows/s ETA ${p.etaSeconds}s${f1}${validation}`;
}

const headlineName = (m: { headline?: string }): string =>
  m.headline === 'accuracy' ? 'accuracy' : m.headline === 'entity_span_micro_f1' ? 'span F1' : 'F1';

/** How often a lease is renewed: well within it, never more than every 5 s nor less than every 0.5 s. */
export function heartbeatEveryMs(leaseMs: number): number {
  return Math.max(500, Math.min(5_000, leaseMs / 4));
}
