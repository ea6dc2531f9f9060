import { fnv1a, tokenize, wordNgrams } from '../text/tokenize';
import { runSteps, runStepsAsync } from '../steps';

/** Seeded PRNG (mulberry32), so a seed reproduces a run exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface TrainProgress {
  epoch: number;
  step: number;
  loss: number;
  learningRate: number;
  examplesPerSecond: number;
  etaSeconds: number;
}

/**
 * Which hashed n-grams a classifier reads. `words+char4` (what training writes now): lower-cased word uni- and
 * bigrams and the character 4-grams of each `<word>`, which carry typos and word forms across ("transfered",
 * "transferring"). `words`: the uni- and bigrams alone, as models trained before it read them; a stored model
 * or checkpoint without the field is one of those, so it keeps answering as it was trained.
 */
export type NgramFeatures = 'words' | 'words+char4';
export const NGRAM_FEATURES: NgramFeatures = 'words+char4';
/**
 * AdaGrad's default step. Single-label (softmax) branches with character 4-grams take 0.03: an example has about
 * four times as many features, and on banking77 dev (3 seeds, 6 epochs) 0.03 beat 0.5, 0.1 and 0.01. Multi-label
 * (sigmoid) branches keep 0.5, as word-n-gram models do: on multi-label rows built from banking77 dev a smaller
 * step left the sigmoids short of 0.5 (micro F1 0.595 at 0.03 against 0.699 at 0.5).
 */
export function ngramLearningRate(features: NgramFeatures, multiLabel: boolean): number {
  return features === 'words+char4' && !multiLabel ? 0.03 : 0.5;
}

/** The hashed n-gram names of a text. */
export function ngramNames(text: string, features: NgramFeatures): string[] {
  const grams = wordNgrams(text);
  if (features === 'words') return grams;
  for (const { text: word } of tokenize(text.toLowerCase())) {
    const padded = `<${word}>`;
    for (let i = 0; i + 4 <= padded.length; i++) grams.push(`#${padded.slice(i, i + 4)}`);
  }
  return grams;
}

export interface NgramTrainOptions {
  epochs?: number;
  /** The AdaGrad step; default `ngramLearningRate` of the features and task kind, times `learningRateScale`. */
  learningRate?: number;
  /** Multiplies the default step (a training job's rate over its default rate); default 1. */
  learningRateScale?: number;
  /** log2 of the number of hashed feature buckets. */
  bucketsLog2?: number;
  l2?: number;
  seed?: number;
  multiLabel?: boolean;
  /** Default NGRAM_FEATURES. */
  features?: NgramFeatures;
  signal?: AbortSignal;
  onProgress?: (p: TrainProgress) => void;
}

export interface Prediction {
  label: string;
  confidence: number;
  scores: Record<string, number>;
}

/**
 * A linear classifier over hashed word uni- and bigrams and character 4-grams
 * (the classification head's n-gram branch; `NgramFeatures`): softmax for
 * single-label, sigmoids for multi-label, trained with AdaGrad. Fast on CPU and
 * strong on short intents.
 */
export class NgramClassifier {
  private constructor(
    readonly labels: string[],
    private readonly bucketsLog2: number,
    private readonly weights: Float32Array,
    private readonly bias: Float32Array,
    readonly multiLabel: boolean,
    readonly featureSet: NgramFeatures,
  ) {}

  static untrained(
    labels: string[],
    bucketsLog2 = 16,
    multiLabel = false,
    features: NgramFeatures = NGRAM_FEATURES,
  ): NgramClassifier {
    return new NgramClassifier(
      [...labels],
      bucketsLog2,
      new Float32Array((1 << bucketsLog2) * labels.length),
      new Float32Array(labels.length),
      multiLabel,
      features,
    );
  }

  /**
   * A text's buckets, one per distinct n-gram: two n-grams in one bucket count twice, as they do in the full
   * table a LoRA table merges into (so merged outputs are the same). `words` models were trained with one count
   * per bucket and keep it.
   */
  private features(text: string): number[] {
    const mask = (1 << this.bucketsLog2) - 1;
    const names = ngramNames(text, this.featureSet);
    if (this.featureSet === 'words') return [...new Set(names.map((g) => fnv1a(g) & mask))];
    return [...new Set(names)].map((g) => fnv1a(g) & mask);
  }

  private logits(features: number[]): Float32Array {
    const c = this.labels.length;
    const out = Float32Array.from(this.bias);
    for (const f of features) {
      const row = f * c;
      for (let k = 0; k < c; k++) out[k]! += this.weights[row + k]!;
    }
    return out;
  }

