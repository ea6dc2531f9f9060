import { bmm, fusedKernels, matmulABtInto, matmulAtBInto, matmulInto, softmaxInPlace } from './kernels';
import { opBuffer, Tensor } from './tensor';
import type { Rng } from './rng';

function result(
  data: Float32Array,
  shape: readonly number[],
  parents: Tensor[],
  backward: (out: Tensor) => void,
): Tensor {
  if (!parents.some((p) => p.requiresGrad)) return new Tensor(data, shape);
  const out: Tensor = new Tensor(data, shape, true, parents, () => backward(out));
  return out;
}

/** Adds a fresh gradient (one nobody else holds) into `t`'s buffer, or adopts it as the buffer. */
function accumulate(t: Tensor, g: Float32Array): void {
  if (!t.grad) {
    t.grad = g;
    return;
  }
  const tg = t.grad;
  for (let i = 0; i < tg.length; i++) tg[i]! += g[i]!;
}

function need2d(t: Tensor, name: string): [number, number] {
  if (t.shape.length !== 2) throw new Error(`${name} expects a 2-D tensor, got [${t.shape.join(',')}]`);
  return [t.shape[0]!, t.shape[1]!];
}

/** a[M,K] · b[K,N] */
export function matmul(a: Tensor, b: Tensor): Tensor {
  const [M, K] = need2d(a, 'matmul');
  const [K2, N] = need2d(b, 'matmul');
  if (K !== K2) throw new Error(`matmul: inner dimensions ${K} and ${K2} differ`);
  const y = opBuffer(M * N);
  matmulInto(y, a.data, b.data, M, K, N);
  return result(y, [M, N], [a, b], (out) => {
    const g = out.grad!;
    if (a.requiresGrad) matmulABtInto(a.gradBuffer(), g, b.data, M, N, K, true);
    if (b.requiresGrad) matmulAtBInto(b.gradBuffer(), a.data, g, M, K, N, true);
  });
}

/** Elementwise a + b (same shape). */
export function add(a: Tensor, b: Tensor): Tensor {
  if (a.data.length !== b.data.length) throw new Error('add: shapes differ');
  const y = opBuffer(a.data.length);
  for (let i = 0; i < y.length; i++) y[i] = a.data[i]! + b.data[i]!;
  return result(y, a.shape, [a, b], (out) => {
    const g = out.grad!;
    for (const p of [a, b]) {
      if (!p.requiresGrad) continue;
      const pg = p.gradBuffer();
      for (let i = 0; i < g.length; i++) pg[i]! += g[i]!;
    }
  });
}

/** x[R,D] + p[T,D] with p repeated every T rows (R a multiple of T): bias when T = 1, positions otherwise. */
export function addRows(x: Tensor, p: Tensor): Tensor {
  const [R, D] = need2d(x, 'addRows');
  const T = p.shape.length === 1 ? 1 : p.shape[0]!;
  if (p.cols !== D || R % T !== 0)
    throw new Error(`addRows: [${p.shape.join(',')}] does not broadcast over [${R},${D}]`);
  const k = T === 1 ? fusedKernels('addBias', R * D) : null;
  if (k) {
    return result(k.addBias(x.data, p.data, R, D), x.shape, [x, p], (out) => {
      const g = out.grad!;
      if (x.requiresGrad) {
        const xg = x.gradBuffer();
        for (let i = 0; i < g.length; i++) xg[i]! += g[i]!;
      }
      if (p.requiresGrad) accumulate(p, k.biasGrad(g, R, D));
    });
  }
  const y = opBuffer(R * D);
  for (let r = 0; r < R; r++) {
    const po = (r % T) * D;
    for (let d = 0; d < D; d++) y[r * D + d] = x.data[r * D + d]! + p.data[po + d]!;
  }
  return result(y, x.shape, [x, p], (out) => {
    const g = out.grad!;
    if (x.requiresGrad) {
      const xg = x.gradBuffer();
      for (let i = 0; i < g.length; i++) xg[i]! += g[i]!;
    }
    if (p.requiresGrad) {
      const pg = p.gradBuffer();
      for (let r = 0; r < R; r++) {
        const po = (r % T) * D;
        for (let d = 0; d < D; d++) pg[po + d]! += g[r * D + d]!;
      }
    }
  });
}

