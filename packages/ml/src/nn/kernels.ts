import { loadOrtFused, loadOrtGemm, type OrtFused, type OrtGemm } from './ort';

/**
 * Raw float32 kernels shared by the ops. All matrices are row-major; `acc`
 * adds into `out` instead of overwriting it. Matmuls above a small size run as
 * cached onnxruntime sessions (about 15× faster than these loops here); below
 * it the ~12 µs per ORT call costs more than the loop. The elementwise ops
 * ask `fusedKernels` whether their fused ORT graph should run instead.
 */

export type MatmulBackend = 'ort' | 'js';
const ORT_MIN_FLOPS = 8192;
let ort: OrtGemm | null = loadOrtGemm();
let fused: OrtFused | null = ort && loadOrtFused();

/**
 * Chooses the backend of matmuls and of the fused elementwise ops; `ort` falls back to `js` when
 * onnxruntime-node cannot load. Returns the one in use.
 */
export function setMatmulBackend(backend: MatmulBackend): MatmulBackend {
  ort = backend === 'ort' ? loadOrtGemm() : null;
  fused = ort && loadOrtFused();
  return ort ? 'ort' : 'js';
}

/** Ops with a fused ORT graph besides the matmuls. */
export type FusedOp = 'layerNorm' | 'gelu' | 'addBias' | 'loraLinear' | 'adam';

/**
 * The size from which each op runs as an ORT session (elements; M·K·N for loraLinear). Measured with
 * bench/ml-nn.ts on one intra-op thread: every fused graph beat its loop on the training shapes (1.5–8×),
 * and broke even at about these sizes, where the ~25 µs per call and the output copies eat the gain.
 */
const FUSED_MIN_SIZE: Readonly<Record<FusedOp, number>> = {
  layerNorm: 4096,
  gelu: 4096,
  addBias: 8192,
  loraLinear: 65536,
  adam: 8192,
};
const fusedMinSize: Record<FusedOp, number> = { ...FUSED_MIN_SIZE };

/**
 * Overrides the size from which `op` runs in ORT (0: always, Infinity: never); `undefined` restores the
 * measured default. Returns the size now in effect.
 */
export function setFusedMinSize(op: FusedOp, size?: number): number {
  return (fusedMinSize[op] = size ?? FUSED_MIN_SIZE[op]);
}

/** The ORT kernels when `op` of this size should run there, else null. */
export function fusedKernels(op: FusedOp, size: number): OrtFused | null {
  return fused && size >= fusedMinSize[op] ? fused : null;
}

export function matmulBackend(): MatmulBackend {
  return ort ? 'ort' : 'js';
}

/**
 * One reusable buffer for Gemm results that are added into a gradient: ORT writes there instead of into a fresh
 * array per call (training's backward pass makes hundreds a step), and the sum is read out at once.
 */
let scratch = new Float32Array(0);

/** out[0, n) = (or +=) op(a)·op(b) through ORT: written in place when overwriting, via the scratch buffer when adding. */
function viaOrt(out: Float32Array, n: number, acc: boolean, gemm: (into: Float32Array) => Float32Array): void {
  if (!acc) {
    gemm(out.length === n ? out : out.subarray(0, n));
    return;
  }
  if (scratch.length < n) scratch = new Float32Array(n);
  const y = gemm(scratch.subarray(0, n));
  for (let i = 0; i < n; i++) out[i]! += y[i]!;
}

/** out[M,N] (+)= a[M,K] · b[K,N] */
export function matmulInto(
  out: Float32Array,
  a: Float32Array,
  b: Float32Array,
  M: number,
  K: number,
  N: number,
  acc = false,
): void {
  if (ort && M * K * N >= ORT_MIN_FLOPS)
    return viaOrt(out, M * N, acc, (y) =>
      ort!.gemm(a.subarray(0, M * K), [M, K], b.subarray(0, K * N), [K, N], false, false, y),
    );
  if (!acc) out.fill(0, 0, M * N);
  for (let i = 0; i < M; i++) {
    const ro = i * N;
    const ra = i * K;
    for (let k = 0; k < K; k++) {
      const av = a[ra + k]!;
      if (av === 0) continue;
      const rb = k * N;
      for (let j = 0; j < N; j++) out[ro + j]! += av * b[rb + j]!;
    }
  }
}

