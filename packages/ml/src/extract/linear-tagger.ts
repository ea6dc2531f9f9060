import type { EntitySpan, Example } from '../data';
import { seededRandom, type EpochHooks } from '../classify/ngram-classifier';
import { fnv1a, tokenize, type Token } from '../text/tokenize';
import { runSteps, runStepsAsync } from '../steps';
import type { Embeddings } from '../assets/load';

/** Dense inputs per token: GloVe of the word, the previous and the next word. */
const WINDOW = [0, -1, 1];

function shape(w: string): string {
  return w
    .replace(/\p{Lu}+/gu, 'X')
    .replace(/\p{Ll}+/gu, 'x')
    .replace(/\p{N}+/gu, 'd');
}

export interface TaggedSpan extends EntitySpan {
  text: string;
  confidence: number;
}

/**
 * A BIO entity tagger: an averaged perceptron over hashed features of each
 * token and its ±2 context (word, lower case, shape, affixes, previous tag),
 * decoded greedily left to right. A fast, honest baseline for the encoder.
 */
export class LinearTagger {
  private constructor(
    readonly entityTypes: string[],
    private readonly tags: string[],
    private readonly bucketsLog2: number,
    private readonly weights: Float32Array,
    private readonly embeddings: Embeddings | undefined,
    private readonly dense: Float32Array,
  ) {}

  private get denseDim(): number {
    return this.embeddings ? this.embeddings.dim * WINDOW.length : 0;
  }

  /** The token's dense vector (zeros for unknown words), or null without embeddings. */
  private denseOf(tokens: Token[], i: number): Float32Array | null {
    if (!this.embeddings) return null;
    const dim = this.embeddings.dim;
    const x = new Float32Array(this.denseDim);
    WINDOW.forEach((off, slot) => {
      const t = tokens[i + off];
      const v = t ? this.embeddings!.vector(t.text) : null;
      if (v) x.set(v, slot * dim);
    });
    return x;
  }

  private featureIds(tokens: Token[], i: number, prevTag: string): number[] {
    const w = (j: number) => (j < 0 ? '<s>' : j >= tokens.length ? '</s>' : tokens[j]!.text);
    const cur = w(i);
    const lower = cur.toLowerCase();
    const names = [
      'bias',
      `w=${cur}`,
      `l=${lower}`,
      `sh=${shape(cur)}`,
      `p3=${lower.slice(0, 3)}`,
      `s3=${lower.slice(-3)}`,
      `s2=${lower.slice(-2)}`,
      `l-1=${w(i - 1).toLowerCase()}`,
      `l+1=${w(i + 1).toLowerCase()}`,
      `l-2=${w(i - 2).toLowerCase()}`,
      `l+2=${w(i + 2).toLowerCase()}`,
      `sh-1=${shape(w(i - 1))}`,
      `sh+1=${shape(w(i + 1))}`,
      `w-1|w=${w(i - 1).toLowerCase()}|${lower}`,
      `w|w+1=${lower}|${w(i + 1).toLowerCase()}`,
      `pt=${prevTag}`,
      `pt|sh=${prevTag}|${shape(cur)}`,
      `pt|l=${prevTag}|${lower}`,
      `first=${i === 0}|${shape(cur)}`,
    ];
    const mask = (1 << this.bucketsLog2) - 1;
    return names.map((n) => fnv1a(n) & mask);
  }

  private scores(
    features: number[],
    dense: Float32Array | null,
    into: Float32Array = new Float32Array(this.tags.length),
  ): Float32Array {
    into.fill(0);
    const t = this.tags.length;
    for (const f of features) for (let k = 0; k < t; k++) into[k]! += this.weights[f * t + k]!;
    if (dense) {
      const n = dense.length;
      for (let k = 0; k < t; k++) {
        let s = 0;
        for (let d = 0; d < n; d++) s += this.dense[k * n + d]! * dense[d]!;
        into[k]! += s;
      }
    }
    return into;
  }

