/**
 * pnpm --filter @whetstone/bench bench:ml
 *
 * The built-in extraction model on the real sets in datasets/ (train on train, settings chosen on dev, report
 * on test), through the product's pipeline (trainModel / loadModel / extractBaseModel, what trainer jobs and the
 * model-server run), with the CLI's default recipe: full or LoRA, 6 epochs, AdamW peak rate 0.002, seed 13.
 * Every trained row runs once per seed and prints the mean over the seeds, the spread (min–max) and the
 * default seed's figure (the one the docs quote), e.g. `0.652 (0.640–0.661; seed 13: 0.646)`; rows with no
 * training print one figure and say "deterministic". Sections (markdown tables on stdout):
 *   - wikigold NER (train → dev and test): the encoder full and LoRA from the pretrained base, full from a
 *     not pretrained base (the seeded initialisation, same heads), the linear BIO tagger baseline; test and
 *     dev F1, per-label test F1 of the seed-13 runs, train seconds, examples/s, trained-parameter share
 *   - zero-shot, label names only (person, location, organization, misc): the untrained
 *     whetstone-extract-base as served, on wikigold test and dev: F1, P, R and p50 ms per sentence
 *   - relations with given spans: a synthetic templated set (packages/ml/src/synth/relation-pairs.ts) whose held-out rows use
 *     names unseen in training: the untrained relation head, full and LoRA (relation_given_spans_micro_f1)
 *   - banking77 classification: the fused model (full and LoRA) against multinomial Naive Bayes and the n-gram
 *     branch alone (with character 4-grams, as trained now, and word uni+bigrams alone, as before them)
 *   - banking77 with 10 intents held out as unknown: out-of-scope rejection (temperature and threshold fitted
 *     on dev, reported on test): in-scope accuracy without and with rejection, out-of-scope recall, ECE on
 *     dev before/after, the ETA the first epoch predicted (seed 13), and per unknown intent the share the
 *     seed-13 model rejects on dev and test with the seen intents it answers instead; with
 *     BENCH_OOS_ALTERNATIVES=1 also, on dev only, other rejection scores (class-centroid distances and kNN) at
 *     the same budget (slow); with BENCH_OOS_EXPOSURE=splice,brown, on dev only, outlier exposure: seed 13
 *     trained again with 600 generated rows labelled oos per kind (3 min each)
 *   - serving: extraction latency p50/p99 of the seed-13 full wikigold model for a 30-word text, one thread, in
 *     a fresh process (ml/serving.ts: the bundle loaded as the model-server loads it, no training heap),
 *     and training examples/s
 * Targets (issues 3 and 20) are printed beside the figures; they are not asserted.
 * Environment:
 *   BENCH_SEEDS=13,14,15   seeds of every trained row (the first listed stands in if 13 is absent)
 *   BENCH_EPOCHS=6         epochs of every trained row
 *   BENCH_LIMIT=<n>        smoke runs: every training and every evaluation set cut to n rows (evenly spaced)
 *   BENCH_NER_ONLY=1 (wikigold NER and serving), BENCH_ZEROSHOT_ONLY=1, BENCH_RELATIONS_ONLY=1,
 *   BENCH_CLASSIFICATION_ONLY=1 (banking77 and out-of-scope), BENCH_OOS_ONLY=1: run one part
 *   BENCH_RECIPE_ONLY=1    only the recipe check on wikigold dev (./recipe.ts: full and LoRA at other rates, full
 *                          at 10 epochs; test not scored; about 12 min): not part of the full run
 * Progress goes to stderr, one line per trained run (row, seed, elapsed).
 * The decoder has its own command: bench:decoder.
 */
