import type { Embeddings } from '../assets/load';
import type { EpochHooks } from '../classify/ngram-classifier';
import { isNoRelation, type ArgumentSpan, type Example } from '../data';
import {
  Adam,
  add,
  clipGradNorm,
  crossEntropy,
  Rng,
  scale,
  softmaxInPlace,
  tensor,
  trainingStep,
  zeros,
  type Tensor,
} from '../nn';
import { runSteps, runStepsAsync } from '../steps';
import { featurize, type Featurized } from './features';
import {
  classLogits,
  classResidualName,
  decodeSpans,
  encode,
  entityLogits,
  goldTags,
  initAdapter,
  isHeadOrNorm,
  makeBatch,
  maskedTokenLoss,
  maskTokens,
  MAX_RELATION_SPANS,
  mergeAdapter,
  poolStates,
  relationLogits,
  tagLoss,
  tokenRange,
  type DecodedSpan,
  type EncoderConfig,
  type LoraAdapter,
  type MaskVocabulary,
  type SpanPairs,
  type TokenSpan,
  type Weights,
} from './model';

export type EncoderMode = 'full' | 'lora';

export interface EncoderTrainOptions {
  mode: EncoderMode;
  /** Entity types, in a fixed order (the head's label inputs). */
  labels: string[];
  epochs: number;
  learningRate: number;
  batchSize: number;
  seed: number;
  loraRank: number;
  loraAlpha: number;
  /** Share of hashed features blanked at random while training. */
  featureDropout?: number;
  /** Dropout on the input projection and each residual branch. */
  dropout?: number;
  /** Relation labels, in a fixed order: when given, texts with `relations` also train the relation head. */
  relationLabels?: string[];
  /** Single-label classification tasks: when given, texts that carry them train the pooled classification head. */
  tasks?: ClassTask[];
  /**
   * Pretraining only: mask `rate` of each batch's in-vocabulary words and add `weight` × the loss of restoring
   * them (the weights need the `mlm.*` head, `initMaskHead`).
   */
  maskedTokens?: { rate: number; weight: number; vocabulary: MaskVocabulary };
}

/** A single-label classification task the encoder's pooled head learns: its labels in a fixed order. */
export interface ClassTask {
  task: string;
  labels: string[];
}

/** Everything needed to continue training exactly where it stopped. */
export interface EncoderTrainState {
  epoch: number;
  step: number;
  adamT: number;
  /** Trained tensors by name (weights in full mode; adapter, head and norms in LoRA mode), with Adam's moments and their moving average. */
  tensors: Record<string, { shape: number[]; data: Float32Array; m: Float32Array; v: Float32Array; ema: Float32Array }>;
}

interface Chunk {
  features: Featurized;
  tags: Int32Array;
  /** Pretraining: the label names this text was asked for (its tags index them). */
  labels?: string[];
  /** Per task (options order): the text's label index, or -1 when the text does not carry the task. */
  classes?: Int32Array;
  /**
   * Texts annotated with relations: their entity spans and every ordered pair's target (0 = none, else 1 +
   * relation index); `given` for a relation-classification row's one pair, whose none is a real example, always kept.
   */
  relations?: {
    spans: { first: number; last: number }[];
    pairs: { head: number; tail: number; target: number }[];
    given?: boolean;
  };
}

/** Negatives (gold entity pairs without a relation) kept per positive in a batch. */
const NEGATIVES_PER_POSITIVE = 3;

/**
 * A chunk's relation targets: its gold entities and relation arguments (the
 * first {@link MAX_RELATION_SPANS} by position), every ordered pair of them,
 * labelled with its gold relation or none.
 */
function relationTargets(chunk: Featurized, ex: Example, relationLabels: readonly string[]): Chunk['relations'] {
  const spans: { first: number; last: number }[] = [];
  const indexOf = (s: { start: number; end: number }) => {
    const r = tokenRange(chunk, s);
    return r ? spans.findIndex((x) => x.first === r.first && x.last === r.last) : -1;
  };
  for (const s of [...(ex.entities ?? []), ...(ex.relations ?? []).flatMap((r) => [r.head, r.tail])]) {
    const r = tokenRange(chunk, s);
    if (r && indexOf(s) < 0) spans.push(r);
  }
  spans.sort((a, b) => a.first - b.first || a.last - b.last);
  spans.splice(MAX_RELATION_SPANS);
  const gold = new Map<string, number>();
  for (const r of ex.relations ?? []) {
    const [h, t, label] = [indexOf(r.head), indexOf(r.tail), relationLabels.indexOf(r.label)];
    if (h >= 0 && t >= 0 && h !== t && label >= 0 && !gold.has(`${h}:${t}`)) gold.set(`${h}:${t}`, 1 + label);
  }
  const pairs = [];
  for (let h = 0; h < spans.length; h++)
    for (let t = 0; t < spans.length; t++)
      if (h !== t) pairs.push({ head: h, tail: t, target: gold.get(`${h}:${t}`) ?? 0 });
  return { spans, pairs };
}