/** Bias broadcast over rows: x[M,N] + b[N]. */
export function addBias(x: Tensor, b: Tensor): Tensor {
  return addRows(x, b);
}

/** Fused LayerNorm over the last dimension with gain and bias. */
export function layerNorm(x: Tensor, gain: Tensor, bias: Tensor, eps = 1e-5): Tensor {
  const [M, N] = need2d(x, 'layerNorm');
  const k = fusedKernels('layerNorm', M * N);
  if (k) {
    const { y, mean, rstd } = k.layerNorm(x.data, gain.data, bias.data, M, N, eps);
    return result(y, x.shape, [x, gain, bias], (out) => {
      const d = k.layerNormBackward(
        x.data,
        gain.data,
        out.grad!,
        mean,
        rstd,
        M,
        N,
        x.requiresGrad,
        gain.requiresGrad || bias.requiresGrad,
      );
      if (x.requiresGrad) accumulate(x, d.dx!);
      if (gain.requiresGrad) accumulate(gain, d.dgain!);
      if (bias.requiresGrad) accumulate(bias, d.dbias!);
    });
  }
  const y = opBuffer(M * N);
  const xhat = opBuffer(M * N);
  const rstd = opBuffer(M);
  for (let i = 0; i < M; i++) {
    const o = i * N;
    let mean = 0;
    for (let j = 0; j < N; j++) mean += x.data[o + j]!;
    mean /= N;
    let v = 0;
    for (let j = 0; j < N; j++) {
      const d = x.data[o + j]! - mean;
      v += d * d;
    }
    const r = 1 / Math.sqrt(v / N + eps);
    rstd[i] = r;
    for (let j = 0; j < N; j++) {
      const h = (x.data[o + j]! - mean) * r;
      xhat[o + j] = h;
      y[o + j] = h * gain.data[j]! + bias.data[j]!;
    }
  }
  return result(y, x.shape, [x, gain, bias], (out) => {
    const g = out.grad!;
    const gg = gain.requiresGrad ? gain.gradBuffer() : null;
    const bg = bias.requiresGrad ? bias.gradBuffer() : null;
    const xg = x.requiresGrad ? x.gradBuffer() : null;
    for (let i = 0; i < M; i++) {
      const o = i * N;
      let sumD = 0;
      let sumDX = 0;
      for (let j = 0; j < N; j++) {
        const dh = g[o + j]! * gain.data[j]!;
        sumD += dh;
        sumDX += dh * xhat[o + j]!;
        if (gg) gg[j]! += g[o + j]! * xhat[o + j]!;
        if (bg) bg[j]! += g[o + j]!;
      }
      if (!xg) continue;
      const r = rstd[i]!;
      for (let j = 0; j < N; j++) {
        const dh = g[o + j]! * gain.data[j]!;
        xg[o + j]! += r * (dh - sumD / N - xhat[o + j]! * (sumDX / N));
      }
    }
  });
}

const GELU_C = Math.sqrt(2 / Math.PI);

/** GELU, tanh approximation, fused forward and derivative. */
export function gelu(x: Tensor): Tensor {
  const n = x.data.length;
  const k = fusedKernels('gelu', n);
  let y: Float32Array;
  let dydx: Float32Array | null | undefined;
  if (k) ({ y, d: dydx } = k.gelu(x.data, x.requiresGrad));
  else {
    y = opBuffer(n);
    dydx = x.requiresGrad ? opBuffer(n) : null;
    for (let i = 0; i < n; i++) {
      const v = x.data[i]!;
      const t = Math.tanh(GELU_C * (v + 0.044715 * v * v * v));
      y[i] = 0.5 * v * (1 + t);
      if (dydx) dydx[i] = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * v * v);
    }
  }
  // The backward is one multiply-add per element: memory-bound, so it stays a loop on either backend.
  return result(y, x.shape, [x], (out) => {
    const g = out.grad!;
    const xg = x.gradBuffer();
    for (let i = 0; i < n; i++) xg[i]! += g[i]! * dydx![i]!;
  });
}

