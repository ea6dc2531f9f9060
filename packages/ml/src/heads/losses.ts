import { opBuffer, Tensor } from '../nn/tensor';

/**
 * Mean binary cross-entropy with logits over every element of `logits` against 0/1 `targets`, positives weighted
 * by `posWeight` (as torch's BCEWithLogitsLoss pos_weight); a scalar.
 */
export function bceWithLogits(logits: Tensor, targets: Uint8Array, posWeight = 1): Tensor {
  const n = logits.data.length;
  if (targets.length !== n) throw new Error('bceWithLogits: one target per logit');
  const x = logits.data;
  let loss = 0;
  const grad = opBuffer(n);
  for (let i = 0; i < n; i++) {
    const z = x[i]!;
    const p = 1 / (1 + Math.exp(-z));
    // log(1 + e^-|z|) + max(z, 0): the stable softplus.
    const sp = Math.log1p(Math.exp(-Math.abs(z)));
    if (targets[i]) {
      loss += posWeight * (sp + Math.max(-z, 0));
      grad[i] = (posWeight * (p - 1)) / n;
    } else {
      loss += sp + Math.max(z, 0);
      grad[i] = p / n;
    }
  }
  const y = opBuffer(1);
  y[0] = loss / n;
  if (!logits.requiresGrad) return new Tensor(y, [1]);
  const out: Tensor = new Tensor(y, [1], true, [logits], () => {
    const g = out.grad![0]!;
    const lg = logits.gradBuffer();
    for (let i = 0; i < n; i++) lg[i]! += g * grad[i]!;
  });
  return out;
}

/** The mean of each sequence's rows [from, to) of x[R, D]: one output row per range, [ranges, D]. */
export function meanRows(x: Tensor, ranges: ReadonlyArray<readonly [number, number]>): Tensor {
  const D = x.cols;
  const y = opBuffer(ranges.length * D);
  ranges.forEach(([a, b], r) => {
    const inv = 1 / Math.max(1, b - a);
    for (let i = a; i < b; i++) for (let d = 0; d < D; d++) y[r * D + d]! += x.data[i * D + d]! * inv;
  });
  if (!x.requiresGrad) return new Tensor(y, [ranges.length, D]);
  const out: Tensor = new Tensor(y, [ranges.length, D], true, [x], () => {
    const g = out.grad!;
    const xg = x.gradBuffer();
    ranges.forEach(([a, b], r) => {
      const inv = 1 / Math.max(1, b - a);
      for (let i = a; i < b; i++) for (let d = 0; d < D; d++) xg[i * D + d]! += g[r * D + d]! * inv;
    });
  });
  return out;
}