  /** BIO tags of one example's tokens from its gold spans (a token is inside a span if it overlaps it). */
  private static goldTags(tokens: Token[], entities: EntitySpan[]): string[] {
    return tokens.map((tok) => {
      const span = entities.find((e) => tok.start < e.end && tok.end > e.start);
      if (!span) return 'O';
      return tok.start <= span.start ? `B-${span.label}` : `I-${span.label}`;
    });
  }

  static train(
    examples: Example[],
    options: {
      epochs?: number;
      seed?: number;
      bucketsLog2?: number;
      embeddings?: Embeddings;
      onEpoch?: (epoch: number, errors: number) => void;
    } = {},
  ): LinearTagger {
    const trainer = new TaggerTrainer(examples, options);
    for (let epoch = 1; epoch <= (options.epochs ?? 8); epoch++) {
      const errors = trainer.runEpoch();
      options.onEpoch?.(epoch, errors);
    }
    return trainer.model();
  }

  /** @internal The trainer's way in: a model over the given (shared, mutable) arrays. */
  static over(
    types: string[],
    tags: string[],
    bucketsLog2: number,
    weights: Float32Array,
    embeddings: Embeddings | undefined,
    dense: Float32Array,
  ): LinearTagger {
    return new LinearTagger(types, tags, bucketsLog2, weights, embeddings, dense);
  }

  /** @internal */
  featuresFor(tokens: Token[], i: number, prevTag: string): number[] {
    return this.featureIds(tokens, i, prevTag);
  }

  /** @internal */
  scoresFor(features: number[], dense: Float32Array | null, into: Float32Array): Float32Array {
    return this.scores(features, dense, into);
  }

  /** @internal */
  denseFor(tokens: Token[], i: number): Float32Array | null {
    return this.denseOf(tokens, i);
  }

  /** @internal */
  static goldTagsOf(tokens: Token[], entities: EntitySpan[]): string[] {
    return LinearTagger.goldTags(tokens, entities);
  }

  get tagSet(): string[] {
    return this.tags;
  }

  get buckets(): number {
    return this.bucketsLog2;
  }

  /** @internal Raw weights (hashed table, then dense), for adapters and merging. */
  get raw(): { weights: Float32Array; dense: Float32Array; embeddings: Embeddings | undefined } {
    return { weights: this.weights, dense: this.dense, embeddings: this.embeddings };
  }

  /** Serialisable form: weights as base64 float32. The embeddings are the shipped asset, referenced by name. */
  toJSON(): object {
    const b64 = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
    return {
      format: 'whetstone-linear-tagger/1',
      entityTypes: this.entityTypes,
      tags: this.tags,
      bucketsLog2: this.bucketsLog2,
      embeddings: this.embeddings ? 'glove-200k' : null,
      weights: b64(this.weights),
      dense: b64(this.dense),
    };
  }

  static fromJSON(
    json: {
      format: string;
      entityTypes: string[];
      tags: string[];
      bucketsLog2: number;
      embeddings: string | null;
      weights: string;
      dense: string;
    },
    embeddings?: Embeddings,
  ): LinearTagger {
    if (json.format !== 'whetstone-linear-tagger/1') throw new Error(`unknown model format ${json.format}`);
    if (json.embeddings && !embeddings) throw new Error(`this model needs the ${json.embeddings} embeddings`);
    const f32 = (b64: string) => {
      const buf = Buffer.from(b64, 'base64');
      return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    };
    return new LinearTagger(
      json.entityTypes,
      json.tags,
      json.bucketsLog2,
      f32(json.weights),
      json.embeddings ? embeddings : undefined,
      f32(json.dense),
    );
  }