/** Rows of `table[V,D]` selected by `ids`: [ids.length, D]. */
export function embedding(table: Tensor, ids: Int32Array): Tensor {
  const [V, D] = need2d(table, 'embedding');
  const y = opBuffer(ids.length * D);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id < 0 || id >= V) throw new Error(`embedding: id ${id} outside [0, ${V})`);
    y.set(table.data.subarray(id * D, id * D + D), i * D);
  }
  return result(y, [ids.length, D], [table], (out) => {
    const g = out.grad!;
    const tg = table.gradBuffer();
    for (let i = 0; i < ids.length; i++) {
      const o = ids[i]! * D;
      for (let d = 0; d < D; d++) tg[o + d]! += g[i * D + d]!;
    }
  });
}

/**
 * Fused softmax + cross-entropy: the weighted mean of -log p(target) over rows
 * (a weight of 0 masks a row out). Returns a scalar tensor.
 */
export function crossEntropy(logits: Tensor, targets: Int32Array, weights?: Float32Array): Tensor {
  const [M, V] = need2d(logits, 'crossEntropy');
  if (targets.length !== M) throw new Error('crossEntropy: one target per row');
  const probs = opBuffer(logits.data.length);
  probs.set(logits.data);
  let total = 0;
  let wsum = 0;
  for (let i = 0; i < M; i++) {
    const w = weights ? weights[i]! : 1;
    softmaxInPlace(probs, i * V, V);
    if (w === 0) continue;
    total += -w * Math.log(Math.max(probs[i * V + targets[i]!]!, 1e-30));
    wsum += w;
  }
  const norm = wsum > 0 ? 1 / wsum : 0;
  return result(Float32Array.of(total * norm), [1], [logits], (out) => {
    const g = out.grad![0]! * norm;
    const lg = logits.gradBuffer();
    for (let i = 0; i < M; i++) {
      const w = weights ? weights[i]! : 1;
      if (w === 0) continue;
      const o = i * V;
      for (let v = 0; v < V; v++) lg[o + v]! += g * w * probs[o + v]!;
      lg[o + targets[i]!]! -= g * w;
    }
  });
}

/** Σ x·w: reduces any tensor to a scalar with fixed weights (gradient checks, weighted losses). */
export function weightedSum(x: Tensor, w: Float32Array): Tensor {
  let s = 0;
  for (let i = 0; i < x.data.length; i++) s += x.data[i]! * w[i]!;
  return result(Float32Array.of(s), [1], [x], (out) => {
    const g = out.grad![0]!;
    const xg = x.gradBuffer();
    for (let i = 0; i < w.length; i++) xg[i]! += g * w[i]!;
  });
}

/**
 * Fused causal multi-head self-attention. `qkv` is [B·T, 3D] (queries, keys,
 * values side by side); returns [B·T, D].
 */
export function causalSelfAttention(qkv: Tensor, batch: number, time: number, heads: number): Tensor {
  return maskedSelfAttention(qkv, batch, time, heads, (_b, t) => t + 1);
}

/**
 * Bidirectional multi-head self-attention over padded sequences: a query of
 * sequence b sees the keys before `lengths[b]` (the encoder's path).
 */
export function selfAttention(qkv: Tensor, batch: number, time: number, heads: number, lengths: Int32Array): Tensor {
  return maskedSelfAttention(qkv, batch, time, heads, (b) => Math.max(1, lengths[b]!));
}

/**
 * Multi-head self-attention where query t of sequence b sees keys
 * [0, visible(b, t)). The four products run as batched matmuls over the B·H
 * heads (one ORT call each when available); masking, softmax and its gradient
 * are fused loops.
 */
