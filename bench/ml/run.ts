/**
 * pnpm --filter @whetstone/bench bench:ml
 * Classification on the real banking77 set (train on train, report on test):
 * the n-gram classifier against a multinomial Naive Bayes baseline computed in
 * the same run, with training time, throughput and prediction latency.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { datasetsDir } from '@whetstone/testing';
import { LinearTagger, NaiveBayes, evaluateBundle, trainModel, NgramClassifier, classificationPRF, loadGlove, spanPRF, validateJsonl, zeroShotSpans } from '@whetstone/ml';

const SHARED = datasetsDir();

function load(file: string) {
  const report = validateJsonl(readFileSync(path.join(SHARED, file), 'utf8'), 'classification');
  if (report.errors.length) throw new Error(`${file}: ${report.errors.length} invalid rows`);
  return report.examples.map((e) => ({ text: e.text!, label: e.label! }));
}

async function main(): Promise<void> {
  const train = load('banking77/train.jsonl');
  const test = load('banking77/test.jsonl');
  const gold = test.map((e) => [e.label]);

  let t = process.hrtime.bigint();
  const nb = NaiveBayes.train(train);
  const nbSeconds = Number(process.hrtime.bigint() - t) / 1e9;
  const nbF1 = classificationPRF(gold, test.map((e) => [nb.predict(e.text)])).f1;

  t = process.hrtime.bigint();
  const epochs = Number(process.env.BENCH_EPOCHS ?? 10);
  const { model } = NgramClassifier.train(
    train.map((e) => ({ text: e.text, labels: [e.label] })),
    { epochs, seed: 13, onProgress: (p) => process.stderr.write(`\repoch ${p.epoch}/${epochs}  loss ${p.loss.toFixed(3)}  ${Math.round(p.examplesPerSecond)} ex/s  eta ${p.etaSeconds.toFixed(1)} s   `) },
  );
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  process.stderr.write('\n');
  const report = classificationPRF(gold, test.map((e) => [model.predict(e.text).label]));

  const text = 'I ordered a new card two weeks ago and it still has not arrived, can you tell me when it will be delivered to my home address please thanks';
  const samples: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const s = process.hrtime.bigint();
    model.predict(text);
    samples.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  samples.sort((a, b) => a - b);

  console.log('\nbanking77 intent classification (train 5,000 → test 3,080, 77 labels)\n');
  console.log('| model | micro F1 | train time s | examples/s |');
  console.log('|---|---|---|---|');
  console.log(`| multinomial Naive Bayes (baseline) | ${nbF1.toFixed(4)} | ${nbSeconds.toFixed(2)} | ${Math.round(train.length / nbSeconds)} |`);
  console.log(`| hashed uni+bigram linear, ${epochs} epochs | ${report.f1.toFixed(4)} | ${seconds.toFixed(2)} | ${Math.round((train.length * epochs) / seconds)} |`);
  console.log(`\nprediction latency, ${text.split(' ').length}-word text, 1 thread: p50 ${samples[1500]!.toFixed(3)} ms, p99 ${samples[2970]!.toFixed(3)} ms`);

  // NER on wikigold with the linear BIO tagger (the encoder, LoRA and zero-shot are not built yet).
  const ner = (f: string) => validateJsonl(readFileSync(path.join(SHARED, 'wikigold', f), 'utf8'), 'extraction').examples;
  const nerTrain = ner('train.jsonl');
  const nerTest = ner('test.jsonl');
  t = process.hrtime.bigint();
  // 6 epochs and GloVe inputs were chosen on wikigold dev (0.705 F1 there); test is reported once.
  const tagger = LinearTagger.train(nerTrain, { epochs: 6, seed: 13, embeddings: loadGlove() });
  const nerSeconds = Number(process.hrtime.bigint() - t) / 1e9;
  const nerReport = spanPRF(nerTest.map((e) => e.entities!), nerTest.map((e) => tagger.extract(e.text!)));
  const sentence = 'Frederick H. Collier was the first colonel of the 139th Pennsylvania regiment , formed at Camp Howe near Pittsburgh on September 1 , 1862 , and later sent to Washington .';
  const lat: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const s0 = process.hrtime.bigint();
    tagger.extract(sentence);
    lat.push(Number(process.hrtime.bigint() - s0) / 1e6);
  }
  lat.sort((a, b) => a - b);
  console.log(`\nwikigold NER (train 1,355 sentences → test 173), linear BIO tagger + GloVe-100 window, 6 epochs: micro F1 ${nerReport.f1.toFixed(3)} (P ${nerReport.precision.toFixed(3)}, R ${nerReport.recall.toFixed(3)})`);
  console.log(`  per label: ${Object.entries(nerReport.perLabel).map(([l, r]) => `${l} ${r.f1.toFixed(3)}`).join(', ')}`);
  console.log(`  training ${nerSeconds.toFixed(2)} s (${Math.round((nerTrain.length * 6) / nerSeconds)} sentences/s); extraction p50 ${lat[1000]!.toFixed(3)} ms for a ${sentence.split(' ').length}-token sentence`);

  // Zero-shot: no training, label names exactly as the dataset gives them, default threshold 0.5.
  const labels = ['person', 'location', 'organization', 'misc'];
  t = process.hrtime.bigint();
  const zs = spanPRF(nerTest.map((e) => e.entities!), nerTest.map((e) => zeroShotSpans(e.text!, labels, 0.5)));
  const zsMs = Number(process.hrtime.bigint() - t) / 1e6 / nerTest.length;
  console.log(`\nwikigold zero-shot (no training; labels ${labels.join(', ')}; threshold 0.5): micro F1 ${zs.f1.toFixed(3)} (P ${zs.precision.toFixed(3)}, R ${zs.recall.toFixed(3)}); ${zsMs.toFixed(2)} ms/sentence`);
  console.log(`  per label: ${Object.entries(zs.perLabel).map(([l, r]) => `${l} ${r.f1.toFixed(3)}`).join(', ')}`);

  // The product's training pipeline (what trainer jobs run): full vs LoRA-mode adapter, wikigold test.
  console.log('\nproduct pipeline (trainModel), wikigold train → test, 6 epochs, seed 7:');
  for (const trainingType of ['full', 'lora'] as const) {
    const logs: string[] = [];
    const t0 = performance.now();
    const result = await trainModel({ baseModel: 'whetstone-extract-base', trainingType, train: nerTrain, heldout: [], hyperparameters: { nrEpochs: 6, learningRate: 0.05, seed: 7 }, onLog: (_l, m) => logs.push(m) });
    const secs = (performance.now() - t0) / 1000;
    const m = evaluateBundle(result.bundle, nerTest);
    const share = /\(([\d.]+)% of full\)/.exec(logs[0] ?? '')?.[1];
    console.log(`  ${trainingType}: micro F1 ${m.f1.toFixed(3)} (P ${m.precision.toFixed(3)}, R ${m.recall.toFixed(3)}); trained parameters ${share}% of full; ${secs.toFixed(2)} s, ${Math.round((nerTrain.length * 6) / secs)} examples/s; bundle ${(result.bundle.byteLength / 1024).toFixed(0)} KB`);
  }
  console.log('Not yet measured (not built): the transformer encoder, decoder LoRA loss.');
}

void main();