/**
 * A given pair's target in the one chunk that holds both its spans (0 = none, else 1 + relation index), or
 * undefined when the chunk does not hold them both or the label is neither a trained relation nor a no-relation one.
 */
function givenPairTarget(chunk: Featurized, ex: Example, relationLabels: readonly string[]): Chunk['relations'] {
  const head = tokenRange(chunk, ex.head!);
  const tail = tokenRange(chunk, ex.tail!);
  const label = ex.label ?? '';
  const target = isNoRelation(label) ? 0 : 1 + relationLabels.indexOf(label);
  if (!head || !tail || target < 0) return undefined;
  return { spans: [head, tail], pairs: [{ head: 0, tail: 1, target }], given: true };
}

/** Whether a row is relation classification with a given pair (its `label` is the pair's relation, not a class). */
const hasGivenPair = (ex: Example): ex is Example & { head: ArgumentSpan; tail: ArgumentSpan; label: string } =>
  Boolean(ex.head && ex.tail && typeof ex.label === 'string');

/** A text's label index per task (-1 when it does not carry the task; single-label rows or `{label, task}`). */
function classTargets(ex: Example, tasks: readonly ClassTask[]): Int32Array | undefined {
  const out = new Int32Array(tasks.length).fill(-1);
  const given = new Map<string, string>();
  if (typeof ex.label === 'string' && !hasGivenPair(ex)) given.set(ex.task ?? 'label', ex.label);
  for (const c of ex.classifications ?? []) if (c.labels.length === 1) given.set(c.task, c.labels[0]!);
  tasks.forEach((t, k) => {
    const label = given.get(t.task);
    if (label !== undefined) out[k] = t.labels.indexOf(label);
  });
  return out.some((x) => x >= 0) ? out : undefined;
}

/** A training text; `labels` (pretraining) lists the label names it is asked for, mentioned or not. */
export type EncoderExample = Example & { labels?: string[] };

/** Splits a featurised text into pieces of at most `max` tokens (the tokens keep their offsets into the text). */
export function chunksOf(f: Featurized, max: number): Featurized[] {
  if (f.tokens.length <= max) return [f];
  const denseWidth = f.dense.length / f.tokens.length;
  const hashedPerToken = f.hashed.length / f.tokens.length;
  const out: Featurized[] = [];
  for (let s = 0; s < f.tokens.length; s += max) {
    const e = Math.min(f.tokens.length, s + max);
    out.push({
      tokens: f.tokens.slice(s, e),
      dense: f.dense.slice(s * denseWidth, e * denseWidth),
      hashed: f.hashed.slice(s * hashedPerToken, e * hashedPerToken),
    });
  }
  return out;
}

/**
 * Trains the entity encoder one epoch at a time with AdamW (linear warm-up,
 * then linear decay), gradient clipping and seeded per-epoch order, so a
 * state saved after any epoch resumes to the same result as an uninterrupted
 * run. Full mode trains every weight; LoRA mode trains a low-rank adapter on
 * every linear layer and the hash table, plus the head and the norms. With
 * `relationLabels`, texts that list relations add the relation head's loss
 * over their gold entity pairs.
 */
export class EncoderTrainer {
  private readonly chunks: Chunk[];
  private readonly weights: Weights;
  private readonly adapter: LoraAdapter | null;
  private readonly trained: Map<string, Tensor>;
  private readonly adam: Adam;
  /** Exponential moving average of each trained tensor (what the model serves: steadier than the last step). */
  private readonly ema: Float32Array[];
  /**
   * For the lazily updated hash tables: the average and the step up to which
   * each row of it is current. A row no step touched keeps its weights, so its
   * average catches up in one move by the product of the skipped decays.
   */
  private readonly lazyAverages = new Map<Tensor, { ema: Float32Array; to: Int32Array }>();
  /** Σ log(decay) over steps 1..s, at index s. */
  private readonly logDecays: number[] = [0];
  epoch = 0;
  step = 0;