function maskedSelfAttention(
  qkv: Tensor,
  batch: number,
  time: number,
  heads: number,
  visible: (b: number, t: number) => number,
): Tensor {
  const [R, C] = need2d(qkv, 'selfAttention');
  const D = C / 3;
  if (R !== batch * time || D % heads !== 0) throw new Error('selfAttention: bad shapes');
  const hd = D / heads;
  const BH = batch * heads;
  const scale = 1 / Math.sqrt(hd);
  // [B·T, 3D] → three [B·H, T, hd] blocks.
  const split = (src: Float32Array, col: number, width: number): Float32Array => {
    const out = opBuffer(BH * time * hd);
    for (let b = 0; b < batch; b++)
      for (let t = 0; t < time; t++)
        for (let h = 0; h < heads; h++)
          out.set(
            src.subarray((b * time + t) * width + col + h * hd, (b * time + t) * width + col + (h + 1) * hd),
            ((b * heads + h) * time + t) * hd,
          );
    return out;
  };
  const merge = (src: Float32Array, dst: Float32Array, col: number, width: number): void => {
    for (let b = 0; b < batch; b++)
      for (let t = 0; t < time; t++)
        for (let h = 0; h < heads; h++) {
          const so = ((b * heads + h) * time + t) * hd;
          const dO = (b * time + t) * width + col + h * hd;
          for (let d = 0; d < hd; d++) dst[dO + d]! += src[so + d]!;
        }
  };
  const limit = new Int32Array(BH * time);
  for (let r = 0; r < BH * time; r++) limit[r] = Math.min(time, visible(Math.floor(r / (heads * time)), r % time));
  const Q = split(qkv.data, 0, C);
  const K = split(qkv.data, D, C);
  const V = split(qkv.data, 2 * D, C);
  const P = bmm(Q, K, BH, time, hd, time, false, true);
  for (let r = 0; r < BH * time; r++) {
    const n = limit[r]!;
    const o = r * time;
    for (let s = 0; s < n; s++) P[o + s]! *= scale;
    softmaxInPlace(P, o, n);
    P.fill(0, o + n, o + time);
  }
  const y = opBuffer(R * D);
  merge(bmm(P, V, BH, time, time, hd, false, false), y, 0, D);
  return result(y, [R, D], [qkv], (out) => {
    const dO = split(out.grad!, 0, D);
    const dP = bmm(dO, V, BH, time, hd, time, false, true);
    const dV = bmm(P, dO, BH, time, time, hd, true, false);
    for (let r = 0; r < BH * time; r++) {
      const n = limit[r]!;
      const o = r * time;
      let dot = 0;
      for (let s = 0; s < n; s++) dot += P[o + s]! * dP[o + s]!;
      for (let s = 0; s < n; s++) dP[o + s] = P[o + s]! * (dP[o + s]! - dot) * scale;
      dP.fill(0, o + n, o + time);
    }
    const dQ = bmm(dP, K, BH, time, time, hd, false, false);
    const dK = bmm(dP, Q, BH, time, time, hd, true, false);
    const g = qkv.gradBuffer();
    merge(dQ, g, 0, C);
    merge(dK, g, D, C);
    merge(dV, g, 2 * D, C);
  });
}

/**
 * Fused LoRA linear layer `x·W + s·(x·A)·B`: W [K,N] is normally frozen,
 * A [K,r] and B [r,N] are the trained low-rank factors.
 */
export function loraLinear(x: Tensor, W: Tensor, A: Tensor, B: Tensor, s: number): Tensor {
  const [M, K] = need2d(x, 'loraLinear');
  const N = W.cols;
  const r = A.cols;
  const k = fusedKernels('loraLinear', M * K * N);
  if (k) {
    const fwd = k.lora(x.data, W.data, A.data, B.data, s, M, K, r, N);
    return result(fwd.y, [M, N], [x, W, A, B], (out) => {
      const want = { x: x.requiresGrad, w: W.requiresGrad, a: A.requiresGrad, b: B.requiresGrad };
      const d = k.loraBackward(x.data, W.data, A.data, B.data, fwd.xa, out.grad!, s, { m: M, k: K, r, n: N }, want);
      if (d.dx) accumulate(x, d.dx);
      if (d.dw) accumulate(W, d.dw);
      if (d.da) accumulate(A, d.da);
      if (d.db) accumulate(B, d.db);
    });
  }
  const xa = opBuffer(M * r);
  matmulInto(xa, x.data, A.data, M, K, r);
  const y = opBuffer(M * N);
  matmulInto(y, x.data, W.data, M, K, N);
  for (let i = 0; i < xa.length; i++) xa[i]! *= s;
  matmulInto(y, xa, B.data, M, r, N, true);
  return result(y, [M, N], [x, W, A, B], (out) => {
    const g = out.grad!;
    const gB = opBuffer(M * r);
    matmulABtInto(gB, g, B.data, M, N, r);
    for (let i = 0; i < gB.length; i++) gB[i]! *= s;
    if (B.requiresGrad) matmulAtBInto(B.gradBuffer(), xa, g, M, r, N, true);
    if (A.requiresGrad) matmulAtBInto(A.gradBuffer(), x.data, gB, M, K, r, true);
    if (W.requiresGrad) matmulAtBInto(W.gradBuffer(), x.data, g, M, K, N, true);
    if (x.requiresGrad) {
      const xg = x.gradBuffer();
      matmulABtInto(xg, g, W.data, M, N, K, true);
      matmulABtInto(xg, gB, A.data, M, r, K, true);
    }
  });
}

