/** bench:ml's out-of-scope section: banking77 with 10 intents held out as unknown. */
import { evaluateBundle, loadModel, type Metrics } from '@whetstone/ml';
import {
  REJECTION_ACCURACY_BUDGET,
  chooseRejectThreshold,
  classifiersOf,
  encoderOf,
  readBrown,
  readBundle,
  taskScores,
  withTemperature,
} from '@whetstone/ml/internals';
import { QUOTED_SEED, RECIPE, SEEDS, allRows, fmt, fmtMean, limit, mean, rows, train, type Run } from './common';

/** Every 7th intent from the 4th, in sorted order: 10 of 77, spread over the label families. */
export const UNKNOWN_INTENTS = (labels: string[]) =>
  [...new Set(labels)].sort().filter((_, i) => i % 7 === 3 && i < 70);

/**
 * Dev out-of-scope recall of other rejection scores at the product's accuracy budget (higher score = in scope):
 * distances to class centroids of the training rows in the encoder's pooled space (cosine, Mahalanobis with a
 * shared diagonal covariance) and in the n-gram branch's centred log-probabilities, kNN, the count of words no
 * training row has, and z-score mixes with the product's confidence whose weight is chosen on dev. Dev only: none
 * of these is served, so test is not scored.
 */
function otherScoresOnDev(
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
  const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
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
    };
    const gold = labels.indexOf(e.label!);
    return { scores, inScope: gold >= 0, correct: top === gold };
  });
  printOtherScores(devRows);
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

type Row = ReturnType<typeof rows>[number];

/**
 * Per unknown intent (its original label), the share the served model rejects and the seen intents it answers
 * instead: which unknown intents a confidence threshold can catch. Printed, not used to choose anything.
 */
function perUnknownIntent(bundle: Uint8Array, sets: [string, (Row & { intent: string })[]][], unknown: string[]): void {
  const model = loadModel(bundle);
  const answers = sets.map(([, set]) =>
    set.map((e) => Object.values(model.extract(e.text!, {}) as Record<string, string>)[0]!),
  );
  console.log(
    `\n| unknown intent | ${sets.map(([name]) => `${name}: rejected`).join(' | ')} | ${sets.at(-1)![0]}: seen intents answered instead (top 2) |`,
  );
  console.log(`|---|${sets.map(() => '---|').join('')}---|`);
  for (const intent of unknown) {
    const cells = sets.map(([, set], k) => {
      const mine = answers[k]!.filter((_, i) => set[i]!.intent === intent);
      return { mine, line: `${mine.filter((a) => a === 'oos').length}/${mine.length}` };
    });
    const counts = new Map<string, number>();
    for (const a of cells.at(-1)!.mine) if (a !== 'oos') counts.set(a, (counts.get(a) ?? 0) + 1);
    const instead = [...counts]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, 2)
      .map(([l, n]) => `${l} ${n}`)
      .join(', ');
    console.log(`| ${intent} | ${cells.map((c) => c.line).join(' | ')} | ${instead} |`);
  }
}

