/**
 * Safetensors-style container: a uint32 header length, a JSON header
 * `{meta, tensors: {name: {shape, offset}}}`, then raw little-endian float32.
 */
export interface TensorFile<M> {
  meta: M;
  tensors: Record<string, { shape: number[]; data: Float32Array }>;
}

export function encodeTensors<M>(file: TensorFile<M>): Uint8Array {
  const names = Object.keys(file.tensors).sort();
  let offset = 0;
  const index: Record<string, { shape: number[]; offset: number }> = {};
  for (const name of names) {
    index[name] = { shape: file.tensors[name]!.shape, offset };
    offset += file.tensors[name]!.data.length;
  }
  const header = new TextEncoder().encode(JSON.stringify({ meta: file.meta, tensors: index }));
  const headerPadded = Math.ceil((4 + header.length) / 4) * 4;
  const out = new Uint8Array(headerPadded + offset * 4);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  const body = new Float32Array(out.buffer, headerPadded, offset);
  for (const name of names) body.set(file.tensors[name]!.data, index[name]!.offset);
  return out;
}

export function decodeTensors<M>(bytes: Uint8Array): TensorFile<M> {
  if (bytes.length < 4) throw new Error('tensor file: truncated');
  const copy = new Uint8Array(bytes);
  const headerLength = new DataView(copy.buffer).getUint32(0, true);
  if (4 + headerLength > copy.length) throw new Error('tensor file: bad header length');
  const header = JSON.parse(new TextDecoder().decode(copy.subarray(4, 4 + headerLength))) as {
    meta: M;
    tensors: Record<string, { shape: number[]; offset: number }>;
  };
  const start = Math.ceil((4 + headerLength) / 4) * 4;
  const tensors: TensorFile<M>['tensors'] = {};
  for (const [name, { shape, offset }] of Object.entries(header.tensors)) {
    const n = shape.reduce((a, b) => a * b, 1);
    if (start + (offset + n) * 4 > copy.length) throw new Error(`tensor file: ${name} is truncated`);
    tensors[name] = { shape, data: new Float32Array(copy.buffer, start + offset * 4, n).slice() };
  }
  return { meta: header.meta, tensors };
}