/** a[M,K] · b[N,K]ᵀ: scores of every row of `a` against every row of `b`. */
export function matmulBT(a: Tensor, b: Tensor): Tensor {
  const [M, K] = need2d(a, 'matmulBT');
  const [N, K2] = need2d(b, 'matmulBT');
  if (K !== K2) throw new Error(`matmulBT: inner dimensions ${K} and ${K2} differ`);
  const y = opBuffer(M * N);
  matmulABtInto(y, a.data, b.data, M, K, N);
  return result(y, [M, N], [a, b], (out) => {
    const g = out.grad!;
    if (a.requiresGrad) matmulInto(a.gradBuffer(), g, b.data, M, N, K, true);
    if (b.requiresGrad) matmulAtBInto(b.gradBuffer(), g, a.data, M, N, K, true);
  });
}

/** Side-by-side columns of tensors with the same number of rows. */
export function concatCols(parts: Tensor[]): Tensor {
  const M = parts[0]!.rows;
  const widths = parts.map((p) => {
    if (p.rows !== M) throw new Error('concatCols: row counts differ');
    return p.cols;
  });
  const N = widths.reduce((a, b) => a + b, 0);
  const y = opBuffer(M * N);
  let col = 0;
  parts.forEach((p, k) => {
    const w = widths[k]!;
    for (let i = 0; i < M; i++) y.set(p.data.subarray(i * w, (i + 1) * w), i * N + col);
    col += w;
  });
  return result(y, [M, N], parts, (out) => {
    const g = out.grad!;
    let c = 0;
    parts.forEach((p, k) => {
      const w = widths[k]!;
      if (p.requiresGrad) {
        const pg = p.gradBuffer();
        for (let i = 0; i < M; i++) for (let j = 0; j < w; j++) pg[i * w + j]! += g[i * N + c + j]!;
      }
      c += w;
    });
  });
}

/** x·s for a constant s. */
export function scale(x: Tensor, s: number): Tensor {
  const y = opBuffer(x.data.length);
  for (let i = 0; i < y.length; i++) y[i] = x.data[i]! * s;
  return result(y, x.shape, [x], (out) => {
    const g = out.grad!;
    const xg = x.gradBuffer();
    for (let i = 0; i < g.length; i++) xg[i]! += g[i]! * s;
  });
}

/**
 * Mean of the rows of `table[V,E]` listed for each output row: row i averages
 * ids[offsets[i] .. offsets[i+1]) (zeros when the list is empty). Hashed
 * feature bags.
 */
export function embeddingBag(table: Tensor, ids: Int32Array, offsets: Int32Array): Tensor {
  const [V, E] = need2d(table, 'embeddingBag');
  const n = offsets.length - 1;
  const y = opBuffer(n * E);
  for (let i = 0; i < n; i++) {
    const from = offsets[i]!;
    const to = offsets[i + 1]!;
    if (to <= from) continue;
    const inv = 1 / (to - from);
    for (let k = from; k < to; k++) {
      const id = ids[k]!;
      if (id < 0 || id >= V) throw new Error(`embeddingBag: id ${id} outside [0, ${V})`);
      const o = id * E;
      for (let d = 0; d < E; d++) y[i * E + d]! += table.data[o + d]! * inv;
    }
  }
  return result(y, [n, E], [table], (out) => {
    const g = out.grad!;
    const tg = table.gradBuffer();
    for (let i = 0; i < n; i++) {
      const from = offsets[i]!;
      const to = offsets[i + 1]!;
      if (to <= from) continue;
      const inv = 1 / (to - from);
      for (let k = from; k < to; k++) {
        const o = ids[k]! * E;
        for (let d = 0; d < E; d++) tg[o + d]! += g[i * E + d]! * inv;
      }
    }
  });
}

/**
 * Each row of x [B·T, F] side by side with its neighbours at the given
 * offsets inside its own sequence of T rows (zeros past either end):
 * [B·T, F·offsets.length].
 */
