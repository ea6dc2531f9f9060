import { CheckpointError, type NamedTensor } from '../../checkpoints/safetensors';
import { matmulABtInto, matmulInto } from '../../nn/kernels';
import { Tensor } from '../../nn/tensor';
import type { LlamaConfig } from './configuration-llama';
import { applyRope, ropeDim, ropeInvFreq, ropeTables } from './rope';

/**
 * LlamaForCausalLM as `transformers` defines it (modeling_llama.py), and Qwen2ForCausalLM (modeling_qwen2.py: the
 * same graph with q/k/v biases and optional sliding-window layers): token embeddings, pre-norm decoder layers
 * (RMSNorm, grouped-query causal self-attention with rotary positions, residual; RMSNorm, SwiGLU MLP, residual),
 * a final RMSNorm and the lm_head (the embedding matrix when `tie_word_embeddings`). Linear weights are kept as
 * the checkpoint stores them, [out, in], and applied as x·Wᵀ + b; names are the checkpoint's
 * (`model.layers.0.self_attn.q_proj.weight`). This is the inference path, float32 on the package's kernels
 * (matmuls through onnxruntime above a small size), with a {@link KVCache} for incremental decoding.
 */
export interface LlamaLinear {
  weight: Tensor;
  bias?: Tensor;
}

export interface LlamaLayer {
  q_proj: LlamaLinear;
  k_proj: LlamaLinear;
  v_proj: LlamaLinear;
  o_proj: LlamaLinear;
  gate_proj: LlamaLinear;
  up_proj: LlamaLinear;
  down_proj: LlamaLinear;
  input_layernorm: Tensor;
  post_attention_layernorm: Tensor;
}

export interface LlamaWeights {
  embed_tokens: Tensor;
  layers: LlamaLayer[];
  norm: Tensor;
  /** The same Tensor as embed_tokens when the embeddings are tied. */
  lm_head: Tensor;
}

const ATTENTION = ['q_proj', 'k_proj', 'v_proj', 'o_proj'] as const;
const MLP = ['gate_proj', 'up_proj', 'down_proj'] as const;

/**
 * Keys and values of every layer for the positions seen so far, head-major per layer
 * ([kv_heads, capacity, head_dim]), so each key/value head's positions are one contiguous block.
 */
export class KVCache {
  length = 0;
  capacity = 0;
  keys: Float32Array[] = [];
  values: Float32Array[] = [];

  constructor(
    readonly layers: number,
    readonly heads: number,
    readonly headDim: number,
    readonly maxLength: number,
  ) {}

  /** Makes room for `n` positions in all. */
  reserve(n: number): void {
    if (n <= this.capacity) return;
    const cap = Math.min(this.maxLength, Math.max(n, this.capacity * 2, 16));
    const hd = this.headDim;
    const grow = (old: Float32Array | undefined): Float32Array => {
      const next = new Float32Array(this.heads * cap * hd);
      if (old)
        for (let g = 0; g < this.heads; g++)
          next.set(old.subarray(g * this.capacity * hd, (g * this.capacity + this.length) * hd), g * cap * hd);
      return next;
    };
    for (let l = 0; l < this.layers; l++) {
      this.keys[l] = grow(this.keys[l]);
      this.values[l] = grow(this.values[l]);
    }
    this.capacity = cap;
  }

  /** Writes T new rows of keys and values ([T, kv_heads·head_dim]) of one layer after the cached positions. */
  append(layer: number, k: Float32Array, v: Float32Array, T: number): void {
    const hd = this.headDim;
    const K = this.keys[layer]!;
    const V = this.values[layer]!;
    for (let t = 0; t < T; t++)
      for (let g = 0; g < this.heads; g++) {
        const from = (t * this.heads + g) * hd;
        const to = (g * this.capacity + this.length + t) * hd;
        K.set(k.subarray(from, from + hd), to);
        V.set(v.subarray(from, from + hd), to);
      }
  }

  /** Forgets positions from `n` on (a shared prefix stays). */
  truncate(n: number): void {
    this.length = Math.min(this.length, n);
  }
}

export interface LlamaForwardOptions {
  /** Positions already in the cache come first; the new ones are appended to it. */
  cache?: KVCache;
  /** Logits of every position (default) or only of the last one (prefill before generation). */
  logits?: 'all' | 'last';
}