  constructor(
    examples: EncoderExample[],
    private readonly config: EncoderConfig,
    private readonly glove: Embeddings,
    base: Weights,
    private readonly options: EncoderTrainOptions,
    state?: EncoderTrainState,
  ) {
    this.chunks = [];
    for (const ex of examples) {
      const f = featurize(ex.text ?? '', glove, config.hashLog2);
      const own = ex.labels;
      const relations = this.relationLabels.length && Array.isArray(ex.relations);
      const pair = this.relationLabels.length > 0 && hasGivenPair(ex);
      // Texts without an `entities` array (classification rows) teach no tags: their tag loss is masked out.
      const tagged = Array.isArray(ex.entities) || Boolean(own);
      const classes = this.tasks.length ? classTargets(ex, this.tasks) : null;
      chunksOf(f, config.maxTokens).forEach((c, i) => {
        if (!c.tokens.length) return;
        this.chunks.push({
          features: c,
          tags: tagged ? goldTags(c, ex.entities ?? [], own ?? options.labels) : new Int32Array(0),
          ...(own ? { labels: own } : {}),
          ...(classes && i === 0 ? { classes } : {}),
          ...(relations ? { relations: relationTargets(c, ex, this.relationLabels) } : {}),
          ...(pair ? { relations: givenPairTarget(c, ex, this.relationLabels) } : {}),
        });
      });
    }
    const L = options.labels.length;
    const R = this.relationLabels.length;
    // Trained labels, relations and classes get a learned residual on top of their name's projection.
    this.weights = {
      ...base,
      'label.B': zeros([L, config.dim]),
      'label.I': zeros([L, config.dim]),
      ...(R ? { 'rel.label': zeros([R, config.dim]) } : {}),
      ...Object.fromEntries(this.tasks.map((t) => [classResidualName(t.task), zeros([t.labels.length, config.dim])])),
    };
    for (const k of ['label.B', 'label.I', 'rel.label', ...this.tasks.map((t) => classResidualName(t.task))])
      if (base[k] && this.weights[k] && base[k].rows === this.weights[k].rows) this.weights[k] = base[k];
    this.adapter =
      options.mode === 'lora' ? initAdapter(config, glove, options.loraRank, options.loraAlpha, options.seed) : null;
    this.trained = new Map();
    // Trained tensors are fresh copies (the base stays untouched), known in states by name (`adapter:` for the adapter's).
    const train = (into: Record<string, Tensor>, name: string, stateName: string) => {
      const copy = tensor(into[name]!.data.slice(), into[name]!.shape, true);
      into[name] = copy;
      this.trained.set(stateName, copy);
    };
    // Without relation labels the relation head stays as it is (and entity-only training costs what it did).
    const trains = (name: string) =>
      (options.mode === 'full' || isHeadOrNorm(name)) &&
      (R > 0 || !name.startsWith('rel.')) &&
      (this.tasks.length > 0 || !name.startsWith('cls.'));
    for (const name of Object.keys(this.weights)) if (trains(name)) train(this.weights, name, name);
    if (this.adapter)
      for (const name of Object.keys(this.adapter.tensors)) train(this.adapter.tensors, name, `adapter:${name}`);
    this.adam = new Adam([...this.trained.values()], { learningRate: options.learningRate, weightDecay: 0.01 });
    this.ema = [...this.trained.values()].map((t) => t.data.slice());
    if (state) this.restore(state);
  }

  private get relationLabels(): string[] {
    return this.options.relationLabels ?? [];
  }

  private get tasks(): ClassTask[] {
    return this.options.tasks ?? [];
  }

  get size(): number {
    return this.chunks.length;
  }

  get batchesPerEpoch(): number {
    return Math.ceil(this.chunks.length / this.options.batchSize);
  }

  /** Parameters this run trains, and the full model's count (LoRA's share is their ratio). */
  get parameterCounts(): { trained: number; total: number } {
    let trained = 0;
    let total = 0;
    for (const t of this.trained.values()) trained += t.data.length;
    for (const t of Object.values(this.weights)) total += t.data.length;
    return { trained, total };
  }

  /** The scheduled rate of the next step (warm-up, then linear decay). */
  learningRate(): number {
    const total = Math.max(1, this.options.epochs * this.batchesPerEpoch);
    const warm = Math.max(1, Math.min(100, Math.round(total * 0.06)));
    const s = this.step + 1;
    return this.options.learningRate * (s <= warm ? s / warm : Math.max(0.05, (total - s) / Math.max(1, total - warm)));
  }

  /**
   * The epoch's batches: a seeded shuffle, then texts of similar length
   * grouped (sorted within pools of 32 batches) so little of a batch is
   * padding, then the batches shuffled.
   */
  private batchOrder(rng: Rng, bs: number): number[][] {
    const order = rng.shuffle(this.chunks.map((_, i) => i));
    const pool = bs * 32;
    const batches: number[][] = [];
    for (let p = 0; p < order.length; p += pool) {
      const part = order
        .slice(p, p + pool)
        .sort((a, b) => this.chunks[a]!.features.tokens.length - this.chunks[b]!.features.tokens.length || a - b);
      for (let i = 0; i < part.length; i += bs) batches.push(part.slice(i, i + bs));
    }
    return rng.shuffle(batches);
  }

