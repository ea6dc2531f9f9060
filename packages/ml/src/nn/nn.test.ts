import { gradCheck } from './grad-check';
import { loadOrtGemm, matmulBackend, setFusedMinSize, setMatmulBackend, type FusedOp } from './index';
import {
  Adam,
  add,
  clipGradNorm,
  addBias,
  addRows,
  causalSelfAttention,
  crossEntropy,
  decodeTensors,
  dropout,
  embedding,
  encodeTensors,
  gelu,
  layerNorm,
  loraLinear,
  matmul,
  randn,
  Rng,
  Tensor,
  tensor,
  trainingStep,
  weightedSum,
} from './index';

const rng = new Rng(7);
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

describe('nn ops', () => {
  it('when matmul is differentiated, then both inputs match finite differences', () => {
    gradCheck([param([3, 4]), param([4, 5])], ([a, b]) => matmul(a!, b!));
  });

  it('when add, bias and position broadcast are differentiated, then they match finite differences', () => {
    gradCheck([param([3, 4]), param([3, 4])], ([a, b]) => add(a!, b!));
    gradCheck([param([6, 4]), param([3, 4])], ([a, b]) => addRows(a!, b!));
  });

  it('when softmax cross-entropy is differentiated with a row mask, then it matches finite differences', () => {
    const targets = Int32Array.of(1, 0, 4, 2);
    gradCheck([param([4, 5])], ([x]) => crossEntropy(x!, targets, Float32Array.of(1, 0, 2, 1)));
  });

  it('when backward runs twice on fresh graphs, then intermediates keep no gradient and reused buffers start at zero', () => {
    const W = param([6, 5]);
    const x = tensor(randn(new Rng(3), 4 * 6, 1), [4, 6]);
    const w = randn(new Rng(4), 4 * 5, 1);
    const pass = (): { grad: Float32Array; hidden: Tensor } => {
      W.grad = null;
      const hidden = gelu(matmul(x, W));
      weightedSum(layerNorm(hidden, tensor([1, 1, 1, 1, 1], [5]), tensor([0, 0, 0, 0, 0], [5])), w).backward();
      return { grad: W.grad!.slice(), hidden };
    };
    const first = pass();
    const second = pass();
    expect(first.hidden.grad).toBeNull();
    expect(second.hidden.grad).toBeNull();
    expect(Array.from(second.grad)).toEqual(Array.from(first.grad));
    expect(first.grad.some((v) => v !== 0)).toBe(true);
  });

  it('when steps run in reused buffers, then losses and gradients are the bits of fresh buffers', () => {
    const W = param([6, 5]);
    const x = tensor(randn(new Rng(3), 4 * 6, 1), [4, 6]);
    const targets = Int32Array.of(0, 3, 4, 1);
    const step = (): [number, number[]] => {
      W.grad = null;
      const loss = crossEntropy(dropout(gelu(matmul(x, W)), 0.3, new Rng(9)), targets);
      loss.backward();
      return [loss.data[0]!, Array.from(W.grad!)];
    };
    const fresh = step();
    expect(trainingStep(step)).toEqual(fresh);
    expect(trainingStep(step)).toEqual(fresh);
    expect(() => trainingStep(() => trainingStep(step))).toThrow(/already running/);
    expect(trainingStep(step)).toEqual(fresh);
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

  it('when a table lists its touched rows, then clipping counts and scales only them and Adam moves only them', () => {
    const dense = tensor(Float32Array.of(1, 1), [2], true);
    dense.grad = Float32Array.of(3, 4);
    const table = tensor(new Float32Array(8).fill(1), [4, 2], true);
    // Row 0 holds a stale value that must be ignored; rows 1 and 3 are this step's.
    table.grad = Float32Array.of(7, 7, 1, 1, 0, 0, 1, 1);
    const rows = new Map([[table, Int32Array.of(1, 3)]]);
    expect(clipGradNorm([dense, table], 1, rows)).toBeCloseTo(Math.sqrt(29), 5);
    expect(dense.grad[1]).toBeCloseTo(4 / Math.sqrt(29), 6);
    expect(Array.from(table.grad.subarray(0, 4))).toEqual([
      7,
      7,
      expect.closeTo(1 / Math.sqrt(29), 6),
      expect.closeTo(1 / Math.sqrt(29), 6),
    ]);
    new Adam([dense, table], { learningRate: 0.1 }).step(0.1, rows);
    // A first Adam step moves each element by about the learning rate against its gradient's sign.
    expect(Array.from(table.data, (x) => Math.round(x * 100) / 100)).toEqual([1, 1, 0.9, 0.9, 1, 1, 0.9, 0.9]);
    expect(Array.from(table.grad)).toEqual([7, 7, 0, 0, 0, 0, 0, 0]);
  });

  it('when tensors are encoded and decoded, then names, shapes and values survive', () => {
    const bytes = encodeTensors({
      meta: { a: 1 },
      tensors: { w: { shape: [2, 2], data: Float32Array.of(1, 2, 3, 4) } },
    });
    const back = decodeTensors<{ a: number }>(bytes);
    expect(back.meta.a).toBe(1);
    expect(Array.from(back.tensors.w!.data)).toEqual([1, 2, 3, 4]);
  });
});

const FUSED: FusedOp[] = ['layerNorm', 'gelu', 'addBias', 'loraLinear', 'adam'];
const ortLoads = loadOrtGemm() !== null;

/** Runs the fused ops on one path whatever their size: 'ort' forces the fused graphs, 'js' the loops. */
function useFused(path: 'ort' | 'js'): void {
  for (const op of FUSED) setFusedMinSize(op, path === 'ort' ? 0 : Infinity);
}

describe.each(['js', 'ort'] as const)('fused ops on the %s path', (path) => {
  const pathIt = path === 'js' || ortLoads ? it : it.skip;
  beforeEach(() => useFused(path));
  afterAll(() => FUSED.forEach((op) => setFusedMinSize(op)));

  pathIt('when LayerNorm is differentiated, then input, gain and bias match finite differences', () => {
    gradCheck([param([3, 6]), param([6]), param([6])], ([x, g, b]) => layerNorm(x!, g!, b!), 1e-2, 3e-2);
  });

  pathIt('when GELU is differentiated, then it matches finite differences', () => {
    gradCheck([param([4, 5], 2)], ([x]) => gelu(x!));
  });

  pathIt('when a bias is differentiated, then input and bias match finite differences', () => {
    gradCheck([param([3, 4]), param([4])], ([a, b]) => addBias(a!, b!));
  });

  pathIt(
    'when a LoRA linear is differentiated, then x, A and B match finite differences and a frozen W gets none',
    () => {
      const W = tensor(randn(rng, 4 * 3, 1), [4, 3]);
      gradCheck([param([2, 4]), param([4, 2]), param([2, 3])], ([x, A, B]) => loraLinear(x!, W, A!, B!, 0.5));
      expect(W.grad).toBeNull();
      gradCheck([param([2, 4]), param([4, 3]), param([4, 2]), param([2, 3])], ([x, W2, A, B]) =>
        loraLinear(x!, W2!, A!, B!, 2),
      );
    },
  );

  pathIt('when Adam runs twice from the same seed, or resumes from saved m, v and t, then the bits are equal', () => {
    const train = (steps: number, from?: Adam): Adam => {
      const r = new Rng(3);
      const params = [tensor(randn(r, 64 * 48, 0.1), [64, 48], true), tensor(randn(r, 48, 0.1), [48], true)];
      const opt = new Adam(params, { learningRate: 1e-2, weightDecay: 0.01 });
      if (from) {
        from.params.forEach((p, k) => params[k]!.data.set(p.data));
        from.m.forEach((m, k) => opt.m[k]!.set(m));
        from.v.forEach((v, k) => opt.v[k]!.set(v));
        opt.t = from.t;
      }
      while (opt.t < steps) {
        const g = new Rng(100 + opt.t);
        for (const p of params) p.gradBuffer().set(randn(g, p.data.length, 1));
        opt.step();
      }
      return opt;
    };
    const bits = (opt: Adam) => [...opt.params.map((p) => p.data), ...opt.m, ...opt.v].map((x) => Array.from(x));
    const direct = train(5);
    expect(bits(train(5))).toEqual(bits(direct));
    const resumed = train(5, train(2));
    expect(resumed.t).toBe(5);
    expect(bits(resumed)).toEqual(bits(direct));
  });
});

describe('fused ops: onnxruntime against TypeScript', () => {
  const ortIt = ortLoads ? it : it.skip;
  afterAll(() => FUSED.forEach((op) => setFusedMinSize(op)));

  /** Max |a − b| over the largest |b|, per array. */
  const relDiff = (a: Float32Array, b: Float32Array): number => {
    const scale = Math.max(1e-30, ...Array.from(b, Math.abs));
    return Math.max(...Array.from(a, (x, i) => Math.abs(x - b[i]!))) / scale;
  };

  const both = (run: () => Float32Array[]): void => {
    useFused('ort');
    const viaOrt = run();
    useFused('js');
    const viaJs = run();
    expect(viaOrt.length).toBe(viaJs.length);
    viaOrt.forEach((v, k) => expect(relDiff(v, viaJs[k]!)).toBeLessThan(1e-5));
  };

  /** Forward value and every input gradient of `f` over fresh inputs drawn from a fixed seed. */
  const forwardBackward = (shapes: number[][], f: (xs: Tensor[]) => Tensor) => () => {
    const r = new Rng(11);
    const xs = shapes.map((s) =>
      tensor(
        randn(
          r,
          s.reduce((a, b) => a * b, 1),
          1,
        ),
        s,
        true,
      ),
    );
    const y = f(xs);
    y.backward(randn(r, y.data.length, 1));
    // A second pass accumulates into the existing gradient buffers, as shared parameters do.
    f(xs).backward(randn(r, y.data.length, 1));
    return [y.data, ...xs.map((x) => x.grad!)];
  };

  ortIt('when LayerNorm runs on ORT, then its output and gradients equal the TypeScript loops', () => {
    both(forwardBackward([[96, 40], [40], [40]], ([x, g, b]) => layerNorm(x!, g!, b!)));
  });

  ortIt('when GELU runs on ORT, then its output and gradient equal the TypeScript loop', () => {
    both(forwardBackward([[96, 40]], ([x]) => gelu(x!)));
  });

  ortIt('when a bias add runs on ORT, then its output and gradients equal the TypeScript loop', () => {
    both(forwardBackward([[96, 40], [40]], ([x, b]) => addBias(x!, b!)));
  });

  ortIt('when a LoRA linear runs as one ORT graph, then its output and gradients equal the unfused path', () => {
    both(
      forwardBackward(
        [
          [96, 40],
          [40, 24],
          [40, 4],
          [4, 24],
        ],
        ([x, W, A, B]) => loraLinear(x!, W!, A!, B!, 2),
      ),
    );
  });

  ortIt('when Adam steps on ORT, then weights, m, v and t equal the TypeScript loop', () => {
    both(() => {
      const r = new Rng(12);
      const params = [tensor(randn(r, 200 * 30, 0.1), [200, 30], true), tensor(randn(r, 30, 0.1), [30], true)];
      const opt = new Adam(params, { learningRate: 1e-2, weightDecay: 0.01 });
      for (let s = 0; s < 4; s++) {
        for (const p of params) p.gradBuffer().set(randn(r, p.data.length, 1));
        opt.step();
      }
      return [...params.map((p) => p.data), ...opt.m, ...opt.v, Float32Array.of(opt.t)];
    });
  });
});

describe('onnxruntime matmul backend', () => {
  const ortIt = loadOrtGemm() ? it : it.skip;
  afterAll(() => setMatmulBackend('ort'));

  ortIt('when onnxruntime-node loads, then it is the default backend', () => {
    expect(matmulBackend()).toBe('ort');
  });

  ortIt(
    'when matmul, LoRA and attention run forward and backward on ORT, then values and gradients equal the TypeScript kernels',
    () => {
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
    },
  );
});