export class LlamaForCausalLM {
  constructor(
    readonly config: LlamaConfig,
    readonly weights: LlamaWeights,
  ) {}

  /**
   * Builds the model from a checkpoint's tensors. A missing tensor or a wrong shape is an error naming the file,
   * the tensor and the shape expected; lm_head.weight may be absent only when the embeddings are tied.
   */
  static fromTensors(
    config: LlamaConfig,
    tensors: ReadonlyMap<string, NamedTensor>,
    file = 'model.safetensors',
  ): LlamaForCausalLM {
    const c = config;
    const get = (name: string, shape: number[]): Tensor | undefined => {
      const t = tensors.get(name);
      if (!t) return undefined;
      if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i]))
        throw new CheckpointError(
          `${file}: tensor ${name} has shape [${t.shape.join(', ')}], expected [${shape.join(', ')}] from config.json`,
        );
      return new Tensor(t.data, shape);
    };
    const req = (name: string, shape: number[]): Tensor => {
      const t = get(name, shape);
      if (!t) throw new CheckpointError(`${file}: tensor ${name} is missing (expected shape [${shape.join(', ')}])`);
      return t;
    };
    const qwen = c.model_type === 'qwen2';
    const lin = (name: string, out: number, inp: number, bias: boolean): LlamaLinear => ({
      weight: req(`${name}.weight`, [out, inp]),
      ...(bias ? { bias: req(`${name}.bias`, [out]) } : {}),
    });
    const H = c.hidden_size;
    const q = c.num_attention_heads * c.head_dim;
    const kv = c.num_key_value_heads * c.head_dim;
    const I = c.intermediate_size;
    const layers: LlamaLayer[] = [];
    for (let i = 0; i < c.num_hidden_layers; i++) {
      const p = `model.layers.${i}`;
      const a = `${p}.self_attn`;
      layers.push({
        q_proj: lin(`${a}.q_proj`, q, H, qwen || c.attention_bias),
        k_proj: lin(`${a}.k_proj`, kv, H, qwen || c.attention_bias),
        v_proj: lin(`${a}.v_proj`, kv, H, qwen || c.attention_bias),
        o_proj: lin(`${a}.o_proj`, H, q, !qwen && c.attention_bias),
        gate_proj: lin(`${p}.mlp.gate_proj`, I, H, c.mlp_bias),
        up_proj: lin(`${p}.mlp.up_proj`, I, H, c.mlp_bias),
        down_proj: lin(`${p}.mlp.down_proj`, H, I, c.mlp_bias),
        input_layernorm: req(`${p}.input_layernorm.weight`, [H]),
        post_attention_layernorm: req(`${p}.post_attention_layernorm.weight`, [H]),
      });
    }
    const embed = req('model.embed_tokens.weight', [c.vocab_size, H]);
    const head = c.tie_word_embeddings ? embed : get('lm_head.weight', [c.vocab_size, H]);
    if (!head)
      throw new CheckpointError(
        `${file}: tensor lm_head.weight is missing (expected shape [${c.vocab_size}, ${H}]) and config.json does not tie the embeddings`,
      );
    return new LlamaForCausalLM(config, {
      embed_tokens: embed,
      layers,
      norm: req('model.norm.weight', [H]),
      lm_head: head,
    });
  }

  /** Every weight by its checkpoint name (lm_head.weight only when it is not tied). */
  namedParameters(): Map<string, Tensor> {
    const w = this.weights;
    const out = new Map<string, Tensor>([['model.embed_tokens.weight', w.embed_tokens]]);
    w.layers.forEach((l, i) => {
      const p = `model.layers.${i}`;
      for (const [group, names] of [
        ['self_attn', ATTENTION],
        ['mlp', MLP],
      ] as const)
        for (const n of names) {
          out.set(`${p}.${group}.${n}.weight`, l[n].weight);
          if (l[n].bias) out.set(`${p}.${group}.${n}.bias`, l[n].bias);
        }
      out.set(`${p}.input_layernorm.weight`, l.input_layernorm);
      out.set(`${p}.post_attention_layernorm.weight`, l.post_attention_layernorm);
    });
    out.set('model.norm.weight', w.norm);
    if (w.lm_head !== w.embed_tokens) out.set('lm_head.weight', w.lm_head);
    return out;
  }

  parameterCount(): number {
    let n = 0;
    for (const t of this.namedParameters().values()) n += t.data.length;
    return n;
  }

  /** The context length: max_position_embeddings (beyond it only with `dynamic` rotary scaling). */
  get contextLength(): number {
    return this.config.rope_parameters.rope_type === 'dynamic' ? Infinity : this.config.max_position_embeddings;
  }

  newCache(): KVCache {
    const c = this.config;
    return new KVCache(c.num_hidden_layers, c.num_key_value_heads, c.head_dim, this.contextLength);
  }

  /**
   * Logits for `ids` after the positions already in `cache` (none without one): [ids.length, vocab_size], or
   * [1, vocab_size] with `logits: 'last'`. The new positions' keys and values are appended to the cache.
   */
  forward(ids: Int32Array, options: LlamaForwardOptions = {}): Float32Array {
    const c = this.config;
    const T = ids.length;
    if (T === 0) throw new Error('LlamaForCausalLM: no input ids');
    const cache = options.cache ?? this.newCache();
    const past = cache.length;
    if (past + T > this.contextLength)
      throw new Error(
        `LlamaForCausalLM: ${past + T} positions exceed the context of ${c.max_position_embeddings} (max_position_embeddings)`,
      );
    const H = c.hidden_size;
    const V = c.vocab_size;
    const x = new Float32Array(T * H);
    const E = this.weights.embed_tokens.data;
    for (let t = 0; t < T; t++) {
      const id = ids[t]!;
      if (!(id >= 0 && id < V)) throw new Error(`LlamaForCausalLM: token id ${id} is outside the vocabulary of ${V}`);
      x.set(E.subarray(id * H, (id + 1) * H), t * H);
    }
    const positions = Int32Array.from({ length: T }, (_, t) => past + t);
    const rope = ropeTables(ropeInvFreq(c, past + T), positions);
    cache.reserve(past + T);
    this.weights.layers.forEach((layer, i) => this.layer(x, T, layer, i, cache, rope));
    cache.length = past + T;
    const rows = options.logits === 'last' ? 1 : T;
    const h = rmsNorm(x.subarray((T - rows) * H), rows, H, this.weights.norm.data, c.rms_norm_eps);
    const logits = new Float32Array(rows * V);
    matmulABtInto(logits, h, this.weights.lm_head.data, rows, H, V);
    return logits;
  }

  private layer(
    x: Float32Array,
    T: number,
    l: LlamaLayer,
    index: number,
    cache: KVCache,
    rope: { cos: Float32Array; sin: Float32Array },
  ): void {
    const c = this.config;
    const H = c.hidden_size;
    const hd = c.head_dim;
    const half = ropeDim(c) / 2;
    const h = rmsNorm(x, T, H, l.input_layernorm.data, c.rms_norm_eps);
    const q = linear(h, T, l.q_proj);
    const k = linear(h, T, l.k_proj);
    const v = linear(h, T, l.v_proj);
    applyRope(q, T, c.num_attention_heads, hd, rope.cos, rope.sin, half);
    applyRope(k, T, c.num_key_value_heads, hd, rope.cos, rope.sin, half);
    cache.append(index, k, v, T);
    const window = c.layer_types[index] === 'sliding_attention' ? c.sliding_window : null;
    const ctx = attention(q, T, cache, index, c, window);
    addInto(x, linear(ctx, T, l.o_proj));
    const h2 = rmsNorm(x, T, H, l.post_attention_layernorm.data, c.rms_norm_eps);
    const g = linear(h2, T, l.gate_proj);
    const u = linear(h2, T, l.up_proj);
    for (let i = 0; i < g.length; i++) {
      const a = g[i]!;
      g[i] = (a / (1 + Math.exp(-a))) * u[i]!;
    }
    addInto(x, linear(g, T, l.down_proj));
  }

  /** Greedy decoding with the cache: the `maxNewTokens` ids after `prompt` (stops early at one of `stop`). */
  greedy(prompt: Int32Array, maxNewTokens: number, stop: readonly number[] = []): number[] {
    const cache = this.newCache();
    const out: number[] = [];
    let logits = this.forward(prompt, { cache, logits: 'last' });
    for (let n = 0; n < maxNewTokens; n++) {
      const next = argmax(logits);
      out.push(next);
      if (stop.includes(next) || cache.length >= this.contextLength) break;
      logits = this.forward(Int32Array.of(next), { cache });
    }
    return out;
  }
}