  /** One epoch as a generator that yields after every batch. Returns the epoch's mean loss. */
  *epochSteps(hooks: EpochHooks = {}): Generator<void, number, void> {
    const epoch = this.epoch + 1;
    const rng = new Rng((this.options.seed * 7919 + epoch * 104729) >>> 0);
    const bs = this.options.batchSize;
    const batchList = this.batchOrder(rng, bs);
    let total = 0;
    let batches = 0;
    let done = 0;
    for (const batchIds of batchList) {
      if (hooks.signal?.aborted) throw new Error('training cancelled');
      const picked = batchIds.map((k) => this.chunks[k]!);
      // Forward and backward in buffers the next step reuses; only the loss and the touched rows leave it.
      const step = trainingStep(() => this.lossAndGradients(picked, rng));
      // A batch with nothing the encoder learns from (rows of multi-label tasks only) is passed over.
      if (!step) {
        done += picked.length;
        yield;
        continue;
      }
      // Hash-table rows (and their adapter rows) that this batch's features touched: the tables update lazily.
      const touched = Int32Array.from(new Set(step.hashIds)).sort();
      const rows = new Map(
        [this.weights.hash, this.adapter?.tensors['hash.A']]
          .filter((t): t is Tensor => Boolean(t?.requiresGrad))
          .map((t) => [t, touched] as const),
      );
      clipGradNorm(this.adam.params, 1, rows);
      for (const [t, r] of rows) this.catchUpAverage(t, r);
      this.adam.step(this.learningRate(), rows);
      this.step++;
      this.updateAverage(rows);
      total += step.loss;
      batches++;
      done += picked.length;
      hooks.onExample?.(done, total / batches);
      yield;
    }
    this.epoch = epoch;
    // Every row's average is brought up to date at each epoch's end, so a run resumed from its checkpoint stays exact.
    for (const t of this.lazyAverages.keys()) this.catchUpAverage(t);
    return total / Math.max(1, batches);
  }

  /** One batch's loss, with every trained tensor's gradient accumulated; null when the batch has nothing to learn. */
  private lossAndGradients(picked: readonly Chunk[], rng: Rng): { loss: number; hashIds: Int32Array } | null {
    const batch = makeBatch(
      picked.map((c) => c.features),
      this.glove,
      { rate: this.options.featureDropout ?? 0.1, rng },
    );
    const parts: Tensor[] = [];
    const masking = this.options.maskedTokens;
    const masked = masking
      ? maskTokens(
          batch,
          picked.map((c) => c.features),
          masking.vocabulary,
          masking.rate,
          rng,
        )
      : null;
    const states = encode(this.config, this.weights, batch, this.adapter ?? undefined, {
      rate: this.options.dropout ?? 0.2,
      rng,
    });
    if (masking && masked?.rows.length)
      parts.push(scale(maskedTokenLoss(this.weights, states, masked, masking.vocabulary), masking.weight));
    const perExample = picked[0]!.labels ? picked.map((c) => c.labels ?? []) : undefined;
    if (this.options.labels.length || perExample)
      parts.push(
        tagLoss(
          this.weights,
          states,
          batch,
          picked.map((c) => c.tags),
          this.options.labels,
          this.glove,
          perExample,
        ),
      );
    const pairs = this.relationPairs(picked, rng);
    if (pairs)
      parts.push(
        crossEntropy(
          relationLogits(this.weights, states, batch.time, pairs, this.relationLabels, this.glove, this.relationLabels),
          pairs.targets,
        ),
      );
    if (picked.some((c) => c.classes)) {
      const pooled = poolStates(states, batch);
      this.tasks.forEach((t, k) => {
        const targets = Int32Array.from(picked, (c) => Math.max(0, c.classes?.[k] ?? -1));
        const mask = Float32Array.from(picked, (c) => ((c.classes?.[k] ?? -1) >= 0 ? 1 : 0));
        if (mask.some((m) => m > 0))
          parts.push(
            crossEntropy(classLogits(this.weights, pooled, t.task, t.labels, this.glove, t.labels), targets, mask),
          );
      });
    }
    if (!parts.length) return null;
    const loss = parts.reduce((a, b) => add(a, b));
    loss.backward();
    return { loss: loss.data[0]!, hashIds: batch.hashIds };
  }

  /** A batch's relation pairs: every positive and given pair, and at most {@link NEGATIVES_PER_POSITIVE} times as many negatives (seeded choice). */
  private relationPairs(picked: readonly Chunk[], rng: Rng): (SpanPairs & { targets: Int32Array }) | null {
    if (!picked.some((c) => c.relations?.pairs.length)) return null;
    const spans: TokenSpan[] = [];
    const positives: [number, number, number][] = [];
    const negatives: [number, number, number][] = [];
    picked.forEach((c, b) => {
      if (!c.relations) return;
      const offset = spans.length;
      for (const s of c.relations.spans) spans.push({ chunk: b, ...s });
      for (const p of c.relations.pairs)
        (p.target || c.relations.given ? positives : negatives).push([offset + p.head, offset + p.tail, p.target]);
    });
    const keep = NEGATIVES_PER_POSITIVE * Math.max(1, positives.length);
    const chosen = [...positives, ...(negatives.length > keep ? rng.shuffle(negatives).slice(0, keep) : negatives)];
    return {
      spans,
      heads: Int32Array.from(chosen, (p) => p[0]),
      tails: Int32Array.from(chosen, (p) => p[1]),
      targets: Int32Array.from(chosen, (p) => p[2]),
    };
  }

  runEpoch(hooks: EpochHooks = {}): number {
    return runSteps(this.epochSteps(hooks));
  }

  runEpochAsync(hooks: EpochHooks = {}): Promise<number> {
    return runStepsAsync(this.epochSteps(hooks));
  }

  /** Decay warms up with the step count, so short runs are not dominated by the starting weights. */
  private static decay(step: number): number {
    return Math.min(0.99, (1 + step) / (10 + step));
  }

