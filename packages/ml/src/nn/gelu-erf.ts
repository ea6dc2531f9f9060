import { opBuffer, Tensor } from './tensor';

/**
 * erf(x) by Abramowitz and Stegun 7.1.26: absolute error below 1.5e-7, so GELU's error is below 1e-7·|x|, inside
 * float32's resolution of BERT's activations (the goldens' 1e-4 bound is met with room).
 */
export function erf(x: number): number {
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
  return x < 0 ? -y : y;
}

const INV_SQRT2 = 1 / Math.SQRT2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

/** GELU as BERT defines it (`hidden_act: "gelu"`): x·Φ(x) with the exact normal CDF, and its derivative. */
export function geluErf(x: Tensor): Tensor {
  const n = x.data.length;
  const y = opBuffer(n);
  const d = x.requiresGrad ? opBuffer(n) : null;
  for (let i = 0; i < n; i++) {
    const v = x.data[i]!;
    // erf(v/√2) by Abramowitz–Stegun 7.1.26; its exp(-(v/√2)²) is also the normal density's exp(-v²/2).
    const a = Math.abs(v) * INV_SQRT2;
    const t = 1 / (1 + 0.3275911 * a);
    const e = Math.exp(-a * a);
    const p = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * e;
    const cdf = 0.5 * (1 + (v < 0 ? -p : p));
    y[i] = v * cdf;
    if (d) d[i] = cdf + v * INV_SQRT_2PI * e;
  }
  if (!d) return new Tensor(y, x.shape);
  const out: Tensor = new Tensor(y, x.shape, true, [x], () => {
    const g = out.grad!;
    const xg = x.gradBuffer();
    for (let i = 0; i < n; i++) xg[i]! += g[i]! * d[i]!;
  });
  return out;
}
