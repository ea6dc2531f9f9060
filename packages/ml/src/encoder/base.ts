import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadGlove } from '../assets/load';
import { tensor } from '../nn';
import {
  ENCODER_CONFIG,
  initChain,
  initClassHead,
  initRelationHead,
  initWeights,
  type EncoderConfig,
  type Weights,
} from './model';

export const ENCODER_BASE_FILE = path.resolve(__dirname, '../../assets/encoder-base.i8');
const FORMAT = 'whetstone-encoder-base/1';

export interface EncoderBaseMeta {
  format: typeof FORMAT;
  config: EncoderConfig;
  /** How the weights were made (script, data, steps, seed, held-out figures). */
  training: Record<string, unknown>;
}

/**
 * The base's file: a uint32 header length, a JSON header `{meta, tensors:
 * {name: {shape, offset}}}`, then per tensor a float32 scale per row followed
 * by one int8 per value (row-wise symmetric quantisation: 1/4 of float32).
 * The dequantised values are the base; pretraining ends by quantising, so
 * what is measured is what ships.
 */
export function encodeEncoderBase(meta: Omit<EncoderBaseMeta, 'format'>, w: Weights): Uint8Array {
  const names = Object.keys(w).sort();
  const index: Record<string, { shape: number[]; offset: number }> = {};
  const parts: Buffer[] = [];
  let offset = 0;
  for (const name of names) {
    const t = w[name]!;
    const rows = t.shape.length === 1 ? 1 : t.shape[0]!;
    const cols = t.data.length / Math.max(1, rows);
    const scales = new Float32Array(rows);
    const q = new Int8Array(t.data.length);
    for (let r = 0; r < rows; r++) {
      let max = 0;
      for (let c = 0; c < cols; c++) max = Math.max(max, Math.abs(t.data[r * cols + c]!));
      const s = max / 127 || 1;
      scales[r] = s;
      for (let c = 0; c < cols; c++) q[r * cols + c] = Math.round(t.data[r * cols + c]! / s);
    }
    index[name] = { shape: [...t.shape], offset };
    const bytes = Buffer.concat([Buffer.from(scales.buffer), Buffer.from(q.buffer)]);
    const padded = Buffer.alloc(Math.ceil(bytes.length / 4) * 4);
    bytes.copy(padded);
    parts.push(padded);
    offset += padded.length;
  }
  const header = Buffer.from(JSON.stringify({ meta: { format: FORMAT, ...meta }, tensors: index }));
  const head = Buffer.alloc(Math.ceil((4 + header.length) / 4) * 4);
  head.writeUInt32LE(header.length, 0);
  header.copy(head, 4);
  return new Uint8Array(Buffer.concat([head, ...parts]));
}

export function decodeEncoderBase(bytes: Uint8Array): { meta: EncoderBaseMeta; weights: Weights } {
  const buf = Buffer.from(bytes);
  const length = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + length).toString('utf8')) as {
    meta: EncoderBaseMeta;
    tensors: Record<string, { shape: number[]; offset: number }>;
  };
  if (header.meta?.format !== FORMAT) throw new Error('not a whetstone encoder base file');
  const start = Math.ceil((4 + length) / 4) * 4;
  const weights: Weights = {};
  for (const [name, { shape, offset }] of Object.entries(header.tensors)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const rows = shape.length === 1 ? 1 : shape[0]!;
    const cols = n / Math.max(1, rows);
    const o = start + offset;
    const scales = new Float32Array(buf.buffer.slice(buf.byteOffset + o, buf.byteOffset + o + rows * 4));
    const q = new Int8Array(buf.buffer.slice(buf.byteOffset + o + rows * 4, buf.byteOffset + o + rows * 4 + n));
    const data = new Float32Array(n);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) data[r * cols + c] = q[r * cols + c]! * scales[r]!;
    weights[name] = tensor(data, shape);
  }
  return { meta: header.meta, weights };
}

const BASE_SEED = 20260101;

let cached: { config: EncoderConfig; weights: Weights; meta: EncoderBaseMeta | null } | undefined;

/**
 * The frozen base of `whetstone-extract-base`'s encoder: the pretrained
 * weights in assets/encoder-base.i8 (scripts/build-encoder.ts) when present,
 * else the seeded initialisation. A base pretrained before the relation head
 * existed gets that head seeded (it is trained only by fine-tuning). Callers
 * must not modify the tensors.
 */
export function loadEncoderBase(): { config: EncoderConfig; weights: Weights; meta: EncoderBaseMeta | null } {
  if (cached) return cached;
  if (existsSync(ENCODER_BASE_FILE)) {
    const { meta, weights } = decodeEncoderBase(readFileSync(ENCODER_BASE_FILE));
    cached = {
      config: meta.config,
      weights: {
        ...initRelationHead(meta.config, loadGlove(), BASE_SEED),
        ...initClassHead(meta.config, loadGlove(), BASE_SEED),
        ...initChain(),
        ...weights,
      },
      meta,
    };
  } else {
    cached = { config: ENCODER_CONFIG, weights: initWeights(ENCODER_CONFIG, loadGlove(), BASE_SEED), meta: null };
  }
  return cached;
}
