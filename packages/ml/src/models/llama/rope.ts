import type { LlamaConfig } from './configuration-llama';

/**
 * Rotary position embeddings as `transformers`' modeling_rope_utils.py computes them, in float32 as torch does:
 * the inverse frequencies of the `default`, `linear`, `dynamic` (NTK) and `llama3` kinds, and
 * `apply_rotary_pos_emb` with `rotate_half` (the first and second halves of each head are the pairs).
 */
const f = Math.fround;

/** The rotated dimensions of a head (head_dim × partial_rotary_factor). */
export function ropeDim(config: LlamaConfig): number {
  return Math.trunc(config.head_dim * (config.rope_parameters.partial_rotary_factor ?? 1));
}

function baseInvFreq(base: number, dim: number): Float32Array {
  const out = new Float32Array(dim / 2);
  // 1 / base ** (arange(0, dim, 2) / dim), each step rounded to float32 as the torch expression is.
  for (let i = 0; i < out.length; i++) out[i] = f(1 / f(base ** f((2 * i) / dim)));
  return out;
}

/**
 * The inverse frequencies for a forward pass whose furthest position is `seqLen - 1` (only `dynamic` depends on
 * it: beyond max_position_embeddings its base grows with the sequence, as `dynamic_rope_update` recomputes it).
 */
export function ropeInvFreq(config: LlamaConfig, seqLen: number): Float32Array {
  const p = config.rope_parameters;
  const dim = ropeDim(config);
  switch (p.rope_type) {
    case 'default':
      return baseInvFreq(p.rope_theta, dim);
    case 'linear':
      return baseInvFreq(p.rope_theta, dim).map((v) => v / p.factor!);
    case 'dynamic': {
      const max = config.max_position_embeddings;
      if (seqLen <= max) return baseInvFreq(p.rope_theta, dim);
      const factor = p.factor!;
      const base = p.rope_theta * ((factor * seqLen) / max - (factor - 1)) ** (dim / (dim - 2));
      return baseInvFreq(base, dim);
    }
    case 'llama3': {
      const inv = baseInvFreq(p.rope_theta, dim);
      const factor = p.factor!;
      const low = p.low_freq_factor!;
      const high = p.high_freq_factor!;
      const old = p.original_max_position_embeddings!;
      const lowWavelen = old / low;
      const highWavelen = old / high;
      return inv.map((v) => {
        const wavelen = f((2 * Math.PI) / v);
        if (wavelen < highWavelen) return v;
        if (wavelen > lowWavelen) return f(v / factor);
        const smooth = f((f(old / wavelen) - low) / (high - low));
        return f(f(f(f(1 - smooth) * v) / factor) + f(smooth * v));
      });
    }
  }
}

/** cos and sin, [positions.length, dim/2] each (the two halves of HF's `emb` are equal). */
export function ropeTables(invFreq: Float32Array, positions: Int32Array): { cos: Float32Array; sin: Float32Array } {
  const half = invFreq.length;
  const cos = new Float32Array(positions.length * half);
  const sin = new Float32Array(positions.length * half);
  for (let t = 0; t < positions.length; t++)
    for (let i = 0; i < half; i++) {
      const a = f(positions[t]! * invFreq[i]!);
      cos[t * half + i] = Math.cos(a);
      sin[t * half + i] = Math.sin(a);
    }
  return { cos, sin };
}

/**
 * Rotates `heads` heads of `headDim` values in each of `rows` rows of `x` (row width `heads·headDim`) in place:
 * x·cos + rotate_half(x)·sin over the first `2·half` dims of each head.
 */
export function applyRope(
  x: Float32Array,
  rows: number,
  heads: number,
  headDim: number,
  cos: Float32Array,
  sin: Float32Array,
  half: number,
): void {
  for (let t = 0; t < rows; t++) {
    const to = t * half;
    for (let h = 0; h < heads; h++) {
      const o = (t * heads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const a = x[o + i]!;
        const b = x[o + i + half]!;
        const c = cos[to + i]!;
        const s = sin[to + i]!;
        x[o + i] = a * c - b * s;
        x[o + i + half] = b * c + a * s;
      }
    }
  }
}
