/**
 * Matmul kernels as cached onnxruntime-node sessions: one `Gemm` graph per
 * transpose variant, with symbolic dimensions so every shape reuses it.
 * ORT's public `run` is promise-based, but its native session runs
 * synchronously underneath; calling the native session directly keeps the
 * autograd tape synchronous. One intra-op thread (faster than two here).
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
  run(feeds: Record<string, unknown>, fetches: Record<string, null>, options: object): Record<string, { data: Float32Array }>;
}

/** Protocol-buffer writer for the few ONNX messages a Gemm graph needs. */
class Proto {
  private readonly bytes: number[] = [];
  private varint(v: number): void {
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

function valueInfo(name: string, dims: string[]): Proto {
  const shape = new Proto();
  for (const d of dims) shape.msg(1, new Proto().str(2, d));
  return new Proto().str(1, name).msg(2, new Proto().msg(1, new Proto().int(1, 1).msg(2, shape)));
}

/** An ONNX model computing Y = op(A)·op(B) with Gemm's transA/transB. */
export function gemmModel(transA: boolean, transB: boolean): Uint8Array {
  const node = new Proto().str(1, 'A').str(1, 'B').str(2, 'Y').str(4, 'Gemm');
  node.msg(5, new Proto().str(1, 'transA').int(3, transA ? 1 : 0).int(20, 2));
  node.msg(5, new Proto().str(1, 'transB').int(3, transB ? 1 : 0).int(20, 2));
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
    .msg(1, new Proto().str(1, transA ? 'At' : 'A').str(1, transB ? 'Bt' : 'B').str(2, 'Y').str(4, 'MatMul'))
    .str(2, 'bmm')
    .msg(11, valueInfo('A', transA ? ['b', 'k', 'm'] : ['b', 'm', 'k']))
    .msg(11, valueInfo('B', transB ? ['b', 'n', 'k'] : ['b', 'k', 'n']))
    .msg(12, valueInfo('Y', ['b', 'm', 'n']));
  return new Proto().int(1, 8).str(2, 'whetstone').msg(7, graph).msg(8, new Proto().str(1, '').int(2, 13)).done();
}

export interface OrtGemm {
  /** Batched Y[b] = op(a[b])·op(b[b]) over 3-D tensors. */
  bmm(a: Float32Array, aDims: [number, number, number], b: Float32Array, bDims: [number, number, number], transA: boolean, transB: boolean): Float32Array;
  /** Y[M,N] = op(a)·op(b), where op transposes when asked; shapes as stored. */
  gemm(a: Float32Array, aDims: [number, number], b: Float32Array, bDims: [number, number], transA: boolean, transB: boolean): Float32Array;
}

let loaded: OrtGemm | null | undefined;

/** The cached ORT Gemm sessions, or null when onnxruntime-node cannot load on this machine. */
export function loadOrtGemm(): OrtGemm | null {
  if (loaded !== undefined) return loaded;
  try {
    const root = path.dirname(require.resolve('onnxruntime-node/package.json'));
    const { binding } = require(path.join(root, 'dist/binding.js')) as {
      binding: { InferenceSession: new () => NativeSession; initOrtOnce: (logLevel: number, tensor: unknown, isMainThread: boolean) => void };
    };
    // Outputs are built with this constructor. onnxruntime-common's Tensor rejects typed arrays of another realm
    // (the native side creates them in the main one; jest runs tests in a sandbox), and we only need the data.
    binding.initOrtOnce(2, PlainTensor, isMainThread);
    const options = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' };
    const sessions = new Map<string, NativeSession>();
    const session = (ta: boolean, tb: boolean, batched = false): NativeSession => {
      const key = `${batched}${ta}${tb}`;
      let s = sessions.get(key);
      if (!s) {
        const model = batched ? bmmModel(ta, tb) : gemmModel(ta, tb);
        s = new binding.InferenceSession();
        s.loadModel(model.buffer as ArrayBuffer, model.byteOffset, model.byteLength, options);
        sessions.set(key, s);
      }
      return s;
    };
    // The native session reads {type, dims, data, location} and accepts any realm's typed array; ort.Tensor's
    // `instanceof` check would reject arrays made in another realm (jest's sandbox), so feed plain objects.
    const feed = (data: Float32Array, dims: number[]) => ({ type: 'float32', dims, data, location: 'cpu', size: data.length });
    loaded = {
      gemm(a, aDims, b, bDims, transA, transB) {
        const out = session(transA, transB).run({ A: feed(a, aDims), B: feed(b, bDims) }, { Y: null }, {});
        return out.Y!.data;
      },
      bmm(a, aDims, b, bDims, transA, transB) {
        return session(transA, transB, true).run({ A: feed(a, aDims), B: feed(b, bDims) }, { Y: null }, {}).Y!.data;
      },
    };
  } catch {
    loaded = null;
  }
  return loaded;
}