  private probabilities(logits: Float32Array): Float32Array {
    if (this.multiLabel) return logits.map((z) => 1 / (1 + Math.exp(-z)));
    let max = -Infinity;
    for (const z of logits) max = Math.max(max, z);
    let sum = 0;
    const p = logits.map((z) => {
      const e = Math.exp(z - max);
      sum += e;
      return e;
    });
    return p.map((e) => e / sum);
  }

  /** Train on (text, labels) pairs; returns the mean loss of each epoch. */
  static train(
    examples: { text: string; labels: string[] }[],
    options: NgramTrainOptions = {},
  ): { model: NgramClassifier; epochLosses: number[] } {
    const trainer = new ClassifierTrainer(examples, options);
    const epochs = options.epochs ?? 8;
    const losses: number[] = [];
    const started = Date.now();
    for (let epoch = 1; epoch <= epochs; epoch++) {
      losses.push(trainer.runEpoch(options.signal ? { signal: options.signal } : {}));
      const step = epoch * trainer.size;
      const elapsed = (Date.now() - started) / 1000 || 1e-3;
      options.onProgress?.({
        epoch,
        step,
        loss: losses[losses.length - 1]!,
        learningRate: trainer.learningRate,
        examplesPerSecond: step / elapsed,
        etaSeconds: ((epochs * trainer.size - step) * elapsed) / step,
      });
    }
    return { model: trainer.model(), epochLosses: losses };
  }

  /** @internal The trainer's way in. */
  static over(
    labels: string[],
    bucketsLog2: number,
    weights: Float32Array,
    bias: Float32Array,
    multiLabel: boolean,
    features: NgramFeatures,
  ): NgramClassifier {
    return new NgramClassifier(labels, bucketsLog2, weights, bias, multiLabel, features);
  }

  /** @internal */
  featuresOf(text: string): number[] {
    return this.features(text);
  }

  /** @internal */
  probabilitiesOf(features: number[]): Float32Array {
    return this.probabilities(this.logits(features));
  }

  get buckets(): number {
    return this.bucketsLog2;
  }

  /** @internal Raw weights, for adapters and merging. */
  get raw(): { weights: Float32Array; bias: Float32Array } {
    return { weights: this.weights, bias: this.bias };
  }

  predict(text: string, threshold = 0.5): Prediction & { labels: string[] } {
    const p = this.probabilities(this.logits(this.features(text)));
    let best = 0;
    for (let k = 1; k < p.length; k++) if (p[k]! > p[best]!) best = k;
    const scores = Object.fromEntries(this.labels.map((l, k) => [l, p[k]!]));
    const labels = this.multiLabel ? this.labels.filter((_, k) => p[k]! >= threshold) : [this.labels[best]!];
    return { label: this.labels[best]!, confidence: p[best]!, scores, labels };
  }

  /** A compact serialisable form (weights as base64 float32). */
  toJSON(): object {
    return {
      format: 'whetstone-ngram-classifier/1',
      labels: this.labels,
      bucketsLog2: this.bucketsLog2,
      multiLabel: this.multiLabel,
      features: this.featureSet,
      bias: Buffer.from(this.bias.buffer, this.bias.byteOffset, this.bias.byteLength).toString('base64'),
      weights: Buffer.from(this.weights.buffer, this.weights.byteOffset, this.weights.byteLength).toString('base64'),
    };
  }

  static fromJSON(json: {
    format: string;
    labels: string[];
    bucketsLog2: number;
    multiLabel: boolean;
    /** Absent in models stored before character n-grams: they read `words`. */
    features?: NgramFeatures;
    bias: string;
    weights: string;
  }): NgramClassifier {
    if (json.format !== 'whetstone-ngram-classifier/1') throw new Error(`unknown model format ${json.format}`);
    const f32 = (b64: string) => {
      const buf = Buffer.from(b64, 'base64');
      return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    };
    return new NgramClassifier(
      json.labels,
      json.bucketsLog2,
      f32(json.weights),
      f32(json.bias),
      json.multiLabel,
      json.features ?? 'words',
    );
  }
}

/** Multinomial Naive Bayes over the same n-grams: the baseline classification F1 must beat. */
export class NaiveBayes {
  private constructor(
    private readonly labels: string[],
    private readonly logPrior: Map<string, number>,
    private readonly logLikelihood: Map<string, Map<string, number>>,
    private readonly unseen: Map<string, number>,
  ) {}

