import { Adam, clipGradNorm, Rng } from '../nn';
import { type DecoderConfig, initWeights, lossOf, makeBatch, type Weights, type Window } from './model';

export interface PretrainOptions {
  config: DecoderConfig;
  /** Training text as tokens (bytes). */
  corpus: Uint8Array;
  steps: number;
  batchSize: number;
  learningRate: number;
  seed: number;
  onStep?: (step: number, loss: number) => void;
}

function randomWindows(corpus: Uint8Array, count: number, context: number, rng: Rng): Window[] {
  return Array.from({ length: count }, () => {
    const start = rng.int(corpus.length - context - 1);
    const slice = Array.from(corpus.subarray(start, start + context + 1));
    return { inputs: slice.slice(0, -1), targets: slice.slice(1), weights: slice.slice(1).map(() => 1) };
  });
}

/** Next-byte pretraining on random windows of the corpus: warm-up then cosine decay, AdamW, clipped gradients. */
export function pretrainDecoder(options: PretrainOptions): Weights {
  const { config, corpus, steps, batchSize, learningRate, seed } = options;
  const weights = initWeights(config, seed);
  const params = Object.values(weights);
  const opt = new Adam(params, { learningRate, beta2: 0.99, weightDecay: 0.01 });
  const rng = new Rng(seed + 1);
  const warmup = Math.max(1, Math.floor(steps * 0.05));
  for (let step = 0; step < steps; step++) {
    const lr =
      step < warmup
        ? (learningRate * (step + 1)) / warmup
        : 0.1 * learningRate +
          0.9 * learningRate * 0.5 * (1 + Math.cos((Math.PI * (step - warmup)) / (steps - warmup)));
    const loss = lossOf(config, weights, makeBatch(randomWindows(corpus, batchSize, config.context, rng)));
    loss.backward();
    clipGradNorm(params, 1);
    opt.step(lr);
    options.onStep?.(step, loss.data[0]!);
  }
  return weights;
}

/** Mean next-byte loss over consecutive windows of held-out text. */
export function corpusLoss(config: DecoderConfig, weights: Weights, corpus: Uint8Array, maxWindows = 64): number {
  let total = 0;
  let n = 0;
  for (let start = 0; start + config.context + 1 <= corpus.length && n < maxWindows; start += config.context, n++) {
    const slice = Array.from(corpus.subarray(start, start + config.context + 1));
    total += lossOf(
      config,
      weights,
      makeBatch([{ inputs: slice.slice(0, -1), targets: slice.slice(1), weights: slice.slice(1).map(() => 1) }]),
    ).data[0]!;
  }
  return total / Math.max(1, n);
}