  /** This step's average: every element of dense tensors, only the touched rows of lazily updated ones. */
  private updateAverage(lazy: ReadonlyMap<Tensor, Int32Array>): void {
    const decay = EncoderTrainer.decay(this.step);
    const rest = 1 - decay;
    [...this.trained.values()].forEach((t, k) => {
      const e = this.ema[k]!;
      const w = t.data;
      const rows = lazy.get(t);
      if (!rows) {
        for (let i = 0; i < e.length; i++) e[i] = decay * e[i]! + rest * w[i]!;
        return;
      }
      const cols = t.cols;
      const { to } = this.lazyAverage(t);
      for (const r of rows) {
        for (let i = r * cols, end = (r + 1) * cols; i < end; i++) e[i] = decay * e[i]! + rest * w[i]!;
        to[r] = this.step;
      }
    });
  }

  /** A lazily updated tensor's average and, per row, the step it is current to (all rows at first use). */
  private lazyAverage(t: Tensor): { ema: Float32Array; to: Int32Array } {
    let lazy = this.lazyAverages.get(t);
    if (!lazy)
      this.lazyAverages.set(
        t,
        (lazy = { ema: this.ema[[...this.trained.values()].indexOf(t)]!, to: new Int32Array(t.rows).fill(this.step) }),
      );
    return lazy;
  }

  /** Brings rows (all when none are given) of a lazily updated tensor's average up to the current step: e ← w + Π decay · (e − w). */
  private catchUpAverage(t: Tensor, rows?: Int32Array): void {
    const { ema: e, to } = this.lazyAverage(t);
    while (this.logDecays.length <= this.step)
      this.logDecays.push(
        this.logDecays[this.logDecays.length - 1]! + Math.log(EncoderTrainer.decay(this.logDecays.length)),
      );
    const cols = t.cols;
    const apply = (r: number) => {
      if (to[r] === this.step) return;
      const keep = Math.exp(this.logDecays[this.step]! - this.logDecays[to[r]!]!);
      for (let i = r * cols; i < (r + 1) * cols; i++) e[i] = t.data[i]! + keep * (e[i]! - t.data[i]!);
      to[r] = this.step;
    };
    if (rows) for (const r of rows) apply(r);
    else for (let r = 0; r < to.length; r++) apply(r);
  }

  snapshot(): EncoderTrainState {
    for (const t of this.lazyAverages.keys()) this.catchUpAverage(t);
    const tensors: EncoderTrainState['tensors'] = {};
    [...this.trained].forEach(([name, t], k) => {
      tensors[name] = {
        shape: [...t.shape],
        data: t.data.slice(),
        m: this.adam.m[k]!.slice(),
        v: this.adam.v[k]!.slice(),
        ema: this.ema[k]!.slice(),
      };
    });
    return { epoch: this.epoch, step: this.step, adamT: this.adam.t, tensors };
  }

  private restore(state: EncoderTrainState): void {
    [...this.trained].forEach(([name, t], k) => {
      const s = state.tensors[name];
      // A state from before relations or classes were trained keeps those heads as initialised.
      if (!s && (name.startsWith('rel.') || name.startsWith('cls.'))) return;
      // Label rows: a continued job may add labels after the ones it was trained on.
      const fits =
        s &&
        (s.data.length === t.data.length ||
          ((name.startsWith('label.') || name === 'rel.label' || name.startsWith('cls.task:')) &&
            s.data.length < t.data.length));
      if (!s || !fits) throw new Error(`training state has no matching tensor ${name}`);
      t.data.set(s.data);
      this.adam.m[k]!.set(s.m);
      this.adam.v[k]!.set(s.v);
      this.ema[k]!.set(s.ema);
    });
    this.adam.t = state.adamT;
    this.epoch = state.epoch;
    this.step = state.step;
  }

  /**
   * The trained weights (full mode) or the base plus the adapter's tensors
   * (LoRA mode), for inference or storing: the moving average of the trained
   * tensors (or the last step's with `last`).
   */
  result(last = false): { weights: Weights; adapter: LoraAdapter | null } {
    for (const t of this.lazyAverages.keys()) this.catchUpAverage(t);
    const averaged = new Map([...this.trained.values()].map((t, k) => [t, this.ema[k]!]));
    const plain = (w: Weights) =>
      Object.fromEntries(
        Object.entries(w).map(([k, t]) => [k, tensor((last ? t.data : (averaged.get(t) ?? t.data)).slice(), t.shape)]),
      );
    return {
      weights: plain(this.weights),
      adapter: this.adapter ? { ...this.adapter, tensors: plain(this.adapter.tensors) } : null,
    };
  }

  model(): EntityEncoder {
    const { weights, adapter } = this.result();
    return new EntityEncoder(
      this.config,
      this.glove,
      weights,
      adapter,
      this.options.labels,
      this.relationLabels,
      this.tasks,
    );
  }
}

/** A predicted entity: its text, offsets, type and confidence. */
export interface EntityMention {
  start: number;
  end: number;
  label: string;
  text: string;
  confidence: number;
}