  /** Entities with character offsets and a confidence (softmax of the tag scores, averaged over the span). */
  extract(text: string, threshold = 0): TaggedSpan[] {
    const tokens = tokenize(text);
    const spans: TaggedSpan[] = [];
    let open: { label: string; start: number; end: number; conf: number[] } | null = null;
    let prev = '<s>';
    const close = () => {
      if (!open) return;
      const confidence = open.conf.reduce((a, b) => a + b, 0) / open.conf.length;
      if (confidence >= threshold)
        spans.push({
          start: open.start,
          end: open.end,
          label: open.label,
          text: text.slice(open.start, open.end),
          confidence,
        });
      open = null;
    };
    for (let i = 0; i < tokens.length; i++) {
      const s = this.scores(this.featureIds(tokens, i, prev), this.denseOf(tokens, i));
      let best = 0;
      for (let k = 1; k < s.length; k++) if (s[k]! > s[best]!) best = k;
      const max = s[best]!;
      let z = 0;
      for (const v of s) z += Math.exp(v - max);
      const conf = 1 / z;
      const tag = this.tags[best]!;
      const tok = tokens[i]!;
      if (tag === 'O') close();
      else {
        const label = tag.slice(2);
        if (tag.startsWith('I-') && open && (open as { label: string }).label === label) {
          open.end = tok.end;
          open.conf.push(conf);
        } else {
          close();
          open = { label, start: tok.start, end: tok.end, conf: [conf] };
        }
      }
      prev = tag;
    }
    close();
    return spans;
  }
}

/** Everything needed to continue training exactly where it stopped. */
export interface TaggerState {
  epoch: number;
  now: number;
  types: string[];
  weights: Float32Array;
  totals: Float32Array;
  stamps: Float32Array;
  dense: Float32Array;
  denseTotals: Float32Array;
  denseStamps: Float32Array;
}

/**
 * Averaged-perceptron training one epoch at a time, with its full state
 * exposed: a run resumed from `snapshot()` after epoch k ends exactly as the
 * uninterrupted run (each epoch's order comes from the seed and the epoch
 * number alone).
 */
export class TaggerTrainer {
  private readonly tags: string[];
  private readonly state: TaggerState;
  private readonly live: LinearTagger;
  private readonly data: { tokens: Token[]; dense: (Float32Array | null)[]; gold: string[] }[];
  private readonly index: Map<string, number>;

  constructor(
    examples: Example[],
    private readonly options: { seed?: number; bucketsLog2?: number; embeddings?: Embeddings; types?: string[] } = {},
    resume?: TaggerState,
  ) {
    const types =
      resume?.types ??
      options.types ??
      [...new Set(examples.flatMap((e) => (e.entities ?? []).map((s) => s.label)))].sort();
    this.tags = ['O', ...types.flatMap((t) => [`B-${t}`, `I-${t}`])];
    const bucketsLog2 = options.bucketsLog2 ?? 18;
    const size = (1 << bucketsLog2) * this.tags.length;
    const denseDim = options.embeddings ? options.embeddings.dim * WINDOW.length : 0;
    const zeros = (n: number) => new Float32Array(n);
    this.state = resume
      ? {
          ...resume,
          weights: resume.weights.slice(),
          totals: resume.totals.slice(),
          stamps: resume.stamps.slice(),
          dense: resume.dense.slice(),
          denseTotals: resume.denseTotals.slice(),
          denseStamps: resume.denseStamps.slice(),
        }
      : {
          epoch: 0,
          now: 1,
          types,
          weights: zeros(size),
          totals: zeros(size),
          stamps: zeros(size),
          dense: zeros(this.tags.length * denseDim),
          denseTotals: zeros(this.tags.length * denseDim),
          denseStamps: zeros(this.tags.length * denseDim),
        };
    if (this.state.weights.length !== size) throw new Error('checkpoint does not match this model size');
    this.live = LinearTagger.over(
      types,
      this.tags,
      bucketsLog2,
      this.state.weights,
      options.embeddings,
      this.state.dense,
    );
    this.index = new Map(this.tags.map((t, i) => [t, i]));
    this.data = examples.map((e) => {
      const tokens = tokenize(e.text ?? '');
      return {
        tokens,
        dense: tokens.map((_, i) => this.live.denseFor(tokens, i)),
        gold: LinearTagger.goldTagsOf(
          tokens,
          (e.entities ?? []).filter((s) => types.includes(s.label)),
        ),
      };
    });
  }

  get epoch(): number {
    return this.state.epoch;
  }

  get size(): number {
    return this.data.length;
  }