  static train(examples: { text: string; label: string }[], alpha = 1): NaiveBayes {
    const labels = [...new Set(examples.map((e) => e.label))].sort();
    const vocab = new Set<string>();
    const counts = new Map(labels.map((l) => [l, new Map<string, number>()]));
    const docs = new Map(labels.map((l) => [l, 0]));
    for (const e of examples) {
      docs.set(e.label, docs.get(e.label)! + 1);
      const m = counts.get(e.label)!;
      for (const g of wordNgrams(e.text)) {
        vocab.add(g);
        m.set(g, (m.get(g) ?? 0) + 1);
      }
    }
    const logPrior = new Map(labels.map((l) => [l, Math.log(docs.get(l)! / examples.length)]));
    const logLikelihood = new Map<string, Map<string, number>>();
    const unseen = new Map<string, number>();
    for (const l of labels) {
      const m = counts.get(l)!;
      const total = [...m.values()].reduce((a, b) => a + b, 0) + alpha * vocab.size;
      logLikelihood.set(l, new Map([...m].map(([g, n]) => [g, Math.log((n + alpha) / total)])));
      unseen.set(l, Math.log(alpha / total));
    }
    return new NaiveBayes(labels, logPrior, logLikelihood, unseen);
  }

  predict(text: string): string {
    const grams = wordNgrams(text);
    let best = this.labels[0]!;
    let bestScore = -Infinity;
    for (const l of this.labels) {
      const ll = this.logLikelihood.get(l)!;
      let s = this.logPrior.get(l)!;
      for (const g of grams) s += ll.get(g) ?? this.unseen.get(l)!;
      if (s > bestScore) {
        bestScore = s;
        best = l;
      }
    }
    return best;
  }
}

/** What an epoch reports as it goes: examples done and the epoch's running loss so far. */
export interface EpochHooks {
  signal?: AbortSignal;
  onExample?: (done: number, runningLoss: number) => void;
}

/** Everything needed to continue classifier training exactly where it stopped. */
export interface ClassifierState {
  epoch: number;
  labels: string[];
  multiLabel: boolean;
  /** Absent in checkpoints written before character n-grams: they read `words`. */
  features?: NgramFeatures;
  weights: Float32Array;
  bias: Float32Array;
  gradSq: Float32Array;
  biasSq: Float32Array;
}

/**
 * AdaGrad training one epoch at a time with its state exposed; each epoch's
 * order depends only on the seed and the epoch, so a resumed run matches an
 * uninterrupted one exactly.
 */
export class ClassifierTrainer {
  private readonly state: ClassifierState;
  private readonly live: NgramClassifier;
  private readonly encoded: { f: number[]; y: number[] }[];

  constructor(
    examples: { text: string; labels: string[] }[],
    private readonly options: NgramTrainOptions & { labels?: string[] } = {},
    resume?: ClassifierState,
  ) {
    const seen = [...new Set(examples.flatMap((e) => e.labels))].sort();
    // Continuing a checkpoint keeps its labels' order; labels it never saw (a correction's new class) are appended.
    const labels = resume
      ? [...resume.labels, ...seen.filter((l) => !resume.labels.includes(l))]
      : (options.labels ?? seen);
    const bucketsLog2 = options.bucketsLog2 ?? 16;
    const size = (1 << bucketsLog2) * labels.length;
    this.state = resume
      ? {
          ...resume,
          labels,
          weights: widen(resume.weights, resume.labels.length, labels.length, 0),
          bias: widen(resume.bias, resume.labels.length, labels.length, 0),
          gradSq: widen(resume.gradSq, resume.labels.length, labels.length, 1e-8),
          biasSq: widen(resume.biasSq, resume.labels.length, labels.length, 1e-8),
        }
      : {
          epoch: 0,
          labels,
          multiLabel: options.multiLabel ?? false,
          features: options.features ?? NGRAM_FEATURES,
          weights: new Float32Array(size),
          bias: new Float32Array(labels.length),
          gradSq: new Float32Array(size).fill(1e-8),
          biasSq: new Float32Array(labels.length).fill(1e-8),
        };
    if (this.state.weights.length !== size) throw new Error('checkpoint does not match this model size');
    this.live = NgramClassifier.over(
      labels,
      bucketsLog2,
      this.state.weights,
      this.state.bias,
      this.state.multiLabel,
      this.features,
    );
    const index = new Map(labels.map((l, i) => [l, i]));
    this.encoded = examples.map((e) => ({
      f: this.live.featuresOf(e.text),
      y: e.labels.map((l) => index.get(l)).filter((i): i is number => i !== undefined),
    }));
  }

