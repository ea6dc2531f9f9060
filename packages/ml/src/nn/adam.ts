import { fusedKernels } from './kernels';
import type { Tensor } from './tensor';

export interface AdamOptions {
  learningRate: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Decoupled weight decay (AdamW). */
  weightDecay?: number;
}

/** Adam(W) with one fused elementwise pass per parameter; its state can be saved and restored exactly. */
export class Adam {
  readonly m: Float32Array[];
  readonly v: Float32Array[];
  t = 0;

  constructor(
    readonly params: Tensor[],
    readonly options: AdamOptions,
  ) {
    this.m = params.map((p) => new Float32Array(p.data.length));
    this.v = params.map((p) => new Float32Array(p.data.length));
  }

  /**
   * One update with the current gradients, then clears them. `rows` lists, for
   * embedding-like tables, the only rows this step touched: those tables are
   * updated lazily (rows without a gradient keep their weights and moments, as
   * in LazyAdam), which keeps a step's cost proportional to the batch.
   */
  step(learningRate = this.options.learningRate, rows?: ReadonlyMap<Tensor, Int32Array>): void {
    const { beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0 } = this.options;
    this.t++;
    const c1 = 1 - beta1 ** this.t;
    const c2 = 1 - beta2 ** this.t;
    this.params.forEach((p, k) => {
      const g = p.grad;
      if (!g) return;
      const w = p.data;
      const m = this.m[k]!;
      const v = this.v[k]!;
      const update = (i: number): void => {
        const gi = g[i]!;
        const mi = (m[i] = beta1 * m[i]! + (1 - beta1) * gi);
        const vi = (v[i] = beta2 * v[i]! + (1 - beta2) * gi * gi);
        w[i] = w[i]! - learningRate * (mi / c1 / (Math.sqrt(vi / c2) + eps) + weightDecay * w[i]!);
        g[i] = 0;
      };
      const touched = rows?.get(p);
      if (touched) {
        const cols = p.cols;
        const [b1, b2, lr] = [1 - beta1, 1 - beta2, learningRate];
        for (const r of touched)
          for (let i = r * cols, end = (r + 1) * cols; i < end; i++) {
            const gi = g[i]!;
            const mi = (m[i] = beta1 * m[i]! + b1 * gi);
            const vi = (v[i] = beta2 * v[i]! + b2 * gi * gi);
            w[i] = w[i]! - lr * (mi / c1 / (Math.sqrt(vi / c2) + eps) + weightDecay * w[i]!);
            g[i] = 0;
          }
        return;
      }
      const ort = fusedKernels('adam', w.length);
      if (ort) {
        // In place, so m and v stay the arrays checkpoints read and restore.
        ort.adam(w, g, m, v, { lr: learningRate, c1, c2, beta1, beta2, eps, weightDecay });
        g.fill(0);
        return;
      }
      for (let i = 0; i < w.length; i++) update(i);
    });
  }

  zeroGrad(): void {
    for (const p of this.params) p.grad?.fill(0);
  }
}

/**
 * Scales all gradients so that their global L2 norm is at most `max`; returns
 * the norm before clipping. `rows` (as in `Adam.step`) limits a table to the
 * rows that have a gradient.
 */
export function clipGradNorm(params: Tensor[], max: number, rows?: ReadonlyMap<Tensor, Int32Array>): number {
  // Plain loops over each gradient (or each touched row's slice): this runs every step over every weight.
  const slices = (p: Tensor): [Float32Array, number, number][] => {
    const g = p.grad;
    if (!g) return [];
    const touched = rows?.get(p);
    if (!touched) return [[g, 0, g.length]];
    const cols = p.cols;
    return Array.from(touched, (r) => [g, r * cols, (r + 1) * cols]);
  };
  const all = params.flatMap(slices);
  let sq = 0;
  for (const [g, from, to] of all) for (let i = from; i < to; i++) sq += g[i]! * g[i]!;
  const norm = Math.sqrt(sq);
  if (norm > max) {
    const f = max / norm;
    for (const [g, from, to] of all) for (let i = from; i < to; i++) g[i]! *= f;
  }
  return norm;
}
