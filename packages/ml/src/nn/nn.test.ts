import { gradCheck } from './grad-check';
import { loadOrtGemm, matmulBackend, setMatmulBackend } from './index';
import { Adam, add, addBias, addRows, causalSelfAttention, crossEntropy, decodeTensors, embedding, encodeTensors, gelu, layerNorm, loraLinear, matmul, randn, Rng, Tensor, tensor, weightedSum } from './index';

const rng = new Rng(7);
const param = (shape: number[], std = 1): Tensor => tensor(randn(rng, shape.reduce((a, b) => a * b, 1), std), shape, true);

describe('nn ops', () => {
  it('when matmul is differentiated, then both inputs match finite differences', () => {
    gradCheck([param([3, 4]), param([4, 5])], ([a, b]) => matmul(a!, b!));
  });

  it('when add, bias and position broadcast are differentiated, then they match finite differences', () => {
    gradCheck([param([3, 4]), param([3, 4])], ([a, b]) => add(a!, b!));
    gradCheck([param([3, 4]), param([4])], ([a, b]) => addBias(a!, b!));
    gradCheck([param([6, 4]), param([3, 4])], ([a, b]) => addRows(a!, b!));
  });

  it('when LayerNorm is differentiated, then input, gain and bias match finite differences', () => {
    gradCheck([param([3, 6]), param([6]), param([6])], ([x, g, b]) => layerNorm(x!, g!, b!), 1e-2, 3e-2);
  });

  it('when GELU is differentiated, then it matches finite differences', () => {
    gradCheck([param([4, 5], 2)], ([x]) => gelu(x!));
  });

  it('when softmax cross-entropy is differentiated with a row mask, then it matches finite differences', () => {
    const targets = Int32Array.of(1, 0, 4, 2);
    gradCheck([param([4, 5])], ([x]) => crossEntropy(x!, targets, Float32Array.of(1, 0, 2, 1)));
  });

  it('when cross-entropy sees uniform logits, then the loss is log V', () => {
    const loss = crossEntropy(tensor(new Float32Array(8), [2, 4]), Int32Array.of(0, 3));
    expect(loss.data[0]).toBeCloseTo(Math.log(4), 5);
  });

  it('when an embedding lookup is differentiated, then repeated ids accumulate and match finite differences', () => {
    gradCheck([param([5, 3])], ([t]) => embedding(t!, Int32Array.of(1, 3, 1, 0)));
  });

  it('when causal self-attention is differentiated, then q, k and v match finite differences', () => {
    gradCheck([param([2 * 4, 3 * 6], 0.7)], ([qkv]) => causalSelfAttention(qkv!, 2, 4, 2));
  });

  it('when attention runs, then a position never sees the future', () => {
    const qkv = param([4, 6]);
    const before = causalSelfAttention(qkv, 1, 4, 1).data.slice(0, 2 * 2);
    qkv.data.fill(9, 3 * 6, 4 * 6);
    expect(Array.from(causalSelfAttention(qkv, 1, 4, 1).data.slice(0, 2 * 2))).toEqual(Array.from(before));
  });

  it('when a LoRA linear is differentiated, then x, A and B match finite differences and a frozen W gets none', () => {
    const W = tensor(randn(rng, 4 * 3, 1), [4, 3]);
    gradCheck([param([2, 4]), param([4, 2]), param([2, 3])], ([x, A, B]) => loraLinear(x!, W, A!, B!, 0.5));
    expect(W.grad).toBeNull();
    gradCheck([param([2, 4]), param([4, 3]), param([4, 2]), param([2, 3])], ([x, W2, A, B]) => loraLinear(x!, W2!, A!, B!, 2));
  });

  it('when B is zero, then a LoRA linear equals the plain matmul', () => {
    const x = param([3, 4]);
    const W = param([4, 5]);
    const y = loraLinear(x, W, param([4, 2]), tensor(new Float32Array(10), [2, 5]), 4);
    expect(Array.from(y.data)).toEqual(Array.from(matmul(x, W).data));
  });

  it('when Adam minimises a quadratic, then it converges and the same seed gives the same bits', () => {
    const run = (): Float32Array => {
      const x = tensor(Float32Array.of(3, -2), [2], true);
      const opt = new Adam([x], { learningRate: 0.1 });
      for (let i = 0; i < 300; i++) {
        weightedSum(x, x.data.slice()).backward();
        opt.step();
      }
      return x.data;
    };
    const a = run();
    expect(Math.abs(a[0]!)).toBeLessThan(0.05);
    expect(Math.abs(a[1]!)).toBeLessThan(0.05);
    expect(Array.from(run())).toEqual(Array.from(a));
  });

  it('when tensors are encoded and decoded, then names, shapes and values survive', () => {
    const bytes = encodeTensors({ meta: { a: 1 }, tensors: { w: { shape: [2, 2], data: Float32Array.of(1, 2, 3, 4) } } });
    const back = decodeTensors<{ a: number }>(bytes);
    expect(back.meta.a).toBe(1);
    expect(Array.from(back.tensors.w!.data)).toEqual([1, 2, 3, 4]);
  });
});

describe('onnxruntime matmul backend', () => {
  const ortIt = loadOrtGemm() ? it : it.skip;
  afterAll(() => setMatmulBackend('ort'));

  ortIt('when onnxruntime-node loads, then it is the default backend', () => {
    expect(matmulBackend()).toBe('ort');
  });

  ortIt('when matmul, LoRA and attention run forward and backward on ORT, then values and gradients equal the TypeScript kernels', () => {
    const run = (backend: 'ort' | 'js') => {
      expect(setMatmulBackend(backend)).toBe(backend);
      const r = new Rng(5);
      const x = tensor(randn(r, 64 * 48, 1), [64, 48], true);
      const W = tensor(randn(r, 48 * 40, 1), [48, 40], true);
      const A = tensor(randn(r, 48 * 4, 1), [48, 4], true);
      const B = tensor(randn(r, 4 * 40, 1), [4, 40], true);
      const qkv = tensor(randn(r, 2 * 32 * 3 * 32, 1), [2 * 32, 3 * 32], true);
      const y = add(matmul(x, W), loraLinear(x, W, A, B, 0.5));
      weightedSum(y, randn(new Rng(6), y.data.length, 1)).backward();
      const att = causalSelfAttention(qkv, 2, 32, 4);
      weightedSum(att, randn(new Rng(8), att.data.length, 1)).backward();
      return [y.data, x.grad!, W.grad!, A.grad!, B.grad!, att.data, qkv.grad!];
    };
    const viaOrt = run('ort');
    const viaJs = run('js');
    viaOrt.forEach((v, k) => {
      const scale = Math.max(...Array.from(viaJs[k]!, Math.abs));
      const maxDiff = Math.max(...Array.from(v, (a, i) => Math.abs(a - viaJs[k]![i]!)));
      expect(maxDiff / scale).toBeLessThan(1e-5);
    });
  });
});