  /** Parameters in the hashed feature table alone. */
  get hashedParameterCount(): number {
    return this.state.weights.length;
  }

  /** Trained parameters (hashed table plus dense projection). */
  get parameterCount(): number {
    return this.state.weights.length + this.state.dense.length;
  }

  /** One pass over the examples; returns the number of token errors. Throws when `signal` aborts. */
  runEpoch(hooks: EpochHooks = {}): number {
    return runSteps(this.epochSteps(hooks));
  }

  /** As runEpoch, yielding to the event loop every 100 examples (heartbeats and cancellation stay responsive). */
  runEpochAsync(hooks: EpochHooks = {}): Promise<number> {
    return runStepsAsync(this.epochSteps(hooks));
  }

  private *epochSteps(hooks: EpochHooks): Generator<void, number, void> {
    const st = this.state;
    const t = this.tags.length;
    const denseDim = this.data[0]?.dense[0]?.length ?? 0;
    const epoch = st.epoch + 1;
    const random = seededRandom(((this.options.seed ?? 13) + Math.imul(epoch, 0x9e3779b1)) >>> 0);
    const order = this.data.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const update = (f: number, k: number, delta: number) => {
      const at = f * t + k;
      st.totals[at]! += (st.now - st.stamps[at]!) * st.weights[at]!;
      st.stamps[at] = st.now;
      st.weights[at]! += delta;
    };
    const updateDense = (k: number, x: Float32Array, sign: number) => {
      const base = k * denseDim;
      for (let d = 0; d < denseDim; d++) {
        const at = base + d;
        st.denseTotals[at]! += (st.now - st.denseStamps[at]!) * st.dense[at]!;
        st.denseStamps[at] = st.now;
        st.dense[at]! += sign * x[d]!;
      }
    };
    const scratch = new Float32Array(t);
    let errors = 0;
    let done = 0;
    for (const idx of order) {
      if (hooks.signal?.aborted) throw new Error('training cancelled');
      const { tokens, dense, gold } = this.data[idx]!;
      let prev = '<s>';
      for (let i = 0; i < tokens.length; i++) {
        const features = this.live.featuresFor(tokens, i, prev);
        const s = this.live.scoresFor(features, dense[i]!, scratch);
        let best = 0;
        for (let k = 1; k < t; k++) if (s[k]! > s[best]!) best = k;
        const truth = this.index.get(gold[i]!)!;
        if (best !== truth) {
          errors++;
          for (const f of features) {
            update(f, truth, 1);
            update(f, best, -1);
          }
          const x = dense[i];
          if (x) {
            updateDense(truth, x, 1);
            updateDense(best, x, -1);
          }
        }
        st.now++;
        // Train on gold history, as decoding will see its own (mostly right) history.
        prev = gold[i]!;
      }
      hooks.onExample?.(++done, errors / done);
      if (done % 100 === 0) yield;
    }
    st.epoch = epoch;
    return errors;
  }

  /** A copy of the state, safe to serialise while training goes on. */
  snapshot(): TaggerState {
    const st = this.state;
    return {
      ...st,
      types: [...st.types],
      weights: st.weights.slice(),
      totals: st.totals.slice(),
      stamps: st.stamps.slice(),
      dense: st.dense.slice(),
      denseTotals: st.denseTotals.slice(),
      denseStamps: st.denseStamps.slice(),
    };
  }

  /** The averaged model so far (training may continue afterwards). */
  model(): LinearTagger {
    const st = this.state;
    const avg = (w: Float32Array, totals: Float32Array, stamps: Float32Array) => {
      const out = new Float32Array(w.length);
      for (let at = 0; at < w.length; at++) out[at] = (totals[at]! + (st.now - stamps[at]!) * w[at]!) / st.now;
      return out;
    };
    return LinearTagger.over(
      st.types,
      this.tags,
      this.options.bucketsLog2 ?? 18,
      avg(st.weights, st.totals, st.stamps),
      this.options.embeddings,
      avg(st.dense, st.denseTotals, st.denseStamps),
    );
  }
}
