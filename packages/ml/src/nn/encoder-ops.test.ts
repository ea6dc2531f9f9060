import { gradCheck } from './grad-check';
import {
  chainNll,
  chainViterbi,
  concatCols,
  dropout,
  sliceRows,
  embeddingBag,
  matmulBT,
  randn,
  Rng,
  scale,
  selfAttention,
  causalSelfAttention,
  tensor,
  window,
  type Tensor,
} from './index';

const rng = new Rng(11);
const param = (shape: number[], std = 1): Tensor =>
  tensor(
    randn(
      rng,
      shape.reduce((a, b) => a * b, 1),
      std,
    ),
    shape,
    true,
  );

/** Three classes (O, B, I): I never first and never after O; six transition kinds including the start. */
const CHAIN = { classes: 3, kinds: Int32Array.of(0, 1, -1, 2, 3, 4, 5, 3, 4, /* start */ 6, 7, -1) };

/** Every legal path of length T with its score, by enumeration. */
function paths(e: Float32Array, trans: Float32Array, T: number): { path: number[]; score: number }[] {
  const out: { path: number[]; score: number }[] = [];
  const walk = (path: number[], score: number): void => {
    if (path.length === T) return void out.push({ path, score });
    const t = path.length;
    for (let c = 0; c < 3; c++) {
      const kind = t === 0 ? CHAIN.kinds[9 + c]! : CHAIN.kinds[path[t - 1]! * 3 + c]!;
      if (kind >= 0) walk([...path, c], score + trans[kind]! + e[t * 3 + c]!);
    }
  };
  walk([], 0);
  return out;
}

describe('encoder ops', () => {
  it('when a chain CRF is differentiated, then emissions and transitions match finite differences, and its likelihood and best path match enumeration', () => {
    const tags = Int32Array.of(1, 2, 0, 1);
    gradCheck([param([4, 3]), param([8], 0.5)], ([e, t]) => chainNll(e!, t!, CHAIN, tags));
    const e = param([4, 3]);
    const trans = param([8], 0.5);
    const all = paths(e.data, trans.data, 4);
    const logZ = Math.log(all.reduce((s, p) => s + Math.exp(p.score), 0));
    const gold = all.find((p) => p.path.join() === [...tags].join())!.score;
    expect(chainNll(e, trans, CHAIN, tags).data[0]).toBeCloseTo(logZ - gold, 4);
    const best = all.reduce((a, b) => (b.score > a.score ? b : a));
    expect([...chainViterbi(e.data, 4, CHAIN, trans.data)]).toEqual(best.path);
    expect(() => chainNll(e, trans, CHAIN, Int32Array.of(0, 2, 0, 0))).toThrow(/forbidden step/);
  });

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
    const x = tensor(
      Float32Array.from({ length: 6 }, (_, i) => i + 1),
      [6, 1],
      true,
    );
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

  it('when a mask is drawn, then it uses the same draws as next() and leaves the generator where next() would', () => {
    const [a, b] = [new Rng(21), new Rng(21)];
    const mask = a.mask(1000, 0.2, 1.25);
    const expected = Float32Array.from({ length: 1000 }, () => (b.next() >= 0.2 ? 1.25 : 0));
    expect(mask).toEqual(expected);
    expect(a.state).toBe(b.state);
  });
});
