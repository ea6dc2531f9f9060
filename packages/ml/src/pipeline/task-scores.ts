import type { NgramClassifier } from '../classify/ngram-classifier';
import type { EntityEncoder } from '../encoder';

/**
 * A task's label probabilities: the n-gram classifier's, fused (normalised
 * geometric mean) with the encoder's pooled head when the encoder learned the
 * task; the n-gram classifier's alone for multi-label tasks.
 */
export function taskScores(
  encoder: EntityEncoder | null,
  clf: NgramClassifier,
  text: string,
  task: string,
  labels: string[],
): { label: string; confidence: number }[] {
  const ngram = clf.predict(text).scores;
  if (clf.multiLabel || !encoder?.tasks.some((t) => t.task === task))
    return labels.map((label) => ({ label, confidence: ngram[label] ?? 0 }));
  const pooled = encoder.classify(text, task, labels);
  const fused = labels.map((label, i) =>
    Math.sqrt(Math.max(ngram[label] ?? 0, 1e-9) * Math.max(pooled[i]!.confidence, 1e-9)),
  );
  const sum = fused.reduce((a, b) => a + b, 0) || 1;
  return labels.map((label, i) => ({ label, confidence: fused[i]! / sum }));
}

export const best = (scores: { label: string; confidence: number }[]) =>
  scores.reduce((a, b) => (b.confidence > a.confidence ? b : a)).label;