/** A predicted relation between two predicted entities. */
export interface RelationMention {
  label: string;
  head: EntityMention;
  tail: EntityMention;
  confidence: number;
}

/** Texts encoded together in one forward pass; bounds the padded batch's memory for 1,000-text calls. */
const MAX_TEXTS_PER_PASS = 32;

/**
 * Serving: entities for any label names, and relations between them for any
 * relation names; trained labels and relations use their learned residuals.
 */
/** A token that is a word or a number (has a letter or a digit): the tokens an embedding's word part averages. */
const WORDLIKE = /[\p{L}\p{N}]/u;

/** `v` scaled to length `scale` (zeros stay zeros). */
function scaledUnit(v: Float32Array, scale: number): Float32Array {
  const norm = Math.hypot(...v);
  return norm > 0 && scale > 0 ? v.map((x) => (x / norm) * scale) : new Float32Array(v.length);
}

/** Length of every embedding: the encoder's width (128) plus GloVe's (100). */
export const EMBEDDING_DIMENSIONS = 228;
/**
 * The share of a trained encoder's mean state in its embeddings (the rest is its words' GloVe mean); chosen on
 * banking77 dev by 1-nearest-neighbour intent accuracy (docs/benchmarks.md, "Embeddings"). The pretrained base's
 * mean state does not separate meanings (dev 0.245 against 0.718 for the GloVe mean), so the base uses weight 0.
 */
export const EMBEDDING_STATE_WEIGHT = 0.3;

export class EntityEncoder {
  constructor(
    readonly config: EncoderConfig,
    private readonly glove: Embeddings,
    readonly weights: Weights,
    readonly adapter: LoraAdapter | null,
    readonly trainedLabels: readonly string[],
    readonly relationLabels: readonly string[] = [],
    readonly tasks: readonly ClassTask[] = [],
  ) {}

  /** The same model with its adapter folded into the weights. */
  merged(): EntityEncoder {
    return this.adapter
      ? new EntityEncoder(
          this.config,
          this.glove,
          mergeAdapter(this.weights, this.adapter),
          null,
          this.trainedLabels,
          this.relationLabels,
          this.tasks,
        )
      : this;
  }

  /** A text's pooled state [D]: the mean of its first chunk's token states; null for a text without tokens. */
  pooledState(text: string): Float32Array | null {
    const chunk = chunksOf(featurize(text, this.glove, this.config.hashLog2), this.config.maxTokens)[0];
    if (!chunk?.tokens.length) return null;
    const batch = makeBatch([chunk], this.glove);
    return poolStates(encode(this.config, this.weights, batch, this.adapter ?? undefined), batch).data.slice();
  }

  /**
   * Each text's embedding, {@link EMBEDDING_DIMENSIONS} long and unit length: the mean of its token states over all
   * its chunks (unit length, weighted by the square root of `stateWeight`) followed by the mean of its words' unit
   * GloVe vectors (unit length, weighted by the square root of 1 − `stateWeight`); zeros for a text without words.
   * With `stateWeight` 0 no forward pass runs and the first part is zeros. Texts run in batched forward passes; the
   * result does not depend on the batch.
   */
  embedMany(texts: readonly string[], stateWeight: number): Float32Array[] {
    const D = this.config.dim;
    const G = this.glove.dim;
    const states = texts.map(() => new Float32Array(D));
    const words = texts.map(() => new Float32Array(G));
    const chunks: Featurized[] = [];
    const owners: number[] = [];
    texts.forEach((text, i) => {
      for (const c of chunksOf(featurize(text, this.glove, this.config.hashLog2), this.config.maxTokens)) {
        if (!c.tokens.length) continue;
        chunks.push(c);
        owners.push(i);
        // A token's dense features start with its unit GloVe vector (zeros when unknown); symbols are left out.
        const width = c.dense.length / c.tokens.length;
        c.tokens.forEach((t, k) => {
          if (!WORDLIKE.test(t.text)) return;
          const sum = words[i]!;
          for (let d = 0; d < G; d++) sum[d] = sum[d]! + c.dense[k * width + d]!;
        });
      }
    });
    for (let from = 0; stateWeight > 0 && from < chunks.length; from += MAX_TEXTS_PER_PASS) {
      const group = chunks.slice(from, from + MAX_TEXTS_PER_PASS);
      const batch = makeBatch(group, this.glove);
      const pooled = poolStates(encode(this.config, this.weights, batch, this.adapter ?? undefined), batch).data;
      // Weighted by the chunk's tokens, so a long text's state is the mean over all of its tokens.
      group.forEach((c, b) => {
        const sum = states[owners[from + b]!]!;
        for (let d = 0; d < D; d++) sum[d] = sum[d]! + pooled[b * D + d]! * c.tokens.length;
      });
    }
    return texts.map((_, i) => {
      const out = new Float32Array(D + G);
      out.set(scaledUnit(states[i]!, Math.sqrt(stateWeight)), 0);
      out.set(scaledUnit(words[i]!, Math.sqrt(1 - stateWeight)), D);
      const norm = Math.hypot(...out);
      return norm > 0 ? out.map((x) => x / norm) : out;
    });
  }