/** Generated `oos` training rows for outlier exposure: halves of two training rows of different intents, or Brown sentences. */
function exposureRows(kind: string, train: Row[], n: number, seed: number): Row[] {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)]!;
  if (kind === 'splice')
    return Array.from({ length: n }, () => {
      const a = pick(train);
      let b = a;
      while (b.label === a.label) b = pick(train);
      const [wa, wb] = [a.text!.split(/\s+/), b.text!.split(/\s+/)];
      const text = [...wa.slice(0, Math.ceil(wa.length / 2)), ...wb.slice(Math.floor(wb.length / 2))].join(' ');
      return { ...a, text, label: 'oos' };
    });
  if (kind === 'brown') {
    const sentences = readBrown().filter((x) => x.words.length >= 5 && x.words.length <= 25);
    return Array.from({ length: n }, () => ({
      ...train[0]!,
      text: pick(sentences)
        .words.join(' ')
        .replace(/ ([.,;:?!'])/g, '$1'),
      label: 'oos',
    }));
  }
  throw new Error(`BENCH_OOS_EXPOSURE: '${kind}' is neither splice nor brown`);
}

/** One task's calibration as the job's metrics report it (absent when the task was not calibrated). */
type HeldoutFigures = NonNullable<Metrics['calibration']>[string] | undefined;

/**
 * Outlier exposure, dev only: the quoted seed trained again with 600 generated rows labelled `oos` per kind
 * (BENCH_OOS_EXPOSURE=splice,brown); the product's own held-out figures, against the same seed without them.
 */
async function outlierExposureOnDev(train_: Row[], dev: Row[], baseline: HeldoutFigures) {
  const kinds = (process.env.BENCH_OOS_EXPOSURE ?? '').split(',').filter(Boolean);
  if (!kinds.length) return console.log('(outlier exposure on dev: BENCH_OOS_EXPOSURE=splice,brown, 3 min per kind)');
  const figures = (c: HeldoutFigures) =>
    `${c?.heldout_in_scope_accuracy_without_rejection} | ${c?.heldout_in_scope_accuracy} | ${c?.heldout_out_of_scope_recall}`;
  console.log(
    '\n| outlier exposure (dev only, seed ' +
      QUOTED_SEED +
      ') | in-scope accuracy, no threshold (a row answered oos is wrong) | with the threshold | out-of-scope recall |',
  );
  console.log('|---|---|---|---|');
  console.log(`| none (the product) | ${figures(baseline)} |`);
  for (const kind of kinds) {
    const extra = exposureRows(kind, train_, 600, QUOTED_SEED);
    const run = await train(`banking77 out-of-scope, exposure ${kind}`, QUOTED_SEED, {
      trainingType: 'full',
      train: [...train_, ...extra],
      heldout: dev,
      outOfScope: { label: 'oos' },
    });
    console.log(
      `| + 600 ${kind} rows labelled oos | ${figures(run.result.metrics.calibration?.['banking77-intent'])} |`,
    );
  }
}

/** Test figures of one out-of-scope model, served as the model-server serves it. */
function testFigures(
  result: Run['result'],
  test: ReturnType<typeof rows>,
): { without: number; with: number; recall: number } {
  const model = loadModel(result.bundle);
  const task = result.manifest.schema.classifications[0]!;
  let inScope = 0;
  let inScopeRight = 0;
  let oos = 0;
  let oosRejected = 0;
  for (const e of test) {
    const predicted = (model.extract(e.text!, {}) as Record<string, string>)[task.task];
    if (e.label === 'oos') {
      oos++;
      if (predicted === 'oos') oosRejected++;
    } else {
      inScope++;
      if (predicted === e.label) inScopeRight++;
    }
  }
  // The same weights without a threshold (argmax over the in-scope intents).
  const plain = evaluateBundle(
    result.bundle,
    test.filter((e) => e.label !== 'oos'),
  );
  return { without: plain.f1, with: inScopeRight / inScope, recall: oosRejected / oos };
}

/** The out-of-scope table (mean over the seeds, spread, the quoted seed) and the targets. */
function printFigures(fig: Record<string, number[]>): void {
  console.log('| figure | dev (chosen on) | test |');
  console.log('|---|---|---|');
  console.log(`| in-scope accuracy without rejection | ${fmt(fig.devWithout!, 4)} | ${fmt(fig.testWithout!, 4)} |`);
  console.log(
    `| in-scope accuracy with rejection (rejected counts as wrong) | ${fmt(fig.devWith!, 4)} | ${fmt(fig.testWith!, 4)} |`,
  );
  console.log(`| out-of-scope recall | ${fmt(fig.devRecall!, 4)} | ${fmt(fig.testRecall!, 4)} |`);
  console.log(`| ECE before calibration (dev) | ${fmt(fig.eceBefore!, 4)} | |`);
  console.log(`| ECE after calibration (dev) | ${fmt(fig.eceAfter!, 4)} | |`);
  console.log(`| train s | | ${fmtMean(fig.secs!)} |`);
  const drop = mean(fig.testWithout!) - mean(fig.testWith!);
  console.log(
    `\ntargets: test in-scope accuracy with rejection within 0.02 of without (mean drop ${drop.toFixed(4)}); out-of-scope recall ≥0.6 (mean ${mean(fig.testRecall!).toFixed(4)})`,
  );
}

export async function outOfScope(): Promise<void> {
  // The 10 unknown intents come from the full label set; BENCH_LIMIT cuts the sets after the split.
  const all = allRows('banking77/train.jsonl', 'classification');
  const unknown = new Set(UNKNOWN_INTENTS(all.map((e) => e.label!)));
  const relabel = (file: string) =>
    rows(file, 'classification').map((e) => ({
      ...e,
      intent: e.label!,
      label: unknown.has(e.label!) ? 'oos' : e.label,
    }));
  const train_ = limit(all.filter((e) => !unknown.has(e.label!)));
  const dev = relabel('banking77/dev.jsonl');
  const test = relabel('banking77/test.jsonl');
  const count = (r: typeof dev) =>
    `${r.filter((e) => e.label !== 'oos').length} in scope + ${r.filter((e) => e.label === 'oos').length} unknown`;
  console.log(
    `\n## banking77 with 10 unknown intents (${[...unknown].join(', ')}): train ${train_.length} rows of ${new Set(train_.map((e) => e.label)).size} intents; dev ${count(dev)} (temperature and threshold); test ${count(test)}; full, ${RECIPE}\n`,
  );
  const fig = {
    devWithout: [] as number[],
    devWith: [] as number[],
    devRecall: [] as number[],
    testWithout: [] as number[],
    testWith: [] as number[],
    testRecall: [] as number[],
    eceBefore: [] as number[],
    eceAfter: [] as number[],
    secs: [] as number[],
  };
  let quoted: { run: Run; rejectTemperature: number; line: string } | null = null;
  for (const seed of SEEDS) {
    const run = await train('banking77 out-of-scope', seed, {
      trainingType: 'full',
      train: train_,
      heldout: dev,
      outOfScope: { label: 'oos' },
    });
    const { result } = run;
    const cal = result.metrics.calibration?.['banking77-intent'];
    const t = testFigures(result, test);
    const num = (x: number | undefined) => (x === undefined ? NaN : Number(x));
    fig.devWithout.push(num(cal?.heldout_in_scope_accuracy_without_rejection));
    fig.devWith.push(num(cal?.heldout_in_scope_accuracy));
    fig.devRecall.push(num(cal?.heldout_out_of_scope_recall));
    fig.testWithout.push(t.without);
    fig.testWith.push(t.with);
    fig.testRecall.push(t.recall);
    fig.eceBefore.push(num(cal?.ece_before));
    fig.eceAfter.push(num(cal?.ece_after));
    fig.secs.push(run.secs);
    if (seed === QUOTED_SEED)
      quoted = {
        run,
        rejectTemperature: cal?.reject_temperature ?? 1,
        line: `seed ${seed}: temperature ${cal?.temperature}; reject below ${cal?.reject_below} at rejection temperature ${cal?.reject_temperature}`,
      };
  }
  printFigures(fig);
  if (quoted) await quotedSeedDetails(quoted, train_, dev, test, [...unknown]);
}

/** The quoted seed's calibration, ETA, per-unknown-intent table, and the optional dev-only comparisons. */
async function quotedSeedDetails(
  quoted: { run: Run; rejectTemperature: number; line: string },
  train_: Row[],
  dev: (Row & { intent: string })[],
  test: (Row & { intent: string })[],
  unknown: string[],
): Promise<void> {
  console.log(quoted.line);
  const fe = quoted.run.firstEpochEnd;
  if (fe) {
    const predicted = (fe.at - quoted.run.t0) / 1000 + fe.eta;
    const secs = quoted.run.secs;
    console.log(
      `ETA after the first epoch (seed ${QUOTED_SEED}): predicted total ${predicted.toFixed(1)} s, actual ${secs.toFixed(1)} s (${((100 * (predicted - secs)) / secs).toFixed(0)}%)`,
    );
  }
  perUnknownIntent(
    quoted.run.result.bundle,
    [
      ['dev', dev.filter((e) => e.label === 'oos')],
      ['test', test.filter((e) => e.label === 'oos')],
    ],
    unknown,
  );
  await outlierExposureOnDev(train_, dev, quoted.run.result.metrics.calibration?.['banking77-intent']);
  if (process.env.BENCH_OOS_ALTERNATIVES)
    otherScoresOnDev(quoted.run.result.bundle, train_, dev, quoted.rejectTemperature);
  else console.log('(other rejection scores on dev: BENCH_OOS_ALTERNATIVES=1, slow)');
}
