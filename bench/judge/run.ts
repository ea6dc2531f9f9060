/**
 * pnpm --filter @whetstone/bench bench:judge [--split test|dev] [--epochs n]
 *
 * How well the built-in judge's score separates right from wrong extractions (issue 16). Trains whetstone-extract-base
 * with the CLI's default recipe (`pnpm whetstone ml train`: full fine-tuning, 6 epochs, learning rate 0.002, seed 13)
 * on wikigold train, predicts the chosen split with confidences, runs the zero-shot base on the same sentences as the
 * independent model, and prints the ROC AUC of the score, and of each ingredient alone, against exact match per
 * sentence (the predicted set of (label, start, end) equals the gold set). The formula's weight was chosen with
 * `--split dev`, which also prints the grid it was chosen from; the default (test) is the reported figure.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { datasetsDir } from '@whetstone/testing';
import {
  BUILTIN_JUDGE_CONFIDENCE_WEIGHT,
  builtinJudgeScore,
  extractBaseModel,
  loadModel,
  trainModel,
} from '@whetstone/ml';
import { validateJsonl } from '@whetstone/ml/internals';

const HELP = `Usage: pnpm --filter @whetstone/bench bench:judge [--split test|dev] [--epochs n]

ROC AUC of the built-in judge's score (and of its ingredients alone) against exact match per sentence, for a model
trained on wikigold train with the CLI's default recipe (full, 6 epochs, learning rate 0.002, seed 13).

Options:
  --split <s>   test (default, the reported figure) or dev (where the weight was chosen; prints the grid)
  --epochs <n>  training epochs (default 6, the CLI's default)
  -h, --help    show this help
`;

const LABELS = ['person', 'location', 'organization', 'misc'];
const OPTIONS = { includeConfidence: true, includeSpans: true };

/** ROC AUC as the Mann–Whitney statistic, ties counted half. */
export function rocAuc(scores: number[], truth: boolean[]): number {
  const order = scores.map((_, i) => i).sort((a, b) => scores[a]! - scores[b]!);
  const ranks = new Array<number>(scores.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && scores[order[j + 1]!] === scores[order[i]!]) j++;
    for (let k = i; k <= j; k++) ranks[order[k]!] = (i + j) / 2 + 1;
    i = j + 1;
  }
  const pos = truth.filter(Boolean).length;
  const neg = truth.length - pos;
  const rankSum = truth.reduce((s, t, i) => (t ? s + ranks[i]! : s), 0);
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}

const spanKeys = (r: Record<string, unknown>) =>
  new Set(
    Object.entries((r.entities ?? {}) as Record<string, { start: number; end: number }[]>).flatMap(([label, ms]) =>
      ms.map((m) => `${label}:${m.start}:${m.end}`),
    ),
  );

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      split: { type: 'string', default: 'test' },
      epochs: { type: 'string', default: '6' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void process.stdout.write(HELP);
  if (values.split !== 'test' && values.split !== 'dev') throw new Error('--split must be test or dev');
  const epochs = Number(values.epochs);
  if (!Number.isInteger(epochs) || epochs < 1) throw new Error('--epochs must be a positive integer');
  const read = (file: string) =>
    validateJsonl(readFileSync(path.join(datasetsDir(), 'wikigold', file), 'utf8'), 'extraction').examples;
  const train = read('train.jsonl');
  const rows = read(`${values.split}.jsonl`);

  const t0 = performance.now();
  // On a terminal one line rewritten in place; in a log, a line when the epoch changes.
  let shownEpoch = 0;
  const showProgress = (p: { epoch: number; step: number; totalSteps: number }) => {
    if (process.stderr.isTTY)
      process.stderr.write(`\rtraining: epoch ${p.epoch}/${epochs} step ${p.step}/${p.totalSteps}   `);
    else if (p.epoch !== shownEpoch) {
      shownEpoch = p.epoch;
      process.stderr.write(`training: epoch ${p.epoch}/${epochs}\n`);
    }
  };
  const result = await trainModel({
    baseModel: 'whetstone-extract-base',
    trainingType: 'full',
    train,
    heldout: [],
    hyperparameters: { nrEpochs: epochs, learningRate: 0.002, seed: 13 },
    onProgress: showProgress,
  });
  if (process.stderr.isTTY) process.stderr.write('\n');
  const trainSecs = (performance.now() - t0) / 1000;
  const model = loadModel(result.bundle);
  const schema = { entities: LABELS };

  const truth: boolean[] = [];
  const judged = rows.map((row) => {
    const output = model.extract(row.text!, schema, OPTIONS);
    const independent = extractBaseModel.extract(row.text!, schema, OPTIONS);
    const gold = new Set(row.entities!.map((e) => `${e.label}:${e.start}:${e.end}`));
    const predicted = spanKeys(output);
    truth.push(gold.size === predicted.size && [...gold].every((k) => predicted.has(k)));
    return builtinJudgeScore({ output, independent });
  });
  const right = truth.filter(Boolean).length;
  const auc = (f: (j: (typeof judged)[number]) => number) => rocAuc(judged.map(f), truth).toFixed(3);

  console.log(
    `\n## built-in judge on wikigold ${values.split}: ${rows.length} sentences, ${right} exactly right (${((100 * right) / rows.length).toFixed(1)}%)`,
  );
  console.log(
    `model: whetstone-extract-base, full, ${epochs} epochs, lr 0.002, seed 13 on wikigold train (${train.length} sentences, ${trainSecs.toFixed(1)} s); independent model: the zero-shot base; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  console.log('| score | ROC AUC (exact match per sentence) |');
  console.log('|---|---|');
  console.log(
    `| **built-in judge** (${BUILTIN_JUDGE_CONFIDENCE_WEIGHT}·confidence + ${1 - BUILTIN_JUDGE_CONFIDENCE_WEIGHT}·agreement) | **${auc((j) => j.score)}** |`,
  );
  console.log(`| served model's confidence alone (product over its mentions) | ${auc((j) => j.confidence)} |`);
  console.log(`| agreement with the zero-shot base alone (exact label+span F1) | ${auc((j) => j.agreement)} |`);
  if (values.split === 'dev') {
    console.log('\nweight of the confidence (the rest is agreement), on dev:');
    for (const w of [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95])
      console.log(`  w ${w.toFixed(2)}: ROC AUC ${auc((j) => w * j.confidence + (1 - w) * j.agreement)}`);
  }
  console.log('\ngoal (issue 16): ROC AUC ≥0.75');
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