  /**
   * A single-label task's label probabilities from the pooled text state
   * (softmax over the given labels; labels the task was trained with use their
   * learned residuals). A caller that has the text's `pooledState` passes it to skip the forward pass.
   */
  classify(
    text: string,
    task: string,
    labels: readonly string[],
    pooled: Float32Array | null = this.pooledState(text),
  ): { label: string; confidence: number }[] {
    if (!labels.length || !pooled)
      return labels.map((label) => ({ label, confidence: 1 / Math.max(1, labels.length) }));
    const trained = this.tasks.find((t) => t.task === task)?.labels ?? [];
    const scores = classLogits(
      this.weights,
      tensor(pooled, [1, pooled.length]),
      task,
      labels,
      this.glove,
      trained,
    ).data.slice();
    softmaxInPlace(scores, 0, scores.length);
    return labels.map((label, i) => ({ label, confidence: scores[i]! }));
  }

  /**
   * Token states of the texts' chunks, encoded as one padded batch, and each
   * chunk's entity spans of `labels` (all, whatever their confidence);
   * `owner[b]` is the index of chunk b's text. The path is decoded over the
   * requested and the trained labels together, so that asking for a subset
   * does not turn another trained type's mentions into the requested one.
   * Padding rows are zero and masked out of attention, so a text's spans are
   * the same whether it is encoded alone or with others.
   */
  private encodeTexts(
    texts: readonly string[],
    labels: readonly string[],
  ): { chunks: Featurized[]; owner: number[]; time: number; states: Tensor; spans: DecodedSpan[][] } | null {
    const chunks: Featurized[] = [];
    const owner: number[] = [];
    texts.forEach((text, i) => {
      const own = chunksOf(featurize(text, this.glove, this.config.hashLog2), this.config.maxTokens);
      if (!own.length || !own[0]!.tokens.length) return;
      for (const c of own) {
        chunks.push(c);
        owner.push(i);
      }
    });
    if (!chunks.length) return null;
    const batch = makeBatch(chunks, this.glove);
    const states = encode(this.config, this.weights, batch, this.adapter ?? undefined);
    const wanted = new Set(labels);
    const decoded = [...labels, ...this.trainedLabels.filter((l) => !wanted.has(l))];
    const logits = entityLogits(this.weights, states, decoded, this.glove, this.trainedLabels).data;
    const spans = chunks.map((c, b) =>
      decodeSpans(logits, b * batch.time, c, decoded, this.weights['crf.trans']!.data).filter((s) =>
        wanted.has(s.label),
      ),
    );
    return { chunks, owner, time: batch.time, states, spans };
  }

  extract(text: string, labels: readonly string[] = this.trainedLabels, threshold = 0): EntityMention[] {
    return this.extractMany([text], labels, threshold)[0]!;
  }

  /**
   * {@link extract} for several texts with one forward pass per group of
   * chunks (fewer, larger matmuls): the same mentions as extracting each text
   * alone, in the order of `texts`.
   */
  extractMany(
    texts: readonly string[],
    labels: readonly string[] = this.trainedLabels,
    threshold = 0,
  ): EntityMention[][] {
    const out: EntityMention[][] = texts.map(() => []);
    if (!labels.length) return out;
    for (let from = 0; from < texts.length; from += MAX_TEXTS_PER_PASS) {
      const group = texts.slice(from, from + MAX_TEXTS_PER_PASS);
      const encoded = this.encodeTexts(group, labels);
      encoded?.spans.forEach((spans, b) => {
        const i = from + encoded.owner[b]!;
        const text = texts[i]!;
        for (const s of spans) if (s.confidence >= threshold) out[i]!.push({ ...s, text: text.slice(s.start, s.end) });
      });
    }
    return out;
  }

