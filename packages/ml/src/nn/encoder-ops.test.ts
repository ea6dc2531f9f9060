import { gradCheck } from './grad-check';
import { concatCols, dropout, sliceRows, embeddingBag, matmulBT, randn, Rng, scale, selfAttention, causalSelfAttention, tensor, window, type Tensor } from './index';

const rng = new Rng(11);
const param = (shape: number[], std = 1): Tensor => tensor(randn(rng, shape.reduce((a, b) => a * b, 1), std), shape, true);

describe('encoder ops', () => {
  it('when a·bᵀ is differentiated, then both inputs match finite differences', () => {
    gradCheck([param([3, 4]), param([5, 4])], ([a, b]) => matmulBT(a!, b!));
  });

  it('when rows are sliced, then the gradient flows back to those rows only', () => {
    gradCheck([param([5, 3])], ([x]) => sliceRows(x!, 1, 4));
  });

  it('when columns are concatenated and scaled, then every part matches finite differences', () => {
    gradCheck([param([3, 2]), param([3, 4]), param([3, 1])], ([a, b, c]) => scale(concatCols([a!, b!, c!]), 0.5));
  });

  it('when a hashed bag of rows is averaged, then the table matches finite differences and an empty bag is zero', () => {
    const ids = Int32Array.of(0, 3, 3, 1, 2);
    const offsets = Int32Array.of(0, 2, 2, 5);
    gradCheck([param([4, 3])], ([t]) => embeddingBag(t!, ids, offsets));
    const out = embeddingBag(param([4, 3]), ids, offsets);
    expect([...out.data.subarray(3, 6)]).toEqual([0, 0, 0]);
  });

  it('when neighbours are windowed, then rows do not cross sequences and gradients match', () => {
    const x = tensor(Float32Array.from({ length: 6 }, (_, i) => i + 1), [6, 1], true);
    const y = window(x, 3, [-1, 0, 1]);
    expect([...y.data]).toEqual([0, 1, 2, 1, 2, 3, 2, 3, 0, 0, 4, 5, 4, 5, 6, 5, 6, 0]);
    gradCheck([param([6, 2])], ([a]) => window(a!, 3, [-1, 0, 1]));
  });

  it('when bidirectional attention is differentiated with padding, then it matches finite differences and padding keys get no weight', () => {
    const lengths = Int32Array.of(3, 2);
    gradCheck([param([8, 12], 0.5)], ([qkv]) => selfAttention(qkv!, 2, 4, 2, lengths), 1e-2, 3e-2);
    // Changing a padded key/value leaves the real positions' outputs unchanged.
    const a = param([8, 12], 0.5);
    const before = selfAttention(a, 2, 4, 2, lengths).data.slice();
    a.data.fill(9, 7 * 12, 8 * 12);
    const after = selfAttention(a, 2, 4, 2, lengths).data;
    for (let r = 4; r < 6; r++) for (let d = 0; d < 4; d++) expect(after[r * 4 + d]).toBeCloseTo(before[r * 4 + d]!, 6);
  });

  it('when attention is causal, then it equals bidirectional attention on the first position', () => {
    const qkv = param([4, 6], 0.5);
    const c = causalSelfAttention(qkv, 1, 4, 1).data;
    const b = selfAttention(qkv, 1, 4, 1, Int32Array.of(1)).data;
    for (let d = 0; d < 2; d++) expect(c[d]).toBeCloseTo(b[d]!, 6);
  });
});

describe('dropout', () => {
  it('when dropout is differentiated with a fixed mask, then it matches finite differences and keeps the mean', () => {
    gradCheck([param([4, 5])], ([x]) => dropout(x!, 0.3, new Rng(5)));
    const ones = tensor(new Float32Array(20000).fill(1), [20000]);
    const y = dropout(ones, 0.25, new Rng(9)).data;
    const mean = y.reduce((a, b) => a + b, 0) / y.length;
    expect(Math.abs(mean - 1)).toBeLessThan(0.05);
  });
});
