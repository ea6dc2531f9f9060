/**
 * bench:ml's BERT section: the label-conditioned span head on the installed base (all-MiniLM-L6-v2), fine-tuned on
 * wikigold train (full and LoRA), dev F1 after each epoch, test F1 at the end, training seconds, and the serving
 * p50 for a 30-word text on this process's cores. BERT_MODES picks the modes (default full,lora), BERT_EPOCHS the
 * epochs, BERT_POS_WEIGHT the positives' loss weight, BENCH_LIMIT cuts the training rows. The decision threshold
 * is chosen on dev; test is scored once, at it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { datasetsDir } from '@whetstone/testing';
import { BERT_ENTITY_DEFAULTS, loadBertCheckpoint, resolveBaseDir, trainBertEntities } from '@whetstone/ml/internals';

const DATA = datasetsDir();
const read = (f: string) =>
  readFileSync(path.join(DATA, f), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { text: string; entities: { start: number; end: number; label: string }[] });
const LABELS = ['person', 'location', 'organization', 'misc'];
const MODES = (process.env.BERT_MODES ?? 'full,lora').split(',') as Array<'full' | 'lora'>;
const EPOCHS = Number(process.env.BERT_EPOCHS ?? BERT_ENTITY_DEFAULTS.epochs);
const SEED = Number(process.env.BERT_SEED ?? 13);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 0);

const dir = resolveBaseDir();
if (!dir) throw new Error('the base is not installed: run `pnpm --filter @whetstone/ml fetch:base`');
const ckpt = loadBertCheckpoint(dir);
let train = read('wikigold/train.jsonl');
if (LIMIT) train = train.slice(0, LIMIT);
const dev = read('wikigold/dev.jsonl');
const test = read('wikigold/test.jsonl');

for (const mode of MODES) {
  const lr = mode === 'full' ? Number(process.env.BERT_LR_FULL ?? 1e-4) : Number(process.env.BERT_LR_LORA ?? 1e-3);
  const t0 = performance.now();
  let last = 0;
  let evalMs = 0;
  const model = trainBertEntities(ckpt, train, LABELS, {
    ...BERT_ENTITY_DEFAULTS,
    mode,
    seed: SEED,
    epochs: EPOCHS,
    learningRate: lr,
    posWeight: Number(process.env.BERT_POS_WEIGHT ?? BERT_ENTITY_DEFAULTS.posWeight),
    onProgress: (e) => {
      if (performance.now() - last > 30_000) {
        last = performance.now();
        console.log(
          `${mode} step ${e.step}/${e.totalSteps} loss ${e.loss.toFixed(4)} ${((last - t0) / 1000).toFixed(0)} s`,
        );
      }
    },
    onEpoch: (epoch, m) => {
      const e0 = performance.now();
      const r = m.evaluate(dev);
      evalMs += performance.now() - e0;
      console.log(
        `${mode} epoch ${epoch}: dev F1 ${r.f1.toFixed(3)} (P ${r.precision.toFixed(3)} R ${r.recall.toFixed(3)})`,
      );
    },
  });
  const seconds = (performance.now() - t0 - evalMs) / 1000;
  // The decision threshold is chosen on dev, once, from one scoring pass; test is scored once, at it.
  const grid = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
  const devAt = model.evaluateAt(dev, grid);
  devAt.forEach((d, i) =>
    console.log(
      `${mode} dev F1 at threshold ${grid[i]}: ${d.f1.toFixed(3)} (P ${d.precision.toFixed(3)} R ${d.recall.toFixed(3)})`,
    ),
  );
  const best = grid[devAt.reduce((b, d, i) => (d.f1 > devAt[b]!.f1 ? i : b), 0)]!;
  console.log(`${mode} threshold chosen on dev: ${best}`);
  const servedModel = (mode === 'lora' ? model.merged() : model).withThreshold(best);
  const r = servedModel.evaluate(test);
  console.log(`headline: wikigold_test_f1_${mode} ${r.f1.toFixed(4)}`);
  if (mode === 'full') console.log(`headline: train_wikigold_full_s ${seconds.toFixed(0)}`);
  else console.log(`${mode} train s ${seconds.toFixed(0)}`);
  const text = test
    .find((t) => t.text.split(' ').length >= 30)!
    .text.split(' ')
    .slice(0, 30)
    .join(' ');
  for (let i = 0; i < 3; i++) servedModel.predict([text]);
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const s = performance.now();
    servedModel.predict([text]);
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  console.log(`${mode} serve p50 ${times[10]!.toFixed(1)} ms for 30 words`);
}
