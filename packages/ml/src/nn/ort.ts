/**
 * Kernels as cached onnxruntime-node sessions built from hand-written ONNX
 * graphs: one `Gemm` graph per transpose variant, and fused elementwise graphs
 * (LayerNorm, GELU, bias, LoRA linear, AdamW), all with symbolic dimensions so
 * every shape reuses them. One intra-op thread (faster than two here).
 *
 * ORT's public `InferenceSession.run` returns a promise, but the autograd tape
 * and `ExtractionModel.extract` are synchronous: the public API would make
 * every op, backward pass and extraction (and the model-server's call into it)
 * async. Per Gemm call it was not much slower (measured on a loaded 2-core
 * machine: 11–20 µs more for 16×64·64×64, within noise for 480×128·128×512);
 * the promise is the cost. So the tape calls the native session underneath
 * directly, through onnxruntime-node's private `dist/binding.js`. That path is not a
 * contract, so package.json pins onnxruntime-node to an exact version, and
 * ort-pin.test.ts fails when the installed version differs from the pin or the
 * binding stops exposing what this file calls. After an upgrade, run that test
 * and `nn.test.ts`, then move the pin.
 */
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

class PlainTensor {
  constructor(
    readonly type: string,
    readonly data: Float32Array,
    readonly dims: number[],
  ) {}
}

interface NativeSession {
  loadModel(buffer: ArrayBuffer, byteOffset: number, byteLength: number, options: object): void;
  /** A non-null fetch is a pre-allocated output the session writes into. */
  run(
    feeds: Record<string, unknown>,
    fetches: Record<string, unknown>,
    options: object,
  ): Record<string, { data: Float32Array }>;
}