import {
  evaluateBundle,
  extractBaseModel,
  loadModel,
  type Example,
  type Metrics,
  type TrainingType,
} from '@whetstone/ml';
import {
  LinearTagger,
  NaiveBayes,
  NgramClassifier,
  type NgramFeatures,
  classificationPRF,
  initEncoderWeights,
  loadEncoderBase,
  loadGlove,
  spanPRF,
  HELDOUT_NAMES,
  RELATIONS,
  TRAIN_NAMES,
  relationPairRows,
} from '@whetstone/ml/internals';
import {
  EPOCHS,
  LABELS,
  LIMIT,
  QUOTED_SEED,
  RECIPE,
  SEEDS,
  fmt,
  fmtMean,
  limit,
  mean,
  percentile,
  perLabel,
  progress,
  rows,
  train,
  type PerSeed,
  type Run,
} from './common';
import { outOfScope } from './oos';
import { recipeCheck } from './recipe';
import { servingLatency } from './serving';

/** The seed-13 full wikigold bundle, for the serving section. */
let servingBundle: Uint8Array | null = null;
const trainingRates: number[] = [];

/** The linear BIO tagger baseline, one run per seed (it takes a seed for its shuffling); its per-label line. */
function linearTagger(train_: Example[], dev: Example[], test: Example[]): string {
  const glove = loadGlove();
  let perLabelLine = '';
  const lin: { test: ReturnType<typeof spanPRF>; dev: ReturnType<typeof spanPRF>; secs: number }[] = [];
  for (const seed of SEEDS) {
    const t0 = performance.now();
    const tagger = LinearTagger.train(train_, { epochs: EPOCHS, seed, embeddings: glove });
    const secs = (performance.now() - t0) / 1000;
    const score = (set: typeof test) =>
      spanPRF(
        set.map((e) => e.entities!),
        set.map((e) => tagger.extract(e.text!)),
      );
    lin.push({ test: score(test), dev: score(dev), secs });
    progress('wikigold linear BIO tagger', seed, secs);
    if (seed === QUOTED_SEED) perLabelLine = `- linear BIO tagger: ${perLabel(lin.at(-1)!.test)}`;
  }
  console.log(
    `| linear BIO tagger + GloVe window (baseline) | ${fmt(lin.map((r) => r.test.f1))} | ${fmt(lin.map((r) => r.dev.f1))} | ${fmt(lin.map((r) => r.test.precision))} | ${fmt(lin.map((r) => r.test.recall))} | 100% | ${fmtMean(lin.map((r) => r.secs))} | ${fmtMean(
      lin.map((r) => (train_.length * EPOCHS) / r.secs),
      0,
    )} |`,
  );
  return perLabelLine;
}