export function window(x: Tensor, time: number, offsets: readonly number[]): Tensor {
  const [R, F] = need2d(x, 'window');
  if (R % time !== 0) throw new Error('window: rows are not a multiple of time');
  const W = F * offsets.length;
  const y = opBuffer(R * W);
  const source = (r: number, off: number): number => {
    const t = (r % time) + off;
    return t < 0 || t >= time ? -1 : r + off;
  };
  for (let r = 0; r < R; r++)
    offsets.forEach((off, k) => {
      const s = source(r, off);
      if (s >= 0) y.set(x.data.subarray(s * F, (s + 1) * F), r * W + k * F);
    });
  return result(y, [R, W], [x], (out) => {
    const g = out.grad!;
    const xg = x.gradBuffer();
    for (let r = 0; r < R; r++)
      offsets.forEach((off, k) => {
        const s = source(r, off);
        if (s < 0) return;
        for (let f = 0; f < F; f++) xg[s * F + f]! += g[r * W + k * F + f]!;
      });
  });
}

/** Inverted dropout: zeroes each value with probability `rate` (seeded) and scales the rest by 1/(1-rate). */
export function dropout(x: Tensor, rate: number, rng: Rng): Tensor {
  if (rate <= 0) return x;
  const mask = rng.mask(x.data.length, rate, 1 / (1 - rate), opBuffer(x.data.length));
  const y = opBuffer(x.data.length);
  const xd = x.data;
  for (let i = 0; i < y.length; i++) y[i] = xd[i]! * mask[i]!;
  return result(y, x.shape, [x], (out) => {
    const g = out.grad!;
    const xg = x.gradBuffer();
    for (let i = 0; i < g.length; i++) xg[i]! += g[i]! * mask[i]!;
  });
}

/** Rows [from, to) of a 2-D tensor. */
export function sliceRows(x: Tensor, from: number, to: number): Tensor {
  const [R, C] = need2d(x, 'sliceRows');
  if (from < 0 || to > R || from > to) throw new Error(`sliceRows: [${from}, ${to}) outside ${R} rows`);
  const y = opBuffer((to - from) * C);
  y.set(x.data.subarray(from * C, to * C));
  return result(y, [to - from, C], [x], (out) => {
    const g = out.grad!;
    const xg = x.gradBuffer();
    for (let i = 0; i < g.length; i++) xg[from * C + i]! += g[i]!;
  });
}

/**
 * A linear-chain CRF over one sequence's emission scores [T, C]. Transition
 * scores are shared by kind: `kinds[p·C + c]` is the index into `trans` of the
 * step p → c (−1 when forbidden), and `kinds[C·C + c]` that of starting in c.
 */
export interface ChainKinds {
  classes: number;
  kinds: Int32Array;
}

const logSumExp = (xs: Float64Array, n: number): number => {
  let m = -Infinity;
  for (let i = 0; i < n; i++) if (xs[i]! > m) m = xs[i]!;
  if (m === -Infinity) return m;
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.exp(xs[i]! - m);
  return m + Math.log(s);
};

/**
 * Forward–backward: log partition, per-step marginals [T·C], and (unless
 * `withExpected` is false, as when only decoding) the expected count of each
 * transition kind.
 */
export function chainMarginals(
  emissions: Float32Array,
  T: number,
  chain: ChainKinds,
  trans: Float32Array,
  withExpected = true,
): { logZ: number; marginals: Float64Array; expected: Float64Array } {
  const C = chain.classes;
  const k = chain.kinds;
  const tr = (p: number, c: number) => (k[p * C + c]! < 0 ? -Infinity : trans[k[p * C + c]!]!);
  const alpha = new Float64Array(T * C);
  const beta = new Float64Array(T * C);
  const tmp = new Float64Array(C);
  for (let c = 0; c < C; c++) alpha[c] = k[C * C + c]! < 0 ? -Infinity : emissions[c]! + trans[k[C * C + c]!]!;
  for (let t = 1; t < T; t++)
    for (let c = 0; c < C; c++) {
      for (let p = 0; p < C; p++) tmp[p] = alpha[(t - 1) * C + p]! + tr(p, c);
      alpha[t * C + c] = emissions[t * C + c]! + logSumExp(tmp, C);
    }
  for (let t = T - 2; t >= 0; t--)
    for (let p = 0; p < C; p++) {
      for (let c = 0; c < C; c++) tmp[c] = tr(p, c) + emissions[(t + 1) * C + c]! + beta[(t + 1) * C + c]!;
      beta[t * C + p] = logSumExp(tmp, C);
    }
  const logZ = logSumExp(alpha.subarray((T - 1) * C), C);
  const marginals = new Float64Array(T * C);
  for (let i = 0; i < T * C; i++) marginals[i] = Math.exp(alpha[i]! + beta[i]! - logZ);
  const expected = new Float64Array(trans.length);
  if (!withExpected) return { logZ, marginals, expected };
  for (let c = 0; c < C; c++) if (k[C * C + c]! >= 0) expected[k[C * C + c]!]! += marginals[c]!;
  for (let t = 1; t < T; t++)
    for (let p = 0; p < C; p++)
      for (let c = 0; c < C; c++) {
        const kind = k[p * C + c]!;
        if (kind >= 0)
          expected[kind]! += Math.exp(
            alpha[(t - 1) * C + p]! + trans[kind]! + emissions[t * C + c]! + beta[t * C + c]! - logZ,
          );
      }
  return { logZ, marginals, expected };
}

