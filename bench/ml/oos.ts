/** bench:ml's out-of-scope section: banking77 with 10 intents held out as unknown. */
import { evaluateBundle, loadModel, type Metrics } from '@whetstone/ml';
import { readBrown } from '@whetstone/ml/internals';
import { QUOTED_SEED, RECIPE, SEEDS, allRows, fmt, fmtMean, limit, mean, rows, train, type Run } from './common';
import { otherScoresOnDev } from './oos-scores';

/** Every 7th intent from the 4th, in sorted order: 10 of 77, spread over the label families. */
export const UNKNOWN_INTENTS = (labels: string[]) =>
  [...new Set(labels)].sort().filter((_, i) => i % 7 === 3 && i < 70);

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
