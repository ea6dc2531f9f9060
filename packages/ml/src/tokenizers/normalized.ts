/**
 * A normalised string with its alignment to the original, as HF `tokenizers`' NormalizedString: `chars` are code
 * points, and `starts[i]`/`ends[i]` the code-point range of the original text that normalised char i came from
 * (every char a normalisation derives from one original char aligns to that char, as in the Rust library).
 */
export interface Normalized {
  chars: string[];
  starts: number[];
  ends: number[];
}

export function fromText(text: string): Normalized {
  const chars = Array.from(text);
  return { chars, starts: chars.map((_, i) => i), ends: chars.map((_, i) => i + 1) };
}

/** Replaces each char with 0, 1 or more chars aligned to the same original range. */
export function mapChars(n: Normalized, f: (c: string) => string): Normalized {
  const out: Normalized = { chars: [], starts: [], ends: [] };
  for (let i = 0; i < n.chars.length; i++) {
    for (const c of Array.from(f(n.chars[i]!))) {
      out.chars.push(c);
      out.starts.push(n.starts[i]!);
      out.ends.push(n.ends[i]!);
    }
  }
  return out;
}

/** A slice [from, to) of the normalised chars. */
export function slice(n: Normalized, from: number, to: number): Normalized {
  return { chars: n.chars.slice(from, to), starts: n.starts.slice(from, to), ends: n.ends.slice(from, to) };
}

/** Rust `char::is_whitespace` (the Unicode White_Space property). */
export const isWhitespace = (c: string): boolean => /^\p{White_Space}$/u.test(c);

/** tokenizers' `is_control`: Unicode "Other" (Cc, Cf, Cn, Co) except tab, newline and carriage return. */
const isControl = (c: string): boolean =>
  c !== '\t' && c !== '\n' && c !== '\r' && /^[\p{Cc}\p{Cf}\p{Cn}\p{Co}]$/u.test(c);

/** tokenizers' `is_chinese_char`: the CJK Unified Ideographs blocks BERT splits one by one. */
function isChineseChar(c: string): boolean {
  const u = c.codePointAt(0)!;
  return (
    (u >= 0x4e00 && u <= 0x9fff) ||
    (u >= 0x3400 && u <= 0x4dbf) ||
    (u >= 0x20000 && u <= 0x2a6df) ||
    (u >= 0x2a700 && u <= 0x2b73f) ||
    (u >= 0x2b740 && u <= 0x2b81f) ||
    (u >= 0x2b920 && u <= 0x2ceaf) ||
    (u >= 0xf900 && u <= 0xfaff) ||
    (u >= 0x2f800 && u <= 0x2fa1f)
  );
}

export interface BertNormalizerOptions {
  clean_text: boolean;
  handle_chinese_chars: boolean;
  /** null: follows `lowercase`, as in tokenizers. */
  strip_accents: boolean | null;
  lowercase: boolean;
}

/** `BertNormalizer`: clean text, space out CJK ideographs, strip accents (NFD, drop Mn), lowercase, in that order. */
export function bertNormalize(input: Normalized, o: BertNormalizerOptions): Normalized {
  let n = input;
  if (o.clean_text)
    n = mapChars(n, (c) => (c === '\0' || c === '\ufffd' || isControl(c) ? '' : isWhitespace(c) ? ' ' : c));
  if (o.handle_chinese_chars) n = mapChars(n, (c) => (isChineseChar(c) ? ` ${c} ` : c));
  if (o.strip_accents ?? o.lowercase)
    n = mapChars(n, (c) =>
      Array.from(c.normalize('NFD'))
        .filter((d) => !/^\p{Mn}$/u.test(d))
        .join(''),
    );
  // Per char, as Rust's `char::to_lowercase` (no context-dependent final sigma).
  if (o.lowercase) n = mapChars(n, (c) => c.toLowerCase());
  return n;
}

/** Punctuation as `BertPreTokenizer` sees it: ASCII punctuation or any Unicode P* category. */
export const isBertPunctuation = (c: string): boolean => /^[!-/:-@[-`{-~\p{P}]$/u.test(c);

/**
 * `BertPreTokenizer`: split on whitespace (removed), then every punctuation char becomes a word of its own.
 * Returns [from, to) ranges over the normalised chars.
 */
export function bertPreTokenize(n: Normalized): Array<[number, number]> {
  const words: Array<[number, number]> = [];
  let start = -1;
  const close = (i: number): void => {
    if (start >= 0) words.push([start, i]);
    start = -1;
  };
  for (let i = 0; i < n.chars.length; i++) {
    const c = n.chars[i]!;
    if (isWhitespace(c)) close(i);
    else if (isBertPunctuation(c)) {
      close(i);
      words.push([i, i + 1]);
    } else if (start < 0) start = i;
  }
  close(n.chars.length);
  return words;
}
