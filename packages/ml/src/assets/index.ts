import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Word vectors shipped in the repository (no download at run time). */
export interface Embeddings {
  dim: number;
  vector(word: string): Float32Array | null;
  has(word: string): boolean;
  /** Cosine similarity; 0 when either word is unknown. */
  similarity(a: string, b: string): number;
  /** The vocabulary, most frequent first. */
  words?: readonly string[];
}

let cached: Embeddings | undefined;

/** GloVe-100 for the 40k most frequent words, int8-quantised (scripts/build-assets.ts). Loaded once, synchronously. */
export function loadGlove(): Embeddings {
  if (cached) return cached;
  const buf = readFileSync(path.resolve(__dirname, '../../assets/glove-40k.i8'));
  const headerLength = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + headerLength).toString('utf8')) as { format: string; dim: number; count: number; words: string[] };
  if (header.format !== 'whetstone-int8-embeddings/1') throw new Error(`unknown embeddings format ${header.format}`);
  const { dim, count } = header;
  const body = buf.subarray(4 + headerLength);
  const scales = new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + count * 4));
  const values = new Int8Array(body.buffer.slice(body.byteOffset + count * 4, body.byteOffset + count * 4 + count * dim));
  const index = new Map(header.words.map((w, i) => [w, i]));
  const vector = (word: string): Float32Array | null => {
    const i = index.get(word) ?? index.get(word.toLowerCase());
    if (i === undefined) return null;
    const out = new Float32Array(dim);
    const s = scales[i]!;
    for (let d = 0; d < dim; d++) out[d] = values[i * dim + d]! * s;
    return out;
  };
  const similarity = (a: string, b: string) => {
    const x = vector(a);
    const y = vector(b);
    if (!x || !y) return 0;
    let dot = 0;
    let nx = 0;
    let ny = 0;
    for (let d = 0; d < dim; d++) {
      dot += x[d]! * y[d]!;
      nx += x[d]! * x[d]!;
      ny += y[d]! * y[d]!;
    }
    return dot / Math.sqrt(nx * ny || 1);
  };
  cached = { dim, vector, has: (w) => index.has(w) || index.has(w.toLowerCase()), similarity, words: header.words };
  return cached;
}

let valences: Record<string, number> | undefined;

/** AFINN-165 word valences (-5..5), from assets/afinn-165.json (scripts/build-assets.ts). */
export function loadAfinn(): Record<string, number> {
  valences ??= (JSON.parse(readFileSync(path.resolve(__dirname, '../../assets/afinn-165.json'), 'utf8')) as { words: Record<string, number> }).words;
  return valences;
}
