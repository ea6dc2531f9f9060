import { readFileSync, writeFileSync } from 'node:fs';

/**
 * The safetensors format as Hugging Face defines it: an 8-byte little-endian header length N, N bytes of JSON
 * `{name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {string: string}}`, then the tensors' bytes,
 * little-endian, at those offsets from the end of the header. Read directly: nothing is ever unpickled.
 * F32 is read as is; F16, BF16 and integer tensors (such as BERT's `position_ids`) are converted to float32.
 */
export interface NamedTensor {
  shape: number[];
  data: Float32Array;
  /** The dtype stored in the file. */
  dtype: string;
}

export interface SafetensorsFile {
  tensors: Map<string, NamedTensor>;
  metadata: Record<string, string>;
}

/** A file that is not valid safetensors: the message names the file and what was expected. */
export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError';
  }
}

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function decode(bytes: Uint8Array, begin: number, entry: HeaderEntry, name: string, file: string): Float32Array {
  const n = entry.shape.reduce((a, b) => a * b, 1);
  const size = BYTES[entry.dtype];
  if (size === undefined)
    throw new CheckpointError(
      `${file}: tensor ${name} has dtype ${entry.dtype}; supported are F32, F16, BF16 and the integer types`,
    );
  const [from, to] = entry.data_offsets;
  if (to - from !== n * size)
    throw new CheckpointError(
      `${file}: tensor ${name} spans ${to - from} bytes, expected ${n * size} for shape [${entry.shape.join(', ')}] ${entry.dtype}`,
    );
  if (begin + to > bytes.length)
    throw new CheckpointError(
      `${file}: truncated: tensor ${name} ends at byte ${begin + to}, the file has ${bytes.length} bytes`,
    );
  const view = new DataView(bytes.buffer, bytes.byteOffset + begin + from, n * size);
  const out = new Float32Array(n);
  if (entry.dtype === 'F32') {
    // A copy of the bytes is aligned; the format (and every machine Node runs on here) is little-endian.
    const start = bytes.byteOffset + begin + from;
    return new Float32Array(bytes.buffer.slice(start, start + n * 4));
  }
  if (entry.dtype === 'F16') for (let i = 0; i < n; i++) out[i] = f16ToF32(view.getUint16(i * 2, true));
  else if (entry.dtype === 'I64') for (let i = 0; i < n; i++) out[i] = Number(view.getBigInt64(i * 8, true));
  else if (entry.dtype === 'I32') for (let i = 0; i < n; i++) out[i] = view.getInt32(i * 4, true);
  else if (entry.dtype === 'I16') for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true);
  else if (entry.dtype === 'I8') for (let i = 0; i < n; i++) out[i] = view.getInt8(i);
  else if (entry.dtype === 'U8' || entry.dtype === 'BOOL') for (let i = 0; i < n; i++) out[i] = view.getUint8(i);
  else {
    const u = new Uint32Array(1);
    const f = new Float32Array(u.buffer);
    for (let i = 0; i < n; i++) {
      u[0] = view.getUint16(i * 2, true) << 16;
      out[i] = f[0]!;
    }
  }
  return out;
}

/** Parses safetensors bytes; `file` names the source in errors. */
export function parseSafetensors(bytes: Uint8Array, file = 'model.safetensors'): SafetensorsFile {
  if (bytes.length < 8) throw new CheckpointError(`${file}: truncated: ${bytes.length} bytes, expected at least 8`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > bytes.length)
    throw new CheckpointError(
      `${file}: truncated: the header says ${headerLength} bytes of JSON, the file has ${bytes.length - 8} after the length`,
    );
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<string, unknown>;
  } catch {
    throw new CheckpointError(`${file}: the header is not JSON; expected a safetensors file`);
  }
  const tensors = new Map<string, NamedTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = (value ?? {}) as Record<string, string>;
      continue;
    }
    const entry = value as HeaderEntry;
    if (!entry || !Array.isArray(entry.shape) || !Array.isArray(entry.data_offsets))
      throw new CheckpointError(`${file}: tensor ${name} has no shape or data_offsets`);
    tensors.set(name, {
      shape: entry.shape,
      dtype: entry.dtype,
      data: decode(bytes, 8 + headerLength, entry, name, file),
    });
  }
  return { tensors, metadata };
}

export function readSafetensors(path: string): SafetensorsFile {
  return parseSafetensors(readFileSync(path), path);
}

/**
 * Serialises float32 tensors as safetensors (names sorted, header padded with spaces to 8 bytes, as the
 * reference writer does), so `safetensors.torch.load_file` and PEFT read them.
 */
export function encodeSafetensors(
  tensors: ReadonlyMap<string, { shape: readonly number[]; data: Float32Array }>,
  metadata?: Record<string, string>,
): Uint8Array {
  const names = [...tensors.keys()].sort();
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const name of names) {
    const t = tensors.get(name)!;
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`safetensors: ${name} has ${t.data.length} values for [${t.shape}]`);
    header[name] = { dtype: 'F32', shape: [...t.shape], data_offsets: [offset, offset + n * 4] };
    offset += n * 4;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const name of names) {
    const data = tensors.get(name)!.data;
    for (let i = 0; i < data.length; i++) view.setFloat32(at + i * 4, data[i]!, true);
    at += data.length * 4;
  }
  return out;
}

export function writeSafetensors(
  path: string,
  tensors: ReadonlyMap<string, { shape: readonly number[]; data: Float32Array }>,
  metadata?: Record<string, string>,
): void {
  writeFileSync(path, encodeSafetensors(tensors, metadata));
}