/** The highest-scoring class path of one sequence under the CRF. */
export function chainViterbi(emissions: Float32Array, T: number, chain: ChainKinds, trans: Float32Array): Int32Array {
  const C = chain.classes;
  const k = chain.kinds;
  const score = new Float64Array(T * C);
  const back = new Int32Array(T * C);
  for (let c = 0; c < C; c++) score[c] = k[C * C + c]! < 0 ? -Infinity : emissions[c]! + trans[k[C * C + c]!]!;
  for (let t = 1; t < T; t++)
    for (let c = 0; c < C; c++) {
      let best = -Infinity;
      let arg = 0;
      for (let p = 0; p < C; p++) {
        const kind = k[p * C + c]!;
        if (kind < 0) continue;
        const v = score[(t - 1) * C + p]! + trans[kind]!;
        if (v > best) {
          best = v;
          arg = p;
        }
      }
      score[t * C + c] = best + emissions[t * C + c]!;
      back[t * C + c] = arg;
    }
  const path = new Int32Array(T);
  let last = 0;
  for (let c = 1; c < C; c++) if (score[(T - 1) * C + c]! > score[(T - 1) * C + last]!) last = c;
  path[T - 1] = last;
  for (let t = T - 1; t > 0; t--) path[t - 1] = back[t * C + path[t]!]!;
  return path;
}

/** Negative log-likelihood of the gold path `tags` of one sequence under the CRF (a scalar). */
export function chainNll(emissions: Tensor, trans: Tensor, chain: ChainKinds, tags: Int32Array): Tensor {
  const [T, C] = need2d(emissions, 'chainNll');
  if (C !== chain.classes || tags.length !== T) throw new Error('chainNll: emissions, classes and tags disagree');
  const e = emissions.data;
  const k = chain.kinds;
  if (k[C * C + tags[0]!]! < 0) throw new Error('chainNll: the gold path starts in a forbidden class');
  let gold = e[tags[0]!]! + trans.data[k[C * C + tags[0]!]!]!;
  for (let t = 1; t < T; t++) {
    const kind = k[tags[t - 1]! * C + tags[t]!]!;
    if (kind < 0) throw new Error(`chainNll: the gold path takes a forbidden step at ${t}`);
    gold += e[t * C + tags[t]!]! + trans.data[kind]!;
  }
  const { logZ, marginals, expected } = chainMarginals(e, T, chain, trans.data);
  return result(Float32Array.of(logZ - gold), [1], [emissions, trans], (out) => {
    const g = out.grad![0]!;
    if (emissions.requiresGrad) {
      const eg = emissions.gradBuffer();
      for (let i = 0; i < T * C; i++) eg[i]! += g * marginals[i]!;
      for (let t = 0; t < T; t++) eg[t * C + tags[t]!]! -= g;
    }
    if (trans.requiresGrad) {
      const tg = trans.gradBuffer();
      for (let i = 0; i < expected.length; i++) tg[i]! += g * expected[i]!;
      tg[k[C * C + tags[0]!]!]! -= g;
      for (let t = 1; t < T; t++) tg[k[tags[t - 1]! * C + tags[t]!]!]! -= g;
    }
  });
}
