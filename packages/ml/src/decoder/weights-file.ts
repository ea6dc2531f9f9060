import { decodeTensors, encodeTensors, tensor } from '../nn';
import type { DecoderConfig, LoraAdapter, LinearModule, Weights } from './model';

export interface BaseMeta {
  format: 'whetstone-decoder-base/1';
  name: string;
  config: DecoderConfig;
  tokenizer: string;
  training: Record<string, unknown>;
}

export function encodeWeights(meta: BaseMeta, w: Weights): Uint8Array {
  return encodeTensors({
    meta,
    tensors: Object.fromEntries(Object.entries(w).map(([k, t]) => [k, { shape: [...t.shape], data: t.data }])),
  });
}

export function decodeWeights(bytes: Uint8Array): { meta: BaseMeta; weights: Weights } {
  const file = decodeTensors<BaseMeta>(bytes);
  if (file.meta?.format !== 'whetstone-decoder-base/1') throw new Error('not a whetstone decoder base file');
  return {
    meta: file.meta,
    weights: Object.fromEntries(Object.entries(file.tensors).map(([k, t]) => [k, tensor(t.data, t.shape)])),
  };
}

export function adapterTensors(adapter: LoraAdapter): Record<string, { shape: number[]; data: Float32Array }> {
  return Object.fromEntries(
    Object.entries(adapter.tensors).map(([k, t]) => [k, { shape: [...t.shape], data: t.data.slice() }]),
  );
}

export function adapterFrom(
  rank: number,
  alpha: number,
  targets: LinearModule[],
  tensors: Record<string, { shape: number[]; data: Float32Array }>,
  requiresGrad: boolean,
): LoraAdapter {
  const out: Weights = {};
  for (const [k, t] of Object.entries(tensors))
    if (k.endsWith('.A') || k.endsWith('.B')) out[k] = tensor(t.data, t.shape, requiresGrad);
  return { rank, alpha, targets, tensors: out };
}