export function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[best]!) best = i;
  return best;
}

function addInto(x: Float32Array, y: Float32Array): void {
  for (let i = 0; i < x.length; i++) x[i]! += y[i]!;
}

/** y[T, out] = x[T, in]·Wᵀ + b. */
function linear(x: Float32Array, T: number, l: LlamaLinear): Float32Array {
  const [out, inp] = l.weight.shape as [number, number];
  const y = new Float32Array(T * out);
  matmulABtInto(y, x, l.weight.data, T, inp, out);
  if (l.bias) {
    const b = l.bias.data;
    for (let t = 0; t < T; t++) for (let j = 0; j < out; j++) y[t * out + j]! += b[j]!;
  }
  return y;
}

/** LlamaRMSNorm: w · x / sqrt(mean(x²) + eps) per row. */
export function rmsNorm(x: Float32Array, rows: number, n: number, w: Float32Array, eps: number): Float32Array {
  const y = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    const o = r * n;
    let ss = 0;
    for (let i = 0; i < n; i++) ss += x[o + i]! * x[o + i]!;
    const inv = Math.fround(1 / Math.sqrt(Math.fround(ss / n + eps)));
    for (let i = 0; i < n; i++) y[o + i] = w[i]! * Math.fround(x[o + i]! * inv);
  }
  return y;
}

