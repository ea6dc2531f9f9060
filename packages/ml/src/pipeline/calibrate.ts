import {
  OUT_OF_SCOPE_LABELS,
  chooseRejectThreshold,
  expectedCalibrationError,
  fitTemperature,
  withTemperature,
  type RejectionRow,
  type TaskCalibration,
} from '../classify/calibration';
import type { NgramClassifier } from '../classify/ngram-classifier';
import type { Example } from '../data';
import type { EntityEncoder } from '../encoder';
import { prepare } from './rows';
import { taskScores } from './task-scores';
import type { CanonicalRow } from './types';

/** Held-out in-scope accuracy a rejection threshold may cost (rejected in-scope rows count as errors). */
export const REJECTION_ACCURACY_BUDGET = 0.015;
/** Rejection temperatures tried besides the calibrating one. */
const REJECTION_TEMPERATURES = [1, 2, 4, 8];

/** Out-of-scope rejection a caller asks for: the label rejected inputs get (default `oos`). */
export interface OutOfScopeRequest {
  label?: string;
}

/**
 * Per single-label task with held-out rows: a temperature fitted on them, and a rejection threshold when the
 * task has an out-of-scope label (`oos`, `none`, `other`) or the caller asks (naming the label, which may be
 * a trained one). Held-out rows whose label the task was not trained on count as out of scope.
 */
export function calibrateTasks(
  model: { encoder: EntityEncoder | null; classifiers: Map<string, NgramClassifier> },
  heldout: (CanonicalRow | Example)[],
  outOfScope?: OutOfScopeRequest,
): Record<string, TaskCalibration> {
  const out: Record<string, TaskCalibration> = {};
  for (const t of prepare(heldout).tasks) {
    const clf = model.classifiers.get(t.task);
    if (!clf || clf.multiLabel || !t.examples.length) continue;
    const labels = clf.labels;
    // A label the caller names wins over a trained `oos`/`none`/`other`; asked without a name, it is `oos`.
    const trainedOos = labels.find((l) => (OUT_OF_SCOPE_LABELS as readonly string[]).includes(l.toLowerCase()));
    const oosLabel = outOfScope?.label ?? trainedOos ?? (outOfScope ? 'oos' : undefined);
    const scored = t.examples.map((e) => ({
      probs: taskScores(model.encoder, clf, e.text, t.task, labels).map((s) => s.confidence),
      gold: labels.indexOf(e.labels[0]!),
    }));
    const known = scored.filter((r) => r.gold >= 0);
    if (!known.length) continue;
    const temperature = fitTemperature(known);
    const confidence = (probs: readonly number[], gold: number) => {
      const top = probs.indexOf(Math.max(...probs));
      return { confidence: probs[top]!, correct: top === gold };
    };
    const calibrated = scored.map((r) => ({ ...r, probs: withTemperature(r.probs, temperature) }));
    const c: TaskCalibration = {
      temperature,
      ece_before: expectedCalibrationError(known.map((r) => confidence(r.probs, r.gold))),
      ece_after: expectedCalibrationError(
        calibrated.filter((r) => r.gold >= 0).map((r) => confidence(r.probs, r.gold)),
      ),
      heldout_rows: known.length,
    };
    if (oosLabel) {
      const oosIndex = labels.indexOf(oosLabel);
      const rowsAt = (t: number) =>
        scored.map((r) => {
          const probs = withTemperature(r.probs, t);
          const inScopeProbs = probs.map((p, i) => (i === oosIndex ? -1 : p));
          const top = inScopeProbs.indexOf(Math.max(...inScopeProbs));
          return {
            top: probs[top]!,
            inScope: r.gold >= 0 && r.gold !== oosIndex,
            correct: top === r.gold,
            predictedOutOfScope: oosIndex >= 0 && probs.indexOf(Math.max(...probs)) === oosIndex,
          };
        });
      // The rejection temperature with the best held-out out-of-scope recall within the budget (ties: the lowest).
      let best: { t: number; rows: RejectionRow[]; chosen: ReturnType<typeof chooseRejectThreshold> } | null = null;
      for (const t of [...new Set([temperature, ...REJECTION_TEMPERATURES])].sort((a, b) => a - b)) {
        const rows = rowsAt(t);
        const chosen = chooseRejectThreshold(rows, REJECTION_ACCURACY_BUDGET);
        if (!best || chosen.outOfScopeRecall > best.chosen.outOfScopeRecall) best = { t, rows, chosen };
      }
      Object.assign(c, {
        reject_below: best!.chosen.threshold,
        reject_temperature: best!.t,
        out_of_scope_label: oosLabel,
        heldout_in_scope_accuracy: best!.chosen.inScopeAccuracy,
        heldout_in_scope_accuracy_without_rejection: best!.chosen.baseAccuracy,
        heldout_out_of_scope_recall: best!.chosen.outOfScopeRecall,
        heldout_out_of_scope_rows: best!.rows.filter((r) => !r.inScope).length,
      });
    }
    out[t.task] = c;
  }
  return out;
}
