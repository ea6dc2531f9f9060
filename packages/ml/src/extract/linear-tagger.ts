import type { EntitySpan, Example } from '../data';
import { seededRandom } from '../classify/ngram-classifier';
import { fnv1a, tokenize, type Token } from '../text';
import type { Embeddings } from '../assets';

/** Dense inputs per token: GloVe of the word, the previous and the next word. */
const WINDOW = [0, -1, 1];

function shape(w: string): string {
  return w.replace(/\p{Lu}+/gu, 'X').replace(/\p{Ll}+/gu, 'x').replace(/\p{N}+/gu, 'd');
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

  private scores(features: number[], dense: Float32Array | null, into: Float32Array = new Float32Array(this.tags.length)): Float32Array {
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

  static train(examples: Example[], options: { epochs?: number; seed?: number; bucketsLog2?: number; embeddings?: Embeddings; onEpoch?: (epoch: number, errors: number) => void } = {}): LinearTagger {
    const types = [...new Set(examples.flatMap((e) => (e.entities ?? []).map((s) => s.label)))].sort();
    const tags = ['O', ...types.flatMap((t) => [`B-${t}`, `I-${t}`])];
    const bucketsLog2 = options.bucketsLog2 ?? 18;
    const size = (1 << bucketsLog2) * tags.length;
    const denseDim = options.embeddings ? options.embeddings.dim * WINDOW.length : 0;
    const model = new LinearTagger(types, tags, bucketsLog2, new Float32Array(size), options.embeddings, new Float32Array(tags.length * denseDim));
    const denseTotals = new Float32Array(model.dense.length);
    const denseStamps = new Float32Array(model.dense.length);
    // Averaged perceptron with lazy averaging: totals accumulate weight × time held.
    const totals = new Float32Array(size);
    const stamps = new Float32Array(size);
    let now = 1;
    const index = new Map(tags.map((t, i) => [t, i]));
    const data = examples.map((e) => {
      const tokens = tokenize(e.text ?? '');
      return { tokens, dense: tokens.map((_, i) => model.denseOf(tokens, i)), gold: LinearTagger.goldTags(tokens, e.entities ?? []) };
    });
    const updateDense = (k: number, x: Float32Array, sign: number) => {
      const base = k * denseDim;
      for (let d = 0; d < denseDim; d++) {
        const at = base + d;
        denseTotals[at]! += (now - denseStamps[at]!) * model.dense[at]!;
        denseStamps[at] = now;
        model.dense[at]! += sign * x[d]!;
      }
    };
    const random = seededRandom(options.seed ?? 13);
    const order = data.map((_, i) => i);
    const scratch = new Float32Array(tags.length);
    const update = (f: number, k: number, delta: number) => {
      const at = f * tags.length + k;
      totals[at]! += (now - stamps[at]!) * model.weights[at]!;
      stamps[at] = now;
      model.weights[at]! += delta;
    };
    for (let epoch = 1; epoch <= (options.epochs ?? 8); epoch++) {
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      let errors = 0;
      for (const idx of order) {
        const { tokens, dense, gold } = data[idx]!;
        let prev = '<s>';
        for (let i = 0; i < tokens.length; i++) {
          const features = model.featureIds(tokens, i, prev);
          const s = model.scores(features, dense[i]!, scratch);
          let best = 0;
          for (let k = 1; k < tags.length; k++) if (s[k]! > s[best]!) best = k;
          const truth = index.get(gold[i]!)!;
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
          now++;
          // Train on gold history, as decoding will see its own (mostly right) history.
          prev = gold[i]!;
        }
      }
      options.onEpoch?.(epoch, errors);
    }
    for (let at = 0; at < size; at++) {
      totals[at]! += (now - stamps[at]!) * model.weights[at]!;
      model.weights[at] = totals[at]! / now;
    }
    for (let at = 0; at < model.dense.length; at++) {
      denseTotals[at]! += (now - denseStamps[at]!) * model.dense[at]!;
      model.dense[at] = denseTotals[at]! / now;
    }
    return model;
  }

  /** Serialisable form: weights as base64 float32. The embeddings are the shipped asset, referenced by name. */
  toJSON(): object {
    const b64 = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
    return { format: 'whetstone-linear-tagger/1', entityTypes: this.entityTypes, tags: this.tags, bucketsLog2: this.bucketsLog2, embeddings: this.embeddings ? 'glove-40k' : null, weights: b64(this.weights), dense: b64(this.dense) };
  }

  static fromJSON(json: { format: string; entityTypes: string[]; tags: string[]; bucketsLog2: number; embeddings: string | null; weights: string; dense: string }, embeddings?: Embeddings): LinearTagger {
    if (json.format !== 'whetstone-linear-tagger/1') throw new Error(`unknown model format ${json.format}`);
    if (json.embeddings && !embeddings) throw new Error(`this model needs the ${json.embeddings} embeddings`);
    const f32 = (b64: string) => {
      const buf = Buffer.from(b64, 'base64');
      return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    };
    return new LinearTagger(json.entityTypes, json.tags, json.bucketsLog2, f32(json.weights), json.embeddings ? embeddings : undefined, f32(json.dense));
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
      if (confidence >= threshold) spans.push({ start: open.start, end: open.end, label: open.label, text: text.slice(open.start, open.end), confidence });
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