/**
 * Grouped-query causal attention of T new queries against every cached position: the query heads sharing a
 * key/value head are stacked into one [groups·T, L] score matrix. Query t (position past + t) sees keys
 * [lo, past + t], lo = 0, or within the sliding window.
 */
function attention(
  q: Float32Array,
  T: number,
  cache: KVCache,
  index: number,
  c: LlamaConfig,
  window: number | null,
): Float32Array {
  const hd = c.head_dim;
  const nh = c.num_attention_heads;
  const nkv = c.num_key_value_heads;
  const groups = nh / nkv;
  const past = cache.length;
  const L = past + T;
  const cap = cache.capacity;
  const scaling = hd ** -0.5;
  const K = cache.keys[index]!;
  const Vc = cache.values[index]!;
  const out = new Float32Array(T * nh * hd);
  const Q = new Float32Array(groups * T * hd);
  const S = new Float32Array(groups * T * L);
  const O = new Float32Array(groups * T * hd);
  for (let g = 0; g < nkv; g++) {
    const Kh = K.subarray(g * cap * hd, (g * cap + L) * hd);
    const Vh = Vc.subarray(g * cap * hd, (g * cap + L) * hd);
    for (let j = 0; j < groups; j++)
      for (let t = 0; t < T; t++) {
        const h = g * groups + j;
        Q.set(q.subarray((t * nh + h) * hd, (t * nh + h + 1) * hd), (j * T + t) * hd);
      }
    matmulABtInto(S, Q, Kh, groups * T, hd, L);
    for (let r = 0; r < groups * T; r++) {
      const t = r % T;
      const hi = past + t + 1;
      const lo = window === null ? 0 : Math.max(0, hi - window);
      const o = r * L;
      let max = -Infinity;
      for (let s = lo; s < hi; s++) {
        const v = S[o + s]! * scaling;
        S[o + s] = v;
        if (v > max) max = v;
      }
      let sum = 0;
      for (let s = lo; s < hi; s++) {
        const e = Math.exp(S[o + s]! - max);
        S[o + s] = e;
        sum += e;
      }
      for (let s = lo; s < hi; s++) S[o + s]! /= sum;
      S.fill(0, o, o + lo);
      S.fill(0, o + hi, o + L);
    }
    matmulInto(O, S, Vh, groups * T, L, hd);
    for (let j = 0; j < groups; j++)
      for (let t = 0; t < T; t++) {
        const h = g * groups + j;
        out.set(O.subarray((j * T + t) * hd, (j * T + t + 1) * hd), (t * nh + h) * hd);
      }
  }
  return out;
}
