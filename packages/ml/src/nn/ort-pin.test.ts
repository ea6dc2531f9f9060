import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadOrtBinding, loadOrtGemm } from './ort';

// ort.ts reaches onnxruntime-node's private native binding (see its module comment), so the version is pinned and an
// upgrade that moves or changes the binding must fail here, not fall back silently to the TypeScript loops.
describe('the pinned onnxruntime-node', () => {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const pinned = pkg.dependencies['onnxruntime-node'];

  it('when package.json names onnxruntime-node, then it pins one exact version', () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('when onnxruntime-node is installed, then its version is the pinned one', () => {
    const installed = (require('onnxruntime-node/package.json') as { version: string }).version;
    expect(installed).toBe(pinned);
  });

  it('when the private binding loads, then it exposes the calls ort.ts makes', () => {
    const binding = loadOrtBinding();
    expect(typeof binding.initOrtOnce).toBe('function');
    expect(typeof binding.InferenceSession).toBe('function');
    expect(typeof binding.InferenceSession.prototype.loadModel).toBe('function');
    expect(typeof binding.InferenceSession.prototype.run).toBe('function');
  });

  it('when a product runs through the binding, then ORT computes it (no fallback)', () => {
    const ort = loadOrtGemm();
    expect(ort).not.toBeNull();
    // [[1, 2, 3], [4, 5, 6]] · [[1, 0], [0, 1], [1, 1]], then the same with B given transposed.
    const a = Float32Array.of(1, 2, 3, 4, 5, 6);
    const b = Float32Array.of(1, 0, 0, 1, 1, 1);
    expect([...ort!.gemm(a, [2, 3], b, [3, 2], false, false)]).toEqual([4, 5, 10, 11]);
    const bT = Float32Array.of(1, 0, 1, 0, 1, 1);
    expect([...ort!.gemm(a, [2, 3], bT, [2, 3], false, true)]).toEqual([4, 5, 10, 11]);
  });
});
