/**
 * Embeddings benchmark: what the encoders' embeddings (`POST /v1/embeddings`) are good for, and what they cost.
 * Run with --help.
 */
import { extractBaseModel, loadModel, type ExtractionModel } from '@whetstone/ml';
import { allRows, DEFAULT_SEED, percentile, train } from '../ml/common';

const USAGE = `bench:embeddings — the extraction encoders' embeddings, in process (no servers)

  pnpm --filter @whetstone/bench bench:embeddings [--help]

Quality: banking77's 3,080 test questions are each given the intent of their nearest neighbours (cosine, k = 1
and k = 10 by majority) among the 5,000 training questions, embedded by
  - whetstone-extract-base (the pretrained encoder, what /v1/embeddings serves for it);
  - a classification job trained on banking77 train with the API's defaults (LoRA, 6 epochs, learning rate
    0.002, seed ${DEFAULT_SEED}), what /v1/embeddings serves for that job.
Nothing is chosen on test: there is nothing to choose (no setting of the embeddings is tuned).
Cost: p50 and p95 of embed() for 1 text and for 32 texts at a time (banking77 test questions), one thread.
Nothing here is timed by a test.

Options:
  --help        this text`;

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

/** Accuracy of k-nearest-neighbour intent (majority of the k, ties to the nearest) over the test questions. */
function knnAccuracy(index: Float32Array[], labels: string[], queries: Float32Array[], truth: string[], k: number) {
  let right = 0;
  queries.forEach((q, i) => {
    const nearest = index
      .map((v, j) => [cosine(q, v), j] as const)
      .sort((a, b) => b[0] - a[0])
      .slice(0, k);
    const votes = new Map<string, number>();
    for (const [, j] of nearest) votes.set(labels[j]!, (votes.get(labels[j]!) ?? 0) + 1);
    const top = Math.max(...votes.values());
    const pick = nearest.map(([, j]) => labels[j]!).find((l) => votes.get(l) === top);
    if (pick === truth[i]) right++;
  });
  return right / queries.length;
}

function embedAll(model: ExtractionModel, texts: string[]): Float32Array[] {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += 256) out.push(...model.embed!(texts.slice(i, i + 256)));
  return out;
}

function latency(model: ExtractionModel, texts: string[], size: number): { p50: number; p95: number } {
  const samples: number[] = [];
  for (let i = 0; i + size <= texts.length && samples.length < 200; i += size) {
    const t = performance.now();
    model.embed!(texts.slice(i, i + size));
    samples.push(performance.now() - t);
  }
  return { p50: percentile(samples, 0.5), p95: percentile(samples, 0.95) };
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(USAGE);
    return;
  }
  const trainRows = allRows('banking77/train.jsonl', 'classification');
  const testRows = allRows('banking77/test.jsonl', 'classification');
  const label = (r: (typeof trainRows)[number]) => r.label!;
  const [trainTexts, testTexts] = [trainRows.map((r) => r.text!), testRows.map((r) => r.text!)];
  const [trainLabels, testLabels] = [trainRows.map(label), testRows.map(label)];

  const run = await train('banking77 classification (LoRA)', DEFAULT_SEED, {
    trainingType: 'lora',
    train: trainRows,
    heldout: allRows('banking77/dev.jsonl', 'classification'),
  });
  const models: [string, ExtractionModel][] = [
    ['whetstone-extract-base', extractBaseModel],
    [`banking77 job (LoRA, seed ${DEFAULT_SEED})`, loadModel(run.result.bundle)],
  ];
  console.log(
    '| embeddings of | 1-NN intent accuracy | 10-NN accuracy | embed 1 text p50 / p95 ms | 32 texts p50 / p95 ms |',
  );
  console.log('|---|---|---|---|---|');
  for (const [name, model] of models) {
    const index = embedAll(model, trainTexts);
    const queries = embedAll(model, testTexts);
    const one = knnAccuracy(index, trainLabels, queries, testLabels, 1);
    const ten = knnAccuracy(index, trainLabels, queries, testLabels, 10);
    const single = latency(model, testTexts, 1);
    const batch = latency(model, testTexts, 32);
    console.log(
      `| ${name} | ${one.toFixed(3)} | ${ten.toFixed(3)} | ${single.p50.toFixed(2)} / ${single.p95.toFixed(2)} | ${batch.p50.toFixed(1)} / ${batch.p95.toFixed(1)} |`,
    );
  }
  console.log(
    `\nchance: ${(1 / new Set(trainLabels).size).toFixed(3)} (77 intents); the job's own classifier on test is what bench:ml reports`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