async function ner(): Promise<void> {
  const train_ = rows('wikigold/train.jsonl', 'extraction');
  const dev = rows('wikigold/dev.jsonl', 'extraction');
  const test = rows('wikigold/test.jsonl', 'extraction');
  const pretrained = loadEncoderBase();
  const glove = loadGlove();
  console.log(
    `\n## wikigold NER (train ${train_.length} sentences → dev ${dev.length} (settings, training-time metrics) and test ${test.length}), ${RECIPE}\n`,
  );
  console.log(
    `pretrained base: ${pretrained.meta ? 'the shipped encoder-base.i8' : 'none shipped (the seeded initialisation)'}; not pretrained: initWeights(base config, GloVe, seed), the same heads loadEncoderBase adds\n`,
  );
  console.log('| model | test micro F1 | dev micro F1 | test P | test R | trained params | train s | examples/s |');
  console.log('|---|---|---|---|---|---|---|---|');
  const variants = [
    { name: 'encoder, full, pretrained base', trainingType: 'full' as const, pretrainedBase: true },
    { name: 'encoder, LoRA, pretrained base', trainingType: 'lora' as const, pretrainedBase: true },
    { name: 'encoder, full, not pretrained (seeded init)', trainingType: 'full' as const, pretrainedBase: false },
  ];
  const f1s: Record<string, PerSeed> = {};
  const perLabelLines: string[] = [];
  for (const v of variants) {
    const test_: Metrics[] = [];
    const dev_: Metrics[] = [];
    const secs: number[] = [];
    const rates: number[] = [];
    let share = '';
    for (const seed of SEEDS) {
      const run = await train(`wikigold ${v.name}`, seed, {
        trainingType: v.trainingType,
        train: train_,
        heldout: dev,
        ...(v.pretrainedBase
          ? {}
          : {
              encoderBase: { config: pretrained.config, weights: initEncoderWeights(pretrained.config, glove, seed) },
            }),
      });
      const m = evaluateBundle(run.result.bundle, test);
      test_.push(m);
      dev_.push(run.result.metrics);
      secs.push(run.secs);
      rates.push(run.examplesPerSecond);
      share = /\(([\d.]+)% of full\)/.exec(run.logs[0] ?? '')?.[1] ?? '?';
      if (seed === QUOTED_SEED) {
        perLabelLines.push(`- ${v.name}: ${perLabel(m)}`);
        if (v.trainingType === 'full' && v.pretrainedBase) servingBundle = run.result.bundle;
      }
      if (v.trainingType === 'full' && v.pretrainedBase) trainingRates.push(run.examplesPerSecond);
    }
    f1s[v.name] = test_.map((m) => m.f1);
    console.log(
      `| ${v.name} | ${fmt(test_.map((m) => m.f1))} | ${fmt(dev_.map((m) => m.f1))} | ${fmt(test_.map((m) => m.precision))} | ${fmt(test_.map((m) => m.recall))} | ${share}% | ${fmtMean(secs)} | ${fmtMean(rates, 0)} |`,
    );
  }
  perLabelLines.push(linearTagger(train_, dev, test));
  console.log(`\nper-label test F1, seed ${QUOTED_SEED}:\n${perLabelLines.join('\n')}`);
  const full = mean(f1s['encoder, full, pretrained base']!);
  const lora = mean(f1s['encoder, LoRA, pretrained base']!);
  const scratch = mean(f1s['encoder, full, not pretrained (seeded init)']!);
  console.log(
    `\ntargets (issue 20): full test F1 ≥0.72 mean of the seeds (mean ${full.toFixed(3)}; goal 0.80) in ≤3 min on 2 cores; LoRA within 0.03 of full (mean gap ${(full - lora).toFixed(3)}); ≥200 examples/s on a quiet machine. Pretraining adds ${(full - scratch).toFixed(3)} test F1 (mean over seeds, full).`,
  );
}

/** Spans of the GLiNER2-shaped `entities` result (asked with includeSpans). */
function spansOf(result: Record<string, unknown>): { start: number; end: number; label: string }[] {
  const entities = (result.entities ?? {}) as Record<string, { start: number; end: number }[]>;
  return Object.entries(entities).flatMap(([label, items]) =>
    items.map((s) => ({ start: s.start, end: s.end, label })),
  );
}

/** The untrained `whetstone-extract-base` exactly as the model-server serves it, label names only. */
function zeroShot(): void {
  const sets = { test: rows('wikigold/test.jsonl', 'extraction'), dev: rows('wikigold/dev.jsonl', 'extraction') };
  const schema = { entities: LABELS };
  const options = { includeSpans: true };
  console.log(
    `\n## zero-shot, label names only (${LABELS.join(', ')}): whetstone-extract-base as served (extractBaseModel), no training — deterministic\n`,
  );
  console.log('| set | micro F1 | P | R | per label | p50 ms/sentence | p99 ms/sentence |');
  console.log('|---|---|---|---|---|---|---|');
  const results: Record<string, number> = {};
  for (const [name, set] of Object.entries(sets)) {
    // Warm-up (lexicons, caches), then each sentence timed once, one thread.
    for (const e of set.slice(0, 50)) extractBaseModel.extract(e.text!, schema, options);
    const lat: number[] = [];
    const predicted = set.map((e) => {
      const t = performance.now();
      const r = extractBaseModel.extract(e.text!, schema, options);
      lat.push(performance.now() - t);
      return spansOf(r);
    });
    const m = spanPRF(
      set.map((e) => e.entities!),
      predicted,
    );
    results[name] = m.f1;
    results[`${name}-p50`] = percentile(lat, 0.5);
    console.log(
      `| wikigold ${name} (${set.length}) | ${m.f1.toFixed(3)} | ${m.precision.toFixed(3)} | ${m.recall.toFixed(3)} | ${perLabel(m)} | ${percentile(lat, 0.5).toFixed(2)} | ${percentile(lat, 0.99).toFixed(2)} |`,
    );
  }
  console.log(
    `\ntargets: zero-shot F1 ≥0.50 (test ${results.test!.toFixed(3)}), p50 ≤10 ms per sentence (test ${results['test-p50']!.toFixed(2)} ms)`,
  );
}

