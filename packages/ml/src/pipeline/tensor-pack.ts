import { gunzipSync, gzipSync } from 'node:zlib';
import { decodeTensors, encodeTensors } from '../nn';

/** Classifier tables travel as base64 strings inside a tensor file's JSON header; these convert them. */
export const b64 = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
export const f32 = (s: string) => {
  const buf = Buffer.from(s, 'base64');
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
};

export type TensorRecord = Record<string, { shape: number[]; data: Float32Array }>;

/** Weights and training states are gzip'd tensor files: a JSON header (`meta`) and raw float32 tensors. */
export function packTensors<M>(meta: M, tensors: TensorRecord, compress = true): Uint8Array {
  const raw = encodeTensors({ meta, tensors });
  return compress ? new Uint8Array(gzipSync(raw, { level: 1 })) : raw;
}

/** Reads a tensor file, gzip'd (bundles) or not (training states, whose float data does not compress). */
export function unpackTensors<M>(bytes: Uint8Array): { meta: M; tensors: TensorRecord } | null {
  try {
    const gzipped = bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
    return decodeTensors<M>(gzipped ? gunzipSync(Buffer.from(bytes)) : bytes);
  } catch {
    return null;
  }
}