/** out[M,K] (+)= a[M,N] · b[K,N]ᵀ */
export function matmulABtInto(
  out: Float32Array,
  a: Float32Array,
  b: Float32Array,
  M: number,
  N: number,
  K: number,
  acc = false,
): void {
  if (ort && M * K * N >= ORT_MIN_FLOPS)
    return viaOrt(out, M * K, acc, (y) =>
      ort!.gemm(a.subarray(0, M * N), [M, N], b.subarray(0, K * N), [K, N], false, true, y),
    );
  for (let i = 0; i < M; i++) {
    const ra = i * N;
    for (let k = 0; k < K; k++) {
      const rb = k * N;
      let s = 0;
      for (let j = 0; j < N; j++) s += a[ra + j]! * b[rb + j]!;
      out[i * K + k] = acc ? out[i * K + k]! + s : s;
    }
  }
}

/** out[K,N] (+)= a[M,K]ᵀ · b[M,N] */
export function matmulAtBInto(
  out: Float32Array,
  a: Float32Array,
  b: Float32Array,
  M: number,
  K: number,
  N: number,
  acc = false,
): void {
  if (ort && M * K * N >= ORT_MIN_FLOPS)
    return viaOrt(out, K * N, acc, (y) =>
      ort!.gemm(a.subarray(0, M * K), [M, K], b.subarray(0, M * N), [M, N], true, false, y),
    );
  if (!acc) out.fill(0, 0, K * N);
  for (let i = 0; i < M; i++) {
    const ra = i * K;
    const rb = i * N;
    for (let k = 0; k < K; k++) {
      const av = a[ra + k]!;
      if (av === 0) continue;
      const ro = k * N;
      for (let j = 0; j < N; j++) out[ro + j]! += av * b[rb + j]!;
    }
  }
}

/** In-place softmax of `n` values starting at `off`. */
export function softmaxInPlace(x: Float32Array, off: number, n: number): void {
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (x[off + i]! > max) max = x[off + i]!;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const e = Math.exp(x[off + i]! - max);
    x[off + i] = e;
    sum += e;
  }
  for (let i = 0; i < n; i++) x[off + i]! /= sum;
}

/**
 * Batched out[b] = op(a[b])·op(b[b]) for `batch` row-major matrices; `m×n` is the
 * output shape and `k` the inner dimension. Runs as one ORT call when available.
 */
export function bmm(
  a: Float32Array,
  b: Float32Array,
  batch: number,
  m: number,
  k: number,
  n: number,
  transA: boolean,
  transB: boolean,
): Float32Array {
  if (ort && batch * m * k * n >= ORT_MIN_FLOPS) {
    return ort.bmm(
      a.subarray(0, batch * m * k),
      transA ? [batch, k, m] : [batch, m, k],
      b.subarray(0, batch * k * n),
      transB ? [batch, n, k] : [batch, k, n],
      transA,
      transB,
    );
  }
  if (transA && transB) throw new Error('bmm: transposing both inputs is not supported');
  const out = new Float32Array(batch * m * n);
  for (let i = 0; i < batch; i++) {
    const ai = a.subarray(i * m * k, (i + 1) * m * k);
    const bi = b.subarray(i * k * n, (i + 1) * k * n);
    const oi = out.subarray(i * m * n, (i + 1) * m * n);
    if (transA) matmulAtBInto(oi, ai, bi, k, m, n);
    else if (transB) matmulABtInto(oi, ai, bi, m, k, n);
    else matmulInto(oi, ai, bi, m, k, n);
  }
  return out;
}