async function relations(): Promise<void> {
  const train_ = limit(relationPairRows(240, 1, TRAIN_NAMES));
  const heldout = limit(relationPairRows(120, 2, HELDOUT_NAMES));
  console.log(
    `\n## relations with given spans (synthetic templates; train ${train_.length} pairs, held-out ${heldout.length} pairs with names unseen in training), relation micro F1 (relation_given_spans_micro_f1: no-relation excluded), ${RECIPE}\n`,
  );
  console.log('| model | relation micro F1 | macro F1 | accuracy | train s | examples/s |');
  console.log('|---|---|---|---|---|---|');
  // No epoch: the relation head as the base ships it (no seed is used: deterministic).
  const untrained = await train(
    'relations untrained head',
    QUOTED_SEED,
    { trainingType: 'full', train: train_, heldout },
    0,
  );
  const u = untrained.result.metrics;
  if (u.headline !== 'relation_given_spans_micro_f1') throw new Error(`relations: headline ${u.headline}`);
  console.log(
    `| untrained base (relation head as shipped, no training) — deterministic | ${u.f1.toFixed(3)} | ${u.macro_f1?.toFixed(3)} | ${u.accuracy?.toFixed(3)} | | |`,
  );
  for (const trainingType of ['full', 'lora'] as const) {
    const runs: Run[] = [];
    for (const seed of SEEDS)
      runs.push(await train(`relations ${trainingType}`, seed, { trainingType, train: train_, heldout }));
    const ms = runs.map((r) => r.result.metrics);
    console.log(
      `| ${trainingType} | ${fmt(ms.map((m) => m.f1))} | ${fmt(ms.map((m) => m.macro_f1 ?? NaN))} | ${fmt(ms.map((m) => m.accuracy ?? NaN))} | ${fmtMean(runs.map((r) => r.secs))} | ${fmtMean(
        runs.map((r) => r.examplesPerSecond),
        0,
      )} |`,
    );
  }
  console.log(`\nrelations: ${RELATIONS.join(', ')} (and no_relation pairs)`);
}

