/** bench:ml's out-of-scope section, its dev-only comparisons: other rejection scores beside the served one. */
import {
  REJECTION_ACCURACY_BUDGET,
  chooseRejectThreshold,
  classifiersOf,
  encoderOf,
  ngramNames,
  readBundle,
  taskScores,
  withTemperature,
} from '@whetstone/ml/internals';

/**
 * Dev out-of-scope recall of other rejection scores at the product's accuracy budget (higher score = in scope):
 * distances to class centroids of the training rows in the encoder's pooled space (cosine, Mahalanobis with a
 * shared diagonal covariance) and in the n-gram branch's centred log-probabilities, kNN, the count of words no
 * training row has, and z-score mixes with the product's confidence whose weight is chosen on dev. Dev only: none
 * of these is served, so test is not scored.
 */
export function otherScoresOnDev(
  bundle: Uint8Array,
  train: { text?: string; label?: string }[],
  dev: { text?: string; label?: string }[],
  rejectTemperature: number,
): void {
  const { meta, tensors } = readBundle(bundle);
  const encoder = encoderOf(meta, tensors)!.merged();
  const [task, clf] = [...classifiersOf(meta)][0]!;
  const labels = clf.labels;
  const unit = (v: ArrayLike<number>) => {
    const n = Math.hypot(...Array.from(v)) || 1;
    return Array.from(v, (x) => x / n);
  };
  const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
  const centredLog = (p: number[]) => {
    const l = p.map((x) => Math.log(Math.max(x, 1e-12)));
    const m = l.reduce((a, b) => a + b, 0) / l.length;
    return l.map((x) => x - m);
  };
  const D = encoder.config.dim;
  const represent = (text: string) => {
    const pooled = encoder.pooledState(text) ?? new Float32Array(D);
    const ngram = clf.predict(text).scores;
    return {
      pooled: Array.from(pooled),
      ngram: centredLog(labels.map((l) => ngram[l]!)),
      fused: taskScores(encoder, clf, text, task, labels).map((s) => s.confidence),
    };
  };
  const trainRows = train.map((e) => ({ gold: labels.indexOf(e.label!), ...represent(e.text!) }));
  const centroids = (vector: (r: (typeof trainRows)[number]) => number[], normalise: boolean) => {
    const sums = labels.map(() => new Array<number>(vector(trainRows[0]!).length).fill(0));
    const counts = labels.map(() => 0);
    for (const r of trainRows) {
      const v = normalise ? unit(vector(r)) : vector(r);
      counts[r.gold]!++;
      v.forEach((x, i) => (sums[r.gold]![i]! += x));
    }
    return sums.map((s, k) => (normalise ? unit(s) : s.map((x) => x / Math.max(1, counts[k]!))));
  };
  const pooledUnit = centroids((r) => r.pooled, true);
  const ngramUnit = centroids((r) => r.ngram, true);
  const pooledMean = centroids((r) => r.pooled, false);
  const variance = new Array<number>(D).fill(1e-6);
  for (const r of trainRows)
    r.pooled.forEach((x, i) => (variance[i]! += (x - pooledMean[r.gold]![i]!) ** 2 / trainRows.length));
  const trainUnit = trainRows.map((r) => unit(r.pooled));
  // Words of no training row: an unknown intent often names what no seen intent does (contactless, passcode).
  const seen = new Set(train.flatMap((e) => words(e.text!)));
  const devRows = dev.map((e) => {
    const r = represent(e.text!);
    const probs = withTemperature(r.fused, rejectTemperature);
    const top = probs.indexOf(Math.max(...probs));
    const v = unit(r.pooled);
    const cosines = pooledUnit.map((c) => dot(c, v));
    const nearest5 = trainUnit
      .map((t) => dot(t, v))
      .sort((a, b) => b - a)
      .slice(0, 5);
    const scores: Record<string, number> = {
      'confidence at the rejection temperature (served)': probs[top]!,
      'pooled space: cosine to the nearest centroid': Math.max(...cosines),
      "pooled space: cosine to the predicted intent's centroid": cosines[top]!,
      'pooled space: Mahalanobis (shared diagonal) to the nearest centroid': -Math.min(
        ...pooledMean.map((c) => r.pooled.reduce((s, x, i) => s + (x - c[i]!) ** 2 / variance[i]!, 0)),
      ),
      'pooled space: cosine to the 5th nearest training row': nearest5[4]!,
      'n-gram centred log-probabilities: cosine to the nearest centroid': Math.max(
        ...ngramUnit.map((c) => dot(c, unit(r.ngram))),
      ),
      'words unseen in training (minus their count)': -words(e.text!).filter((w) => !seen.has(w)).length,
      "the predicted intent's name words in the text (share)": nameCoverage(labels[top]!, e.text!),
    };
    const gold = labels.indexOf(e.label!);
    return { scores, inScope: gold >= 0, correct: top === gold };
  });
  printOtherScores(withNeighbours(devRows, train, dev));
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const stem = (w: string) => w.slice(0, 5);

/**
 * A paraphrase of a seen intent is answered as that intent while the words of its name are missing from the text
 * ("my top-up failed" answered top_up_reverted): the share of the name's words whose stem the text has.
 */
function nameCoverage(label: string, text: string): number {
  const have = new Set(words(text).map(stem));
  const name = words(label.replace(/_/g, ' ')).filter((w) => !['or', 'by', 'to', 'the', 'a', 'of'].includes(w));
  return name.filter((w) => have.has(stem(w))).length / Math.max(1, name.length);
}

/**
 * Mean cosine of a text to its k nearest training texts, over TF-IDF weights of the n-gram branch's n-grams
 * (word uni- and bigrams, character 4-grams; sublinear counts, smoothed idf).
 */
function tfidfNearest(train: string[]): (text: string, k: number) => number {
  const bag = (text: string) => {
    const counts = new Map<string, number>();
    for (const g of ngramNames(text, 'words+char4')) counts.set(g, (counts.get(g) ?? 0) + 1);
    return counts;
  };
  const bags = train.map(bag);
  const df = new Map<string, number>();
  for (const b of bags) for (const g of b.keys()) df.set(g, (df.get(g) ?? 0) + 1);
  const vector = (b: Map<string, number>) => {
    const v = [...b].map(
      ([g, c]) => [g, (1 + Math.log(c)) * Math.log((train.length + 1) / ((df.get(g) ?? 0) + 1))] as const,
    );
    const norm = Math.hypot(...v.map(([, w]) => w)) || 1;
    return v.map(([g, w]) => [g, w / norm] as const);
  };
  const postings = new Map<string, [number, number][]>();
  bags.forEach((b, i) => {
    for (const [g, w] of vector(b)) (postings.get(g) ?? postings.set(g, []).get(g)!).push([i, w]);
  });
  return (text, k) => {
    const sims = new Float64Array(train.length);
    for (const [g, w] of vector(bag(text))) for (const [i, u] of postings.get(g) ?? []) sims[i]! += w * u;
    const top = Array.from(sims)
      .sort((a, b) => b - a)
      .slice(0, k);
    return top.reduce((a, b) => a + b, 0) / k;
  };
}

/** The rows with two more scores: the TF-IDF neighbours' mean cosine, alone and times the served confidence. */
function withNeighbours<R extends { scores: Record<string, number> }>(
  devRows: R[],
  train: { text?: string }[],
  dev: { text?: string }[],
): R[] {
  const nearest = tfidfNearest(train.map((e) => e.text!));
  return devRows.map((r, i) => {
    const mean3 = nearest(dev[i]!.text!, 3);
    const served = Object.values(r.scores)[0]!;
    const scores = {
      ...r.scores,
      "n-gram TF-IDF (the branch's n-grams): mean cosine to the 3 nearest training rows": mean3,
      'the served confidence times that mean cosine': served * mean3,
    };
    return { ...r, scores };
  });
}

/** The table of `otherScoresOnDev`: each score alone, and mixed with the served one (z-scores on dev in-scope rows). */
function printOtherScores(devRows: { scores: Record<string, number>; inScope: boolean; correct: boolean }[]): void {
  const recall = (score: (r: (typeof devRows)[number]) => number) => {
    // chooseRejectThreshold takes threshold 0 as "no rejection": shift each score to start at 0.
    const min = Math.min(...devRows.map(score));
    return chooseRejectThreshold(
      devRows.map((r) => ({ ...r, top: score(r) - min, predictedOutOfScope: false })),
      REJECTION_ACCURACY_BUDGET,
    ).outOfScopeRecall;
  };
  const zScore = (name: string) => {
    const xs = devRows.filter((r) => r.inScope).map((r) => r.scores[name]!);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length) || 1;
    return (r: (typeof devRows)[number]) => (r.scores[name]! - mean) / sd;
  };
  const [served, ...others] = Object.keys(devRows[0]!.scores);
  console.log(
    '\n| other rejection score (dev only, same budget) | dev out-of-scope recall | mixed with the served confidence: best weight on dev, recall |',
  );
  console.log('|---|---|---|');
  console.log(`| ${served} | ${recall((r) => r.scores[served!]!).toFixed(4)} | |`);
  for (const name of others) {
    const [a, b] = [zScore(served!), zScore(name)];
    let best = { w: 0, recall: -1 };
    for (let i = 0; i <= 10; i++) {
      const w = i / 10;
      const got = recall((r) => (1 - w) * a(r) + w * b(r));
      if (got > best.recall) best = { w, recall: got };
    }
    console.log(`| ${name} | ${recall((r) => r.scores[name]!).toFixed(4)} | ${best.w}, ${best.recall.toFixed(4)} |`);
  }
}