  /**
   * Relation classification with given spans: each item's ordered pair (head, tail) takes its most probable class
   * among none and `relationLabels`; `label` is null for none (and, with confidence 0, when no chunk of the text
   * holds both spans). `probabilities` are none's, then each relation's.
   */
  classifyPairs(
    items: readonly { text: string; head: { start: number; end: number }; tail: { start: number; end: number } }[],
    relationLabels: readonly string[] = this.relationLabels,
  ): { label: string | null; confidence: number; probabilities: number[] }[] {
    const C = 1 + relationLabels.length;
    const out = items.map(() => ({ label: null as string | null, confidence: 0, probabilities: [] as number[] }));
    if (!relationLabels.length) return out;
    for (let from = 0; from < items.length; from += MAX_TEXTS_PER_PASS) {
      const chunks: Featurized[] = [];
      const owners: number[] = [];
      const spans: TokenSpan[] = [];
      for (let i = from; i < Math.min(items.length, from + MAX_TEXTS_PER_PASS); i++) {
        const it = items[i]!;
        for (const c of chunksOf(featurize(it.text, this.glove, this.config.hashLog2), this.config.maxTokens)) {
          const head = tokenRange(c, it.head);
          const tail = tokenRange(c, it.tail);
          if (!head || !tail) continue;
          spans.push({ chunk: chunks.length, ...head }, { chunk: chunks.length, ...tail });
          chunks.push(c);
          owners.push(i);
          break;
        }
      }
      if (!chunks.length) continue;
      const batch = makeBatch(chunks, this.glove);
      const states = encode(this.config, this.weights, batch, this.adapter ?? undefined);
      const P = chunks.length;
      const probs = relationLogits(
        this.weights,
        states,
        batch.time,
        {
          spans,
          heads: Int32Array.from({ length: P }, (_, p) => 2 * p),
          tails: Int32Array.from({ length: P }, (_, p) => 2 * p + 1),
        },
        relationLabels,
        this.glove,
        this.relationLabels,
      ).data;
      owners.forEach((i, p) => {
        softmaxInPlace(probs, p * C, C);
        const row = Array.from(probs.subarray(p * C, (p + 1) * C));
        const best = row.indexOf(Math.max(...row));
        out[i] = { label: best > 0 ? relationLabels[best - 1]! : null, confidence: row[best]!, probabilities: row };
      });
    }
    return out;
  }

  /**
   * Relations between the entities predicted for `entityLabels`: every
   * ordered pair of one chunk's entities (the {@link MAX_RELATION_SPANS} most
   * confident) takes its most probable class among `none` and the requested
   * relations, kept when that is a relation at least `threshold` probable.
   */
  extractRelations(
    text: string,
    relationLabels: readonly string[] = this.relationLabels,
    entityLabels: readonly string[] = this.trainedLabels,
    threshold = 0,
  ): RelationMention[] {
    if (!relationLabels.length || !entityLabels.length) return [];
    const encoded = this.encodeTexts([text], entityLabels);
    return encoded ? this.pairRelations(text, encoded, relationLabels, threshold) : [];
  }

  /**
   * {@link extractRelations} between entities found elsewhere (a model trained on relations with given spans has
   * no entity types of its own): every ordered pair of the mentions one chunk holds.
   */
  relationsBetween(
    text: string,
    mentions: readonly DecodedSpan[],
    relationLabels: readonly string[] = this.relationLabels,
    threshold = 0,
  ): RelationMention[] {
    if (!relationLabels.length || mentions.length < 2) return [];
    const chunks = chunksOf(featurize(text, this.glove, this.config.hashLog2), this.config.maxTokens);
    if (!chunks[0]?.tokens.length) return [];
    const batch = makeBatch(chunks, this.glove);
    const states = encode(this.config, this.weights, batch, this.adapter ?? undefined);
    // A mention belongs to the chunk holding its first character.
    const spans = chunks.map((c) =>
      mentions.filter((m) => c.tokens.some((t) => t.start <= m.start && m.start < t.end) && tokenRange(c, m)),
    );
    return this.pairRelations(text, { chunks, time: batch.time, states, spans }, relationLabels, threshold);
  }

  /** Relations between each chunk's mentions (the most confident {@link MAX_RELATION_SPANS}), scored on its states. */
  private pairRelations(
    text: string,
    encoded: { chunks: Featurized[]; time: number; states: Tensor; spans: DecodedSpan[][] },
    relationLabels: readonly string[],
    threshold: number,
  ): RelationMention[] {
    const spans: TokenSpan[] = [];
    const mentions: EntityMention[] = [];
    const heads: number[] = [];
    const tails: number[] = [];
    encoded.spans.forEach((chunkSpans, b) => {
      const kept = [...chunkSpans]
        .sort((x, y) => y.confidence - x.confidence)
        .slice(0, MAX_RELATION_SPANS)
        .sort((x, y) => x.start - y.start);
      const offset = spans.length;
      for (const s of kept) {
        spans.push({ chunk: b, ...tokenRange(encoded.chunks[b]!, s)! });
        mentions.push({ ...s, text: text.slice(s.start, s.end) });
      }
      for (let h = 0; h < kept.length; h++)
        for (let t = 0; t < kept.length; t++)
          if (h !== t) {
            heads.push(offset + h);
            tails.push(offset + t);
          }
    });
    if (!heads.length) return [];
    const C = 1 + relationLabels.length;
    const probs = relationLogits(
      this.weights,
      encoded.states,
      encoded.time,
      { spans, heads: Int32Array.from(heads), tails: Int32Array.from(tails) },
      relationLabels,
      this.glove,
      this.relationLabels,
    ).data;
    const out: RelationMention[] = [];
    for (let p = 0; p < heads.length; p++) {
      softmaxInPlace(probs, p * C, C);
      let best = 0;
      for (let c = 1; c < C; c++) if (probs[p * C + c]! > probs[p * C + best]!) best = c;
      const confidence = probs[p * C + best]!;
      if (best > 0 && confidence >= threshold)
        out.push({
          label: relationLabels[best - 1]!,
          head: mentions[heads[p]!]!,
          tail: mentions[tails[p]!]!,
          confidence,
        });
    }
    return out;
  }
}