async function classification(): Promise<void> {
  const train_ = rows('banking77/train.jsonl', 'classification');
  const test = rows('banking77/test.jsonl', 'classification');
  console.log(
    `\n## banking77 intent classification (train ${train_.length} → test ${test.length}, ${new Set(train_.map((e) => e.label)).size} labels), ${RECIPE}\n`,
  );
  const gold = test.map((e) => [e.label!]);
  const t = performance.now();
  const nb = NaiveBayes.train(train_.map((e) => ({ text: e.text!, label: e.label! })));
  const nbSecs = (performance.now() - t) / 1000;
  const nbF1 = classificationPRF(
    gold,
    test.map((e) => [nb.predict(e.text!)]),
  ).f1;
  const ngram: Record<NgramFeatures, number[]> = { words: [], 'words+char4': [] };
  const fused: Record<TrainingType, { runs: Run[]; f1: number[] }> = {
    full: { runs: [], f1: [] },
    lora: { runs: [], f1: [] },
  };
  for (const seed of SEEDS) {
    // The branch as trained now (character 4-grams, its default AdaGrad step) and as it was before them.
    for (const features of ['words', 'words+char4'] as const) {
      const n = NgramClassifier.train(
        train_.map((e) => ({ text: e.text!, labels: [e.label!] })),
        { epochs: EPOCHS, seed, features },
      ).model;
      ngram[features].push(
        classificationPRF(
          gold,
          test.map((e) => [n.predict(e.text!).label]),
        ).f1,
      );
    }
    for (const trainingType of ['full', 'lora'] as const) {
      const run = await train(`banking77 fused, ${trainingType}`, seed, { trainingType, train: train_, heldout: [] });
      const model = loadModel(run.result.bundle);
      const predicted = test.map((e) => [(model.extract(e.text!, {}) as Record<string, string>)['banking77-intent']!]);
      fused[trainingType].runs.push(run);
      fused[trainingType].f1.push(classificationPRF(gold, predicted).f1);
    }
  }
  console.log('| model | micro F1 (accuracy) | train s | examples/s |');
  console.log('|---|---|---|---|');
  console.log(
    `| multinomial Naive Bayes (baseline, same run) — deterministic | ${nbF1.toFixed(4)} | ${nbSecs.toFixed(2)} | ${Math.round(train_.length / nbSecs)} |`,
  );
  console.log(
    `| n-gram branch alone, word uni+bigrams (before character n-grams), ${EPOCHS} epochs | ${fmt(ngram.words, 4)} | | |`,
  );
  console.log(
    `| n-gram branch alone, word uni+bigrams and character 4-grams (the product's), ${EPOCHS} epochs | ${fmt(ngram['words+char4'], 4)} | | |`,
  );
  for (const trainingType of ['full', 'lora'] as const)
    console.log(
      `| **whetstone-extract-base: n-gram branch fused with the encoder's pooled label-name head**, ${trainingType} | ${fmt(fused[trainingType].f1, 4)} | ${fmtMean(fused[trainingType].runs.map((r) => r.secs))} | ${fmtMean(
        fused[trainingType].runs.map((r) => r.examplesPerSecond),
        0,
      )} |`,
    );
}

/** Extraction latency of the seed-13 full wikigold model for a 30-word text (what the model-server runs per request). */
function serving(): void {
  if (!servingBundle) return;
  const { words, p50, p99 } = servingLatency(servingBundle);
  console.log(`\n## serving and training throughput\n`);
  console.log('| figure | value | target |');
  console.log('|---|---|---|');
  console.log(
    `| extraction latency p50, full wikigold model (seed ${QUOTED_SEED}), ${words}-word text, one thread, a fresh process | ${p50.toFixed(2)} ms | ≤5 ms |`,
  );
  console.log(`| extraction latency p99, same | ${p99.toFixed(2)} ms | |`);
  console.log(`| training examples/s, full wikigold, ${SEEDS.length} seed(s) | ${fmt(trainingRates, 0)} | ≥200 |`);
}

async function main(): Promise<void> {
  const env = process.env;
  const only = [
    env.BENCH_NER_ONLY,
    env.BENCH_ZEROSHOT_ONLY,
    env.BENCH_RELATIONS_ONLY,
    env.BENCH_CLASSIFICATION_ONLY,
    env.BENCH_OOS_ONLY,
    env.BENCH_RECIPE_ONLY,
  ].some(Boolean);
  const run = (flag: string | undefined) => !only || Boolean(flag);
  console.log(`# bench:ml — ${RECIPE}${LIMIT ? `; BENCH_LIMIT=${LIMIT} (smoke run: figures are not comparable)` : ''}`);
  if (run(env.BENCH_NER_ONLY)) await ner();
  if (run(env.BENCH_ZEROSHOT_ONLY)) zeroShot();
  if (run(env.BENCH_RELATIONS_ONLY)) await relations();
  if (run(env.BENCH_CLASSIFICATION_ONLY)) await classification();
  if (run(env.BENCH_CLASSIFICATION_ONLY || env.BENCH_OOS_ONLY)) await outOfScope();
  if (run(env.BENCH_NER_ONLY)) serving();
  if (env.BENCH_RECIPE_ONLY) await recipeCheck();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
