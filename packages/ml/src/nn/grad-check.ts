import { randn, Rng, weightedSum, type Tensor } from './index';

/**
 * Central finite differences against the analytic gradient of Σ f(inputs)·w,
 * with the loss summed in float64 from float32 outputs.
 */
export function gradCheck(inputs: Tensor[], f: (xs: Tensor[]) => Tensor, eps = 1e-2, tol = 2e-2): void {
  const rng = new Rng(99);
  const probe = f(inputs);
  const w = randn(rng, probe.data.length, 1);
  const loss = (): number => {
    const out = f(inputs);
    let s = 0;
    for (let i = 0; i < out.data.length; i++) s += out.data[i]! * w[i]!;
    return s;
  };
  for (const x of inputs) x.grad = null;
  weightedSum(f(inputs), w).backward();
  for (const x of inputs) {
    if (!x.requiresGrad) continue;
    const analytic = x.grad ?? new Float32Array(x.data.length);
    for (let i = 0; i < x.data.length; i++) {
      const old = x.data[i]!;
      x.data[i] = old + eps;
      const up = loss();
      x.data[i] = old - eps;
      const down = loss();
      x.data[i] = old;
      const numeric = (up - down) / (2 * eps);
      const err = Math.abs(numeric - analytic[i]!);
      if (err > tol * Math.max(1, Math.abs(numeric)))
        throw new Error(`gradient ${i}: analytic ${analytic[i]} numeric ${numeric}`);
    }
  }
}
