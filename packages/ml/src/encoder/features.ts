import nlp from 'compromise';
import type { Embeddings } from '../assets/load';
import { fnv1a, shapeFeatures, tokenize, type Token } from '../text/tokenize';

/** Gazetteer classes from compromise's lexicon (names, places, organisations, nationalities, dates, units). */
const GAZETTEER: [string, string[]][] = [
  ['first', ['FirstName', 'MaleName', 'FemaleName']],
  ['last', ['LastName']],
  ['person', ['Person', 'Honorific', 'Actor']],
  ['city', ['City']],
  ['country', ['Country']],
  ['place', ['Place', 'Region', 'Address']],
  ['org', ['Organization', 'Company', 'SportsTeam', 'School']],
  ['demonym', ['Demonym', 'Language']],
  ['date', ['Month', 'WeekDay', 'Date', 'Holiday']],
  ['unit', ['Currency', 'Unit']],
];

/** Per-token dense inputs: unit GloVe-100 (zeros when unknown), 7 shape flags, a "known word" flag, gazetteer flags. */
export const SHAPE_DIM = 8 + GAZETTEER.length;

let lexicon: Map<string, number> | undefined;

/** compromise's lexicon (24k words and phrases) as bit sets of gazetteer classes; read once. */
function gazetteer(): Map<string, number> {
  if (lexicon) return lexicon;
  const classOf = new Map<string, number>();
  GAZETTEER.forEach(([, tags], i) => tags.forEach((t) => classOf.set(t, i)));
  lexicon = new Map();
  const model = (nlp as unknown as { model(): { one: { lexicon: Record<string, string | string[]> } } }).model();
  for (const [word, tags] of Object.entries(model.one.lexicon)) {
    let bits = 0;
    for (const t of Array.isArray(tags) ? tags : [tags]) {
      const c = classOf.get(t);
      if (c !== undefined) bits |= 1 << c;
    }
    if (bits) lexicon.set(word, bits);
  }
  return lexicon;
}

/** Gazetteer bits per token: single words, and every token of a matching two- or three-word phrase. */
function gazetteerBits(tokens: Token[]): Int32Array {
  const lex = gazetteer();
  const bits = new Int32Array(tokens.length);
  const lower = tokens.map((t) => t.text.toLowerCase());
  for (let i = 0; i < tokens.length; i++) {
    bits[i]! |= lex.get(lower[i]!) ?? 0;
    for (let n = 2; n <= 3 && i + n <= tokens.length; n++) {
      const b = lex.get(lower.slice(i, i + n).join(' '));
      if (b) for (let k = i; k < i + n; k++) bits[k]! |= b;
    }
  }
  return bits;
}

/** Word-level hashed features of a token: the word, lower case, 2–3-letter prefixes, 2–4-letter suffixes, shape. */
const WORD_FEATURES = 8;
/** Slots for the character 3- and 4-grams of `<word>` (lower case); a longer word keeps its first 16, a shorter one leaves slots empty (−1). */
const CHAR_SLOTS = 16;
/** Hashed sparse features of one token, looked up in the trainable hash table (a mean bag over the filled slots). */
export const HASHED_PER_TOKEN = WORD_FEATURES + CHAR_SLOTS;

function shapeOf(w: string): string {
  return w
    .replace(/\p{Lu}+/gu, 'X')
    .replace(/\p{Ll}+/gu, 'x')
    .replace(/\p{N}+/gu, 'd');
}

export function hashedNames(word: string): string[] {
  const lower = word.toLowerCase();
  const names = [
    `w=${word}`,
    `l=${lower}`,
    `p2=${lower.slice(0, 2)}`,
    `p3=${lower.slice(0, 3)}`,
    `s2=${lower.slice(-2)}`,
    `s3=${lower.slice(-3)}`,
    `s4=${lower.slice(-4)}`,
    `sh=${shapeOf(word)}`,
  ];
  const padded = `<${lower}>`;
  const grams: string[] = [];
  for (const n of [3, 4]) for (let i = 0; i + n <= padded.length; i++) grams.push(`c${n}=${padded.slice(i, i + n)}`);
  return [...names, ...grams.slice(0, CHAR_SLOTS)];
}

