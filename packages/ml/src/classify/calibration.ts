/**
 * Confidence calibration and out-of-scope rejection for single-label tasks, fitted on held-out rows:
 * one temperature per task (minimum negative log-likelihood over a grid), and a rejection threshold on the
 * calibrated top confidence, the highest one that keeps held-out in-scope accuracy within a budget of its
 * value without rejection (the more is rejected, the higher out-of-scope recall; the lower in-scope accuracy).
 */

/** Labels that mark a dataset's out-of-scope class. */
export const OUT_OF_SCOPE_LABELS = ['oos', 'none', 'other'] as const;

/** What a bundle stores for one task, and the job's metrics report. */
export interface TaskCalibration {
  /** Probabilities are raised to 1/temperature and renormalised. */
  temperature: number;
  /** Expected calibration error (15 equal-width bins) on the held-out rows, before and after. */
  ece_before: number;
  ece_after: number;
  /** Rows the temperature was fitted on (held-out rows with a trained label). */
  heldout_rows: number;
  /**
   * Inputs whose top in-scope confidence at `reject_temperature` is below this are answered with
   * `out_of_scope_label`. The rejection temperature is chosen apart from the calibrating one: flatter
   * probabilities rank out-of-scope inputs lower (on banking77 dev).
   */
  reject_below?: number;
  reject_temperature?: number;
  out_of_scope_label?: string;
  /** At that threshold, on the held-out rows it was chosen on. */
  heldout_in_scope_accuracy?: number;
  heldout_in_scope_accuracy_without_rejection?: number;
  heldout_out_of_scope_recall?: number;
  heldout_out_of_scope_rows?: number;
}

/** Probabilities with a temperature applied: p^(1/T), renormalised. */
export function withTemperature(probs: readonly number[], temperature: number): number[] {
  const logs = probs.map((p) => Math.log(Math.max(p, 1e-12)) / temperature);
  const max = Math.max(...logs);
  const exp = logs.map((l) => Math.exp(l - max));
  const sum = exp.reduce((a, b) => a + b, 0);
  return exp.map((e) => e / sum);
}

/** The grid temperature with the lowest mean negative log-likelihood of the gold label. */
export function fitTemperature(rows: readonly { probs: readonly number[]; gold: number }[]): number {
  let best = { t: 1, nll: Infinity };
  for (let i = 0; i <= 80; i++) {
    const t = 0.2 * 1.05 ** i; // 0.2 … 9.9
    let nll = 0;
    for (const r of rows) nll -= Math.log(Math.max(withTemperature(r.probs, t)[r.gold]!, 1e-12));
    if (nll < best.nll) best = { t, nll };
  }
  return Number(best.t.toFixed(4));
}

/** Expected calibration error: the support-weighted gap between confidence and accuracy over equal-width bins. */
export function expectedCalibrationError(rows: readonly { confidence: number; correct: boolean }[], bins = 15): number {
  const sums = Array.from({ length: bins }, () => ({ n: 0, conf: 0, hits: 0 }));
  for (const r of rows) {
    const b = sums[Math.min(bins - 1, Math.floor(r.confidence * bins))]!;
    b.n++;
    b.conf += r.confidence;
    b.hits += r.correct ? 1 : 0;
  }
  const total = Math.max(1, rows.length);
  return Number(
    sums.reduce((e, b) => e + (b.n ? (b.n / total) * Math.abs(b.conf / b.n - b.hits / b.n) : 0), 0).toFixed(4),
  );
}

/** One held-out row for threshold choice: the top in-scope confidence, and how the row is labelled and predicted. */
export interface RejectionRow {
  top: number;
  /** The gold label is a trained, in-scope one. */
  inScope: boolean;
  /** The top in-scope label is the gold one. */
  correct: boolean;
  /** The model itself picked the out-of-scope label (when it was trained). */
  predictedOutOfScope: boolean;
}

/**
 * The highest threshold whose held-out in-scope accuracy (rejections count as errors) stays within
 * `maxAccuracyDrop` of the accuracy without a threshold, with the figures at that threshold.
 */
export function chooseRejectThreshold(
  rows: readonly RejectionRow[],
  maxAccuracyDrop: number,
): { threshold: number; inScopeAccuracy: number; baseAccuracy: number; outOfScopeRecall: number } {
  const inScope = rows.filter((r) => r.inScope);
  const outOfScope = rows.filter((r) => !r.inScope);
  const at = (t: number) => ({
    inScopeAccuracy:
      inScope.filter((r) => r.correct && !r.predictedOutOfScope && r.top >= t).length / Math.max(1, inScope.length),
    outOfScopeRecall:
      outOfScope.filter((r) => r.predictedOutOfScope || r.top < t).length / Math.max(1, outOfScope.length),
  });
  const base = at(0).inScopeAccuracy;
  let chosen = { threshold: 0, ...at(0) };
  // Candidates at each row's confidence (rows at or above it are kept): the figures only change there. The
  // chosen one is then moved halfway down to the next lower confidence, so that a kept row whose confidence
  // serving computes a rounding error lower (another batch, another kernel) is still kept: the held-out
  // figures are the same anywhere in that gap.
  const tops = [...new Set(rows.map((r) => r.top))].sort((a, b) => a - b);
  for (let i = 0; i < tops.length; i++) {
    const f = at(tops[i]!);
    if (f.inScopeAccuracy < base - maxAccuracyDrop) break;
    chosen = { threshold: i > 0 ? (tops[i - 1]! + tops[i]!) / 2 : 0, ...f };
  }
  const r4 = (x: number) => Number(x.toFixed(4));
  return {
    // Unrounded: serving compares the same calibrated confidences against it.
    threshold: chosen.threshold,
    inScopeAccuracy: r4(chosen.inScopeAccuracy),
    baseAccuracy: r4(base),
    outOfScopeRecall: r4(chosen.outOfScopeRecall),
  };
}