  get epoch(): number {
    return this.state.epoch;
  }

  /** The n-grams this run reads: a checkpoint's own (`words` when it predates the field), else the option's. */
  get features(): NgramFeatures {
    return this.state.features ?? 'words';
  }

  /** The AdaGrad step this run takes. */
  get learningRate(): number {
    const { learningRate, learningRateScale = 1 } = this.options;
    return learningRate ?? ngramLearningRate(this.features, this.state.multiLabel) * learningRateScale;
  }

  get size(): number {
    return this.encoded.length;
  }

  get hashedParameterCount(): number {
    return this.state.weights.length;
  }

  get parameterCount(): number {
    return this.state.weights.length + this.state.bias.length;
  }

  /** One pass; returns the mean loss. Throws when `signal` aborts. */
  runEpoch(hooks: EpochHooks = {}): number {
    return runSteps(this.epochSteps(hooks));
  }

  /** As runEpoch, yielding to the event loop every 100 examples (heartbeats and cancellation stay responsive). */
  runEpochAsync(hooks: EpochHooks = {}): Promise<number> {
    return runStepsAsync(this.epochSteps(hooks));
  }

  private *epochSteps(hooks: EpochHooks): Generator<void, number, void> {
    const st = this.state;
    const lr = this.learningRate;
    const l2 = this.options.l2 ?? 1e-6;
    const c = st.labels.length;
    const epoch = st.epoch + 1;
    const random = seededRandom(((this.options.seed ?? 13) + Math.imul(epoch, 0x9e3779b1)) >>> 0);
    const order = this.encoded.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    let lossSum = 0;
    let done = 0;
    for (const idx of order) {
      if (hooks.signal?.aborted) throw new Error('training cancelled');
      const { f, y } = this.encoded[idx]!;
      const p = this.live.probabilitiesOf(f);
      const grad = new Float32Array(c);
      for (let k = 0; k < c; k++) grad[k] = p[k]!;
      if (st.multiLabel) {
        for (let k = 0; k < c; k++) {
          const t = y.includes(k) ? 1 : 0;
          grad[k] = p[k]! - t;
          lossSum -= t ? Math.log(p[k]! + 1e-12) : Math.log(1 - p[k]! + 1e-12);
        }
      } else {
        const target = y[0] ?? 0;
        grad[target]! -= 1;
        lossSum -= Math.log(p[target]! + 1e-12);
      }
      for (let k = 0; k < c; k++) {
        const g = grad[k]!;
        st.biasSq[k]! += g * g;
        st.bias[k]! -= (lr * g) / Math.sqrt(st.biasSq[k]!);
      }
      for (const feature of f) {
        const row = feature * c;
        for (let k = 0; k < c; k++) {
          const g = grad[k]! + l2 * st.weights[row + k]!;
          if (g === 0) continue;
          st.gradSq[row + k]! += g * g;
          st.weights[row + k]! -= (lr * g) / Math.sqrt(st.gradSq[row + k]!);
        }
      }
      hooks.onExample?.(++done, lossSum / done);
      if (done % 100 === 0) yield;
    }
    st.epoch = epoch;
    return lossSum / Math.max(1, this.encoded.length);
  }

  snapshot(): ClassifierState {
    const st = this.state;
    return {
      ...st,
      labels: [...st.labels],
      weights: st.weights.slice(),
      bias: st.bias.slice(),
      gradSq: st.gradSq.slice(),
      biasSq: st.biasSq.slice(),
    };
  }

  model(): NgramClassifier {
    return NgramClassifier.over(
      this.state.labels,
      this.options.bucketsLog2 ?? 16,
      this.state.weights.slice(),
      this.state.bias.slice(),
      this.state.multiLabel,
      this.features,
    );
  }
}

/** A copy of a row-major [rows × from] matrix as [rows × to] (to ≥ from), the new columns set to `fill`. */
function widen(values: Float32Array, from: number, to: number, fill: number): Float32Array {
  if (from === to) return values.slice();
  const rows = values.length / from;
  const out = new Float32Array(rows * to).fill(fill);
  for (let r = 0; r < rows; r++) out.set(values.subarray(r * from, (r + 1) * from), r * to);
  return out;
}