/** One text, featurised: its tokens, dense rows [T, dim+SHAPE_DIM] and hashed ids [T·HASHED_PER_TOKEN] (−1 for an empty slot). */
export interface Featurized {
  tokens: Token[];
  dense: Float32Array;
  hashed: Int32Array;
}

export function denseWidth(glove: Embeddings): number {
  return glove.dim + SHAPE_DIM;
}

/** Token vectors are cached per word: featurising is then a copy per token. */
const vectorCache = new Map<string, Float32Array | null>();

function unitVector(glove: Embeddings, word: string): Float32Array | null {
  let v = vectorCache.get(word);
  if (v !== undefined) return v;
  const raw = glove.vector(word);
  if (raw) {
    let n = 0;
    for (let d = 0; d < raw.length; d++) n += raw[d]! * raw[d]!;
    const inv = n > 0 ? 1 / Math.sqrt(n) : 0;
    v = raw.map((x) => x * inv);
  } else v = null;
  if (vectorCache.size > 200_000) vectorCache.clear();
  vectorCache.set(word, v);
  return v;
}

/** A word's hashed feature ids (−1 in empty slots), cached per word and table size like its vector. */
const idCache = new Map<string, Int32Array>();

function hashedIds(word: string, hashLog2: number): Int32Array {
  const key = `${hashLog2}:${word}`;
  let ids = idCache.get(key);
  if (ids) return ids;
  const mask = (1 << hashLog2) - 1;
  ids = new Int32Array(HASHED_PER_TOKEN).fill(-1);
  hashedNames(word).forEach((n, k) => (ids![k] = fnv1a(n) & mask));
  if (idCache.size > 200_000) idCache.clear();
  idCache.set(key, ids);
  return ids;
}

export function featurizeTokens(tokens: Token[], glove: Embeddings, hashLog2: number): Featurized {
  const width = denseWidth(glove);
  const dense = new Float32Array(tokens.length * width);
  const hashed = new Int32Array(tokens.length * HASHED_PER_TOKEN);
  const gaz = gazetteerBits(tokens);
  tokens.forEach((t, i) => {
    const v = unitVector(glove, t.text);
    if (v) dense.set(v, i * width);
    const shape = shapeFeatures(t.text);
    shape.push(v ? 1 : 0);
    for (let c = 0; c < GAZETTEER.length; c++) shape.push((gaz[i]! >> c) & 1);
    dense.set(shape, i * width + glove.dim);
    hashed.set(hashedIds(t.text, hashLog2), i * HASHED_PER_TOKEN);
  });
  return { tokens, dense, hashed };
}

export function featurize(text: string, glove: Embeddings, hashLog2: number): Featurized {
  return featurizeTokens(tokenize(text), glove, hashLog2);
}

/** Mean unit GloVe vector of a label name's words (`date_of_birth`, `Job title`); a seeded hash vector when none is known. */
export function labelVector(label: string, glove: Embeddings): Float32Array {
  const out = new Float32Array(glove.dim);
  const words = label
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  let n = 0;
  for (const w of words) {
    const v = unitVector(glove, w);
    if (!v) continue;
    for (let d = 0; d < out.length; d++) out[d]! += v[d]!;
    n++;
  }
  if (n === 0) {
    // Unknown words: a fixed pseudo-random direction per name, so distinct labels stay distinct.
    let h = fnv1a(label.toLowerCase());
    for (let d = 0; d < out.length; d++) {
      h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
      out[d] = (h / 4294967296 - 0.5) * 0.35;
    }
    return out;
  }
  for (let d = 0; d < out.length; d++) out[d]! /= n;
  return out;
}
