import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/** Word vectors shipped in the repository (no download at run time). */
export interface Embeddings {
  dim: number;
  vector(word: string): Float32Array | null;
  has(word: string): boolean;
  /** Cosine similarity; 0 when either word is unknown. */
  similarity(a: string, b: string): number;
  /** The vocabulary, most frequent first. */
  words?: readonly string[];
  /** A word's frequency rank (0 = most frequent; its lower case when the word itself is unknown), Infinity when unknown. */
  rank(word: string): number;
}

/** The assets folder's GloVe subset; `pnpm install` builds it (scripts/build-assets.ts --glove-if-missing). */
export const GLOVE_FILE = path.resolve(__dirname, '../../assets/glove-200k.i8');

let cached: Embeddings | undefined;

/** GloVe-100 for the 200k most frequent words, int8-quantised (scripts/build-assets.ts). Loaded once, synchronously. */
export function loadGlove(): Embeddings {
  if (cached) return cached;
  if (!existsSync(GLOVE_FILE))
    throw new Error(
      `${path.relative(process.cwd(), GLOVE_FILE)} is missing: run pnpm install, or pnpm --filter @whetstone/ml build:assets --glove-if-missing`,
    );
  const buf = readFileSync(GLOVE_FILE);
  const headerLength = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + headerLength).toString('utf8')) as {
    format: string;
    dim: number;
    count: number;
    words: string[];
  };
  if (header.format !== 'whetstone-int8-embeddings/1') throw new Error(`unknown embeddings format ${header.format}`);
  const { dim, count } = header;
  const body = buf.subarray(4 + headerLength);
  const scales = new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + count * 4));
  const values = new Int8Array(
    body.buffer.slice(body.byteOffset + count * 4, body.byteOffset + count * 4 + count * dim),
  );
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
  const rank = (w: string) => index.get(w) ?? index.get(w.toLowerCase()) ?? Infinity;
  cached = {
    dim,
    vector,
    has: (w) => index.has(w) || index.has(w.toLowerCase()),
    similarity,
    words: header.words,
    rank,
  };
  return cached;
}

let valences: Record<string, number> | undefined;

/** AFINN-165 word valences (-5..5), from assets/afinn-165.json (scripts/build-assets.ts). */
export function loadAfinn(): Record<string, number> {
  valences ??= (
    JSON.parse(readFileSync(path.resolve(__dirname, '../../assets/afinn-165.json'), 'utf8')) as {
      words: Record<string, number>;
    }
  ).words;
  return valences;
}

/** WordNet's noun hierarchy: synsets are numbered 0..count-1 in data.noun order. */
export interface WordNetNouns {
  count: number;
  /** The synset's lemmas as WordNet writes them (case kept, multiword lemmas joined by `_`). */
  lemmas(synset: number): readonly string[];
  /** Lexicographer file number (e.g. 5 noun.animal, 15 noun.location, 18 noun.person). */
  lexfile(synset: number): number;
  /** Direct hyponyms (the inverse of `@`). */
  hyponyms(synset: number): readonly number[];
  /** Direct instances (the inverse of `@i`): named cities, people, companies … */
  instances(synset: number): readonly number[];
  /** The noun senses of a lemma (lower case, `_` between words), most frequent first; empty when unknown. */
  senses(lemma: string): readonly number[];
}

let wordnet: WordNetNouns | undefined;

/** WordNet 3.1 nouns from assets/wordnet-nouns.json.gz (scripts/build-wordnet.ts). Loaded once, synchronously. */
export function loadWordNet(): WordNetNouns {
  if (wordnet) return wordnet;
  const raw = JSON.parse(
    gunzipSync(readFileSync(path.resolve(__dirname, '../../assets/wordnet-nouns.json.gz'))).toString('utf8'),
  ) as {
    format: string;
    lemmas: string;
    lexfiles: number[];
    hyponyms: string;
    instances: string;
    index: string;
  };
  if (raw.format !== 'whetstone-wordnet-nouns/1') throw new Error(`unknown WordNet format ${raw.format}`);
  // Lines are parsed when first used: a request touches a few thousand of the 82k synsets.
  const column = <T>(text: string, parse: (line: string) => T) => {
    const lines = text.split('\n');
    const parsed: (T | undefined)[] = new Array(lines.length);
    return (i: number): T => (parsed[i] ??= parse(lines[i]!));
  };
  const ids = (list: string) => (list ? list.split(',').map(Number) : []);
  const lemmas = column(raw.lemmas, (l) => l.split('|'));
  const hyponyms = column(raw.hyponyms, ids);
  const instances = column(raw.instances, ids);
  const index = raw.index.split('\n');
  const senses = (lemma: string): number[] => {
    let lo = 0;
    let hi = index.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const line = index[mid]!;
      const key = line.slice(0, line.indexOf(' '));
      if (key === lemma) return ids(line.slice(key.length + 1));
      if (key < lemma) lo = mid + 1;
      else hi = mid - 1;
    }
    return [];
  };
  wordnet = { count: raw.lexfiles.length, lemmas, lexfile: (s) => raw.lexfiles[s]!, hyponyms, instances, senses };
  return wordnet;
}
