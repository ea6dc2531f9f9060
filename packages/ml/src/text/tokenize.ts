/** A token with UTF-16 character offsets into the original text (end exclusive). */
export interface Token {
  text: string;
  start: number;
  end: number;
}

// Words (letters, with inner apostrophes or hyphens), numbers (with inner . or ,), or any other single symbol.
const TOKEN = /[\p{L}\p{M}]+(?:['’-][\p{L}\p{M}]+)*|\p{N}+(?:[.,]\p{N}+)*|[^\s\p{L}\p{M}\p{N}]/gu;

/** Regex word tokenizer keeping character offsets, so predictions map back to spans of the input. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(TOKEN)) tokens.push({ text: m[0], start: m.index, end: m.index + m[0].length });
  return tokens;
}

/** Small fixed-length shape vector: capitalised, all caps, all lower, has digit, all digits, punctuation, long. */
export function shapeFeatures(token: string): number[] {
  const letters = token.replace(/[^\p{L}]/gu, '');
  return [
    /^\p{Lu}/u.test(token) ? 1 : 0,
    letters.length > 1 && letters === letters.toUpperCase() ? 1 : 0,
    letters.length > 0 && letters === letters.toLowerCase() ? 1 : 0,
    /\p{N}/u.test(token) ? 1 : 0,
    /^\p{N}+$/u.test(token) ? 1 : 0,
    /^[^\p{L}\p{N}]+$/u.test(token) ? 1 : 0,
    token.length > 8 ? 1 : 0,
  ];
}

/** Lower-cased word unigrams and bigrams, for linear text features. */
export function wordNgrams(text: string): string[] {
  const words = tokenize(text.toLowerCase()).map((t) => t.text);
  const grams = [...words];
  for (let i = 0; i + 1 < words.length; i++) grams.push(`${words[i]} ${words[i + 1]}`);
  return grams;
}

/** FNV-1a 32-bit hash, for hashed feature buckets (fast, stable across runs and machines). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