/** Protocol-buffer writer for the few ONNX messages these graphs need. */
class Proto {
  private readonly bytes: number[] = [];
  private varint(v: number): void {
    if (v < 0) throw new Error('Proto: negative varints are not supported');
    while (v > 0x7f) {
      this.bytes.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    this.bytes.push(v);
  }
  int(field: number, v: number): this {
    this.varint(field << 3);
    this.varint(v);
    return this;
  }
  float(field: number, v: number): this {
    this.varint((field << 3) | 5);
    for (const b of new Uint8Array(Float32Array.of(v).buffer)) this.bytes.push(b);
    return this;
  }
  bytesField(field: number, data: Uint8Array): this {
    this.varint((field << 3) | 2);
    this.varint(data.length);
    for (const b of data) this.bytes.push(b);
    return this;
  }
  str(field: number, s: string): this {
    return this.bytesField(field, new TextEncoder().encode(s));
  }
  msg(field: number, m: Proto): this {
    return this.bytesField(field, m.done());
  }
  done(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

/** A float32 value's type; a dimension is a symbol (any size) or a fixed number. */
function valueInfo(name: string, dims: (string | number)[]): Proto {
  const shape = new Proto();
  for (const d of dims) shape.msg(1, typeof d === 'string' ? new Proto().str(2, d) : new Proto().int(1, d));
  return new Proto().str(1, name).msg(2, new Proto().msg(1, new Proto().int(1, 1).msg(2, shape)));
}

/** An ONNX model computing Y = op(A)·op(B) with Gemm's transA/transB. */
export function gemmModel(transA: boolean, transB: boolean): Uint8Array {
  const node = new Proto().str(1, 'A').str(1, 'B').str(2, 'Y').str(4, 'Gemm');
  node.msg(
    5,
    new Proto()
      .str(1, 'transA')
      .int(3, transA ? 1 : 0)
      .int(20, 2),
  );
  node.msg(
    5,
    new Proto()
      .str(1, 'transB')
      .int(3, transB ? 1 : 0)
      .int(20, 2),
  );
  const graph = new Proto()
    .msg(1, node)
    .str(2, 'gemm')
    .msg(11, valueInfo('A', transA ? ['k', 'm'] : ['m', 'k']))
    .msg(11, valueInfo('B', transB ? ['n', 'k'] : ['k', 'n']))
    .msg(12, valueInfo('Y', ['m', 'n']));
  return new Proto().int(1, 8).str(2, 'whetstone').msg(7, graph).msg(8, new Proto().str(1, '').int(2, 13)).done();
}

/** An ONNX model computing batched Y[b] = op(A[b])·op(B[b]) (Transpose + MatMul). */
export function bmmModel(transA: boolean, transB: boolean): Uint8Array {
  const graph = new Proto();
  const perm = (): Proto => {
    const attr = new Proto().str(1, 'perm');
    for (const v of [0, 2, 1]) attr.int(8, v);
    return attr.int(20, 7);
  };
  if (transA) graph.msg(1, new Proto().str(1, 'A').str(2, 'At').str(4, 'Transpose').msg(5, perm()));
  if (transB) graph.msg(1, new Proto().str(1, 'B').str(2, 'Bt').str(4, 'Transpose').msg(5, perm()));
  graph
    .msg(
      1,
      new Proto()
        .str(1, transA ? 'At' : 'A')
        .str(1, transB ? 'Bt' : 'B')
        .str(2, 'Y')
        .str(4, 'MatMul'),
    )
    .str(2, 'bmm')
    .msg(11, valueInfo('A', transA ? ['b', 'k', 'm'] : ['b', 'm', 'k']))
    .msg(11, valueInfo('B', transB ? ['b', 'n', 'k'] : ['b', 'k', 'n']))
    .msg(12, valueInfo('Y', ['b', 'm', 'n']));
  return new Proto().int(1, 8).str(2, 'whetstone').msg(7, graph).msg(8, new Proto().str(1, '').int(2, 13)).done();
}

export interface OrtGemm {
  /** Batched Y[b] = op(a[b])·op(b[b]) over 3-D tensors. */
  bmm(
    a: Float32Array,
    aDims: [number, number, number],
    b: Float32Array,
    bDims: [number, number, number],
    transA: boolean,
    transB: boolean,
  ): Float32Array;
  /**
   * Y[M,N] = op(a)·op(b), where op transposes when asked; shapes as stored. With `into` (exactly M·N values) the
   * session writes Y there and returns it, so no output is allocated.
   */
  gemm(
    a: Float32Array,
    aDims: [number, number],
    b: Float32Array,
    bDims: [number, number],
    transA: boolean,
    transB: boolean,
    into?: Float32Array,
  ): Float32Array;
}

type Feed = { type: string; dims: number[]; data: Float32Array; location: string; size: number };
/** Runs a session; outputs named in `into` are written into those arrays instead of fresh ones. */
type Run = (
  feeds: Record<string, Feed>,
  outputs: string[],
  into?: Record<string, Feed>,
) => Record<string, { data: Float32Array }>;

/** What this file uses of onnxruntime-node's private native binding (pinned version; see the module comment). */
export interface OrtBinding {
  InferenceSession: new () => NativeSession;
  initOrtOnce: (logLevel: number, tensor: unknown, isMainThread: boolean) => void;
}

/** onnxruntime-node's private native binding (`dist/binding.js`); throws when it cannot load here. */
export function loadOrtBinding(): OrtBinding {
  const root = path.dirname(require.resolve('onnxruntime-node/package.json'));
  return (require(path.join(root, 'dist/binding.js')) as { binding: OrtBinding }).binding;
}

let native: ((model: Uint8Array) => Run) | null | undefined;

/** Loads onnxruntime-node's native binding once; returns a session factory, or null when it cannot load here. */
function sessionFactory(): ((model: Uint8Array) => Run) | null {
  if (native !== undefined) return native;
  try {
    const binding = loadOrtBinding();
    // Outputs are built with this constructor. onnxruntime-common's Tensor rejects typed arrays of another realm
    // (the native side creates them in the main one; jest runs tests in a sandbox), and we only need the data.
    binding.initOrtOnce(2, PlainTensor, isMainThread);
    const options = {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    };
    native = (model) => {
      const s = new binding.InferenceSession();
      s.loadModel(model.buffer as ArrayBuffer, model.byteOffset, model.byteLength, options);
      return (feeds, outputs, into = {}) =>
        s.run(feeds, Object.fromEntries(outputs.map((o) => [o, into[o] ?? null])), {});
    };
  } catch {
    native = null;
  }
  return native;
}

// The native session reads {type, dims, data, location} and accepts any realm's typed array; ort.Tensor's
// `instanceof` check would reject arrays made in another realm (jest's sandbox), so feed plain objects.
const feed = (data: Float32Array, dims: number[]): Feed => ({
  type: 'float32',
  dims,
  data,
  location: 'cpu',
  size: data.length,
});

/** Sessions built on first use from their graph and kept by key. */
function sessionCache(create: (model: Uint8Array) => Run): (key: string, build: () => Uint8Array) => Run {
  const sessions = new Map<string, Run>();
  return (key, build) => {
    let s = sessions.get(key);
    if (!s) sessions.set(key, (s = create(build())));
    return s;
  };
}

let loaded: OrtGemm | null | undefined;

/** The cached ORT Gemm sessions, or null when onnxruntime-node cannot load on this machine. */
export function loadOrtGemm(): OrtGemm | null {
  if (loaded !== undefined) return loaded;
  const create = sessionFactory();
  if (!create) return (loaded = null);
  const cached = sessionCache(create);
  const session = (ta: boolean, tb: boolean, batched = false): Run =>
    cached(`${batched}${ta}${tb}`, () => (batched ? bmmModel(ta, tb) : gemmModel(ta, tb)));
  loaded = {
    gemm(a, aDims, b, bDims, transA, transB, into) {
      const dims = [transA ? aDims[1] : aDims[0], transB ? bDims[0] : bDims[1]];
      const out = into ? { Y: feed(into, dims) } : undefined;
      return session(transA, transB)({ A: feed(a, aDims), B: feed(b, bDims) }, ['Y'], out).Y!.data;
    },
    bmm(a, aDims, b, bDims, transA, transB) {
      return session(transA, transB, true)({ A: feed(a, aDims), B: feed(b, bDims) }, ['Y']).Y!.data;
    },
  };
  return loaded;
}

/** An ONNX attribute: an int, a float (`{ f }`), a string, or a list of ints. */
type Attr = number | { f: number } | string | number[];

/** A small ONNX graph writer (opset 20) for the fused elementwise kernels. */
class Graph {
  private readonly proto = new Proto();
  private readonly outputs: Proto[] = [];
  private next = 0;

  input(name: string, dims: (string | number)[]): string {
    this.proto.msg(11, valueInfo(name, dims));
    return name;
  }

  output(name: string, dims: (string | number)[]): void {
    this.outputs.push(valueInfo(name, dims));
  }

  /** Adds a node and returns its first output; `outs` names graph outputs, otherwise it is a fresh temporary. */
  op(type: string, inputs: string[], attrs: Record<string, Attr> = {}, outs: string[] = [`t${this.next++}`]): string {
    const node = new Proto();
    for (const i of inputs) node.str(1, i);
    for (const o of outs) node.str(2, o);
    node.str(4, type);
    for (const [name, v] of Object.entries(attrs)) {
      const a = new Proto().str(1, name);
      if (typeof v === 'string') a.str(4, v).int(20, 3);
      else if (Array.isArray(v)) {
        for (const x of v) a.int(8, x);
        a.int(20, 7);
      } else if (typeof v === 'number') a.int(3, v).int(20, 2);
      else a.float(2, v.f).int(20, 1);
      node.msg(5, a);
    }
    this.proto.msg(1, node);
    return outs[0]!;
  }

  /** A float32 scalar constant. */
  scalar(v: number): string {
    return this.constant(new Proto().int(2, 1).float(4, v));
  }

  /** A 1-D int64 constant (reduction axes). */
  axes(...v: number[]): string {
    const t = new Proto().int(1, v.length).int(2, 7);
    for (const x of v) t.int(7, x);
    return this.constant(t);
  }

  private constant(tensorProto: Proto): string {
    const value = new Proto().str(1, 'value').msg(5, tensorProto).int(20, 4);
    const name = `c${this.next++}`;
    this.proto.msg(1, new Proto().str(2, name).str(4, 'Constant').msg(5, value));
    return name;
  }

  model(): Uint8Array {
    for (const o of this.outputs) this.proto.msg(12, o);
    this.proto.str(2, 'fused');
    return new Proto()
      .int(1, 8)
      .str(2, 'whetstone')
      .msg(7, this.proto)
      .msg(8, new Proto().str(1, '').int(2, 20))
      .done();
  }
}

const GELU_C = Math.sqrt(2 / Math.PI);

/** LayerNorm over the last axis: Y, and the row Mean and InvStdDev the backward pass needs. */
function layerNormModel(eps: number): Uint8Array {
  const g = new Graph();
  g.op(
    'LayerNormalization',
    [g.input('X', ['m', 'n']), g.input('G', ['n']), g.input('B', ['n'])],
    { axis: 1, epsilon: { f: eps } },
    ['Y', 'Mean', 'Rstd'],
  );
  g.output('Y', ['m', 'n']);
  g.output('Mean', ['m', 1]);
  g.output('Rstd', ['m', 1]);
  return g.model();
}

/** LayerNorm's backward: DX, and (when `params`) DG and DB, from X, G, DY and the saved row statistics. */
function layerNormBackwardModel(input: boolean, params: boolean): Uint8Array {
  const g = new Graph();
  const [X, G, DY, mean, rstd] = [
    g.input('X', ['m', 'n']),
    g.input('G', ['n']),
    g.input('DY', ['m', 'n']),
    g.input('Mean', ['m', 1]),
    g.input('Rstd', ['m', 1]),
  ];
  const xhat = g.op('Mul', [g.op('Sub', [X, mean]), rstd]);
  if (params) {
    const rows = g.axes(0);
    g.op('ReduceSum', [g.op('Mul', [DY, xhat]), rows], { keepdims: 0 }, ['DG']);
    g.op('ReduceSum', [DY, rows], { keepdims: 0 }, ['DB']);
    g.output('DG', ['n']);
    g.output('DB', ['n']);
  }
  if (input) {
    const cols = g.axes(1);
    const dh = g.op('Mul', [DY, G]);
    const meanDh = g.op('ReduceMean', [dh, cols], { keepdims: 1 });
    const meanDhX = g.op('ReduceMean', [g.op('Mul', [dh, xhat]), cols], { keepdims: 1 });
    g.op('Mul', [g.op('Sub', [g.op('Sub', [dh, meanDh]), g.op('Mul', [xhat, meanDhX])]), rstd], {}, ['DX']);
    g.output('DX', ['m', 'n']);
  }
  return g.model();
}

/** GELU (tanh form): Y, and with `derivative` also D = dY/dX for the backward pass. */
function geluModel(derivative: boolean): Uint8Array {
  const g = new Graph();
  const X = g.input('X', ['n']);
  g.output('Y', ['n']);
  if (!derivative) {
    g.op('Gelu', [X], { approximate: 'tanh' }, ['Y']);
    return g.model();
  }
  const x2 = g.op('Mul', [X, X]);
  const t = g.op('Tanh', [
    g.op('Mul', [X, g.op('Add', [g.scalar(GELU_C), g.op('Mul', [g.scalar(GELU_C * 0.044715), x2])])]),
  ]);
  const half = g.op('Add', [g.scalar(0.5), g.op('Mul', [g.scalar(0.5), t])]);
  g.op('Mul', [X, half], {}, ['Y']);
  const slope = g.op('Add', [g.scalar(0.5 * GELU_C), g.op('Mul', [g.scalar(0.5 * GELU_C * 3 * 0.044715), x2])]);
  const sech2 = g.op('Sub', [g.scalar(1), g.op('Mul', [t, t])]);
  g.op('Add', [half, g.op('Mul', [g.op('Mul', [X, sech2]), slope])], {}, ['D']);
  g.output('D', ['n']);
  return g.model();
}

/** Bias: Y = X + B over rows, and its backward DB = Σ_rows DY. */
function biasModel(backward: boolean): Uint8Array {
  const g = new Graph();
  if (backward) {
    g.op('ReduceSum', [g.input('DY', ['m', 'n']), g.axes(0)], { keepdims: 0 }, ['DB']);
    g.output('DB', ['n']);
  } else {
    g.op('Add', [g.input('X', ['m', 'n']), g.input('B', ['n'])], {}, ['Y']);
    g.output('Y', ['m', 'n']);
  }
  return g.model();
}

/** LoRA linear forward: Y = X·W + (s·X·A)·B, and XA = s·X·A for the backward pass. */
function loraModel(): Uint8Array {
  const g = new Graph();
  const [X, W, A, B, S] = [
    g.input('X', ['m', 'k']),
    g.input('W', ['k', 'n']),
    g.input('A', ['k', 'r']),
    g.input('B', ['r', 'n']),
    g.input('S', [1]),
  ];
  const xa = g.op('Mul', [g.op('MatMul', [X, A]), S], {}, ['XA']);
  g.op('Gemm', [xa, B, g.op('MatMul', [X, W])], {}, ['Y']);
  g.output('Y', ['m', 'n']);
  g.output('XA', ['m', 'r']);
  return g.model();
}

/** LoRA linear backward: the gradients named in `wanted` (DX, DW, DA, DB) from G = dY. */
function loraBackwardModel(wanted: readonly string[]): Uint8Array {
  const g = new Graph();
  const [X, W, A, B, XA, G, S] = [
    g.input('X', ['m', 'k']),
    g.input('W', ['k', 'n']),
    g.input('A', ['k', 'r']),
    g.input('B', ['r', 'n']),
    g.input('XA', ['m', 'r']),
    g.input('G', ['m', 'n']),
    g.input('S', [1]),
  ];
  const gb =
    wanted.includes('DA') || wanted.includes('DX') ? g.op('Mul', [g.op('Gemm', [G, B], { transB: 1 }), S]) : '';
  const grads: Record<string, () => [string, (string | number)[]]> = {
    DB: () => [g.op('Gemm', [XA, G], { transA: 1 }, ['DB']), ['r', 'n']],
    DA: () => [g.op('Gemm', [X, gb], { transA: 1 }, ['DA']), ['k', 'r']],
    DW: () => [g.op('Gemm', [X, G], { transA: 1 }, ['DW']), ['k', 'n']],
    DX: () => [g.op('Gemm', [gb, A, g.op('Gemm', [G, W], { transB: 1 })], { transB: 1 }, ['DX']), ['m', 'k']],
  };
  for (const name of wanted) g.output(...grads[name]!());
  return g.model();
}

/** One AdamW update over a flat parameter: new W, M, V from W, G, M, V and the scalars LR, C1, C2 (bias corrections). */
function adamModel(beta1: number, beta2: number, eps: number, weightDecay: number): Uint8Array {
  const g = new Graph();
  const [W, G, M, V] = ['W', 'G', 'M', 'V'].map((n) => g.input(n, ['n']));
  const [LR, C1, C2] = ['LR', 'C1', 'C2'].map((n) => g.input(n, [1]));
  const m = g.op('Add', [g.op('Mul', [g.scalar(beta1), M!]), g.op('Mul', [g.scalar(1 - beta1), G!])], {}, ['M2']);
  const v = g.op(
    'Add',
    [g.op('Mul', [g.scalar(beta2), V!]), g.op('Mul', [g.scalar(1 - beta2), g.op('Mul', [G!, G!])])],
    {},
    ['V2'],
  );
  let u = g.op('Div', [g.op('Div', [m, C1!]), g.op('Add', [g.op('Sqrt', [g.op('Div', [v, C2!])]), g.scalar(eps)])]);
  if (weightDecay !== 0) u = g.op('Add', [u, g.op('Mul', [g.scalar(weightDecay), W!])]);
  g.op('Sub', [W!, g.op('Mul', [LR!, u])], {}, ['W2']);
  for (const n of ['W2', 'M2', 'V2']) g.output(n, ['n']);
  return g.model();
}

/** Fused elementwise kernels as cached ORT sessions; every array is row-major float32 and every result is fresh. */
export interface OrtFused {
  layerNorm(
    x: Float32Array,
    gain: Float32Array,
    bias: Float32Array,
    rows: number,
    cols: number,
    eps: number,
  ): { y: Float32Array; mean: Float32Array; rstd: Float32Array };
  layerNormBackward(
    x: Float32Array,
    gain: Float32Array,
    dy: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    rows: number,
    cols: number,
    input: boolean,
    params: boolean,
  ): { dx?: Float32Array; dgain?: Float32Array; dbias?: Float32Array };
  /** y = GELU(x), and dy/dx when `derivative`. */
  gelu(x: Float32Array, derivative: boolean): { y: Float32Array; d?: Float32Array };
  addBias(x: Float32Array, bias: Float32Array, rows: number, cols: number): Float32Array;
  /** Σ over rows of dy[rows, cols]. */
  biasGrad(dy: Float32Array, rows: number, cols: number): Float32Array;
  lora(
    x: Float32Array,
    w: Float32Array,
    a: Float32Array,
    b: Float32Array,
    s: number,
    m: number,
    k: number,
    r: number,
    n: number,
  ): { y: Float32Array; xa: Float32Array };
  loraBackward(
    x: Float32Array,
    w: Float32Array,
    a: Float32Array,
    b: Float32Array,
    xa: Float32Array,
    g: Float32Array,
    s: number,
    dims: { m: number; k: number; r: number; n: number },
    wanted: { x: boolean; w: boolean; a: boolean; b: boolean },
  ): { dx?: Float32Array; dw?: Float32Array; da?: Float32Array; db?: Float32Array };
  /** One AdamW step, updating w, m and v in place. */
  adam(
    w: Float32Array,
    g: Float32Array,
    m: Float32Array,
    v: Float32Array,
    hp: { lr: number; c1: number; c2: number; beta1: number; beta2: number; eps: number; weightDecay: number },
  ): void;
}

let fused: OrtFused | null | undefined;

/** The fused elementwise ORT kernels, or null when onnxruntime-node cannot load on this machine. */
export function loadOrtFused(): OrtFused | null {
  if (fused !== undefined) return fused;
  const create = sessionFactory();
  if (!create) return (fused = null);
  const session = sessionCache(create);
  const scalar = (v: number): Feed => feed(Float32Array.of(v), [1]);
  fused = {
    layerNorm(x, gain, bias, rows, cols, eps) {
      const out = session(`ln${eps}`, () => layerNormModel(eps))(
        { X: feed(x, [rows, cols]), G: feed(gain, [cols]), B: feed(bias, [cols]) },
        ['Y', 'Mean', 'Rstd'],
      );
      return { y: out.Y!.data, mean: out.Mean!.data, rstd: out.Rstd!.data };
    },
    layerNormBackward(x, gain, dy, mean, rstd, rows, cols, input, params) {
      const outputs = [...(input ? ['DX'] : []), ...(params ? ['DG', 'DB'] : [])];
      const out = session(`lnb${input}${params}`, () => layerNormBackwardModel(input, params))(
        {
          X: feed(x, [rows, cols]),
          G: feed(gain, [cols]),
          DY: feed(dy, [rows, cols]),
          Mean: feed(mean, [rows, 1]),
          Rstd: feed(rstd, [rows, 1]),
        },
        outputs,
      );
      return { dx: out.DX?.data, dgain: out.DG?.data, dbias: out.DB?.data };
    },
    gelu(x, derivative) {
      const out = session(`gelu${derivative}`, () => geluModel(derivative))(
        { X: feed(x, [x.length]) },
        derivative ? ['Y', 'D'] : ['Y'],
      );
      return { y: out.Y!.data, d: out.D?.data };
    },
    addBias(x, bias, rows, cols) {
      return session('bias', () => biasModel(false))({ X: feed(x, [rows, cols]), B: feed(bias, [cols]) }, ['Y']).Y!
        .data;
    },
    biasGrad(dy, rows, cols) {
      return session('biasb', () => biasModel(true))({ DY: feed(dy, [rows, cols]) }, ['DB']).DB!.data;
    },
    lora(x, w, a, b, s, m, k, r, n) {
      const out = session('lora', loraModel)(
        { X: feed(x, [m, k]), W: feed(w, [k, n]), A: feed(a, [k, r]), B: feed(b, [r, n]), S: scalar(s) },
        ['Y', 'XA'],
      );
      return { y: out.Y!.data, xa: out.XA!.data };
    },
    loraBackward(x, w, a, b, xa, g, s, { m, k, r, n }, want) {
      const names = (['x', 'w', 'a', 'b'] as const).filter((p) => want[p]).map((p) => `D${p.toUpperCase()}`);
      if (names.length === 0) return {};
      const out = session(`lorab${names.join()}`, () => loraBackwardModel(names))(
        {
          X: feed(x, [m, k]),
          W: feed(w, [k, n]),
          A: feed(a, [k, r]),
          B: feed(b, [r, n]),
          XA: feed(xa, [m, r]),
          G: feed(g, [m, n]),
          S: scalar(s),
        },
        names,
      );
      return { dx: out.DX?.data, dw: out.DW?.data, da: out.DA?.data, db: out.DB?.data };
    },
    adam(w, g, m, v, { lr, c1, c2, beta1, beta2, eps, weightDecay }) {
      const n = [w.length];
      const [W, M, V] = [feed(w, n), feed(m, n), feed(v, n)];
      // Every node is elementwise and reads index i before writing it, so the outputs can alias the inputs.
      session(`adam${beta1},${beta2},${eps},${weightDecay}`, () => adamModel(beta1, beta2, eps, weightDecay))(
        { W, G: feed(g, n), M, V, LR: scalar(lr), C1: scalar(c1), C2: scalar(c2) },
        ['W2', 'M2', 'V2'],
        { W2: W, M2: M, V2: V },
      );
    },
  };
  return fused;
}
