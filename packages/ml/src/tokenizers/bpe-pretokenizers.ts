import { toByteLevel } from './bpe';

/**
 * The normalizers and pre-tokenizers of `tokenizer.json` that byte-level BPE checkpoints use (GPT-2, SmolLM2,
 * Qwen2, Llama 3): NFC/NFD/NFKC/NFKD, Prepend and Replace normalizers; ByteLevel (with the GPT-2 regex), Split
 * (a regex or string with tokenizers' split behaviours), Digits, Metaspace and Sequence pre-tokenizers. Regexes
 * are the Rust library's (Oniguruma syntax) translated to JavaScript's: `\s` as Unicode White_Space, `(?i:…)`
 * groups spelled out as case classes.
 */
export type NormalizerJson =
  | { type: 'NFC' | 'NFD' | 'NFKC' | 'NFKD' | 'Lowercase' }
  | { type: 'Prepend'; prepend: string }
  | { type: 'Replace'; pattern: Pattern; content: string }
  | { type: 'Sequence'; normalizers: NormalizerJson[] };

export type Pattern = { Regex: string } | { String: string };

export type Behavior = 'Removed' | 'Isolated' | 'MergedWithPrevious' | 'MergedWithNext' | 'Contiguous';

export type PreTokenizerJson =
  | { type: 'ByteLevel'; add_prefix_space?: boolean; use_regex?: boolean }
  | { type: 'Split'; pattern: Pattern; behavior: Behavior; invert?: boolean }
  | { type: 'Digits'; individual_digits?: boolean }
  | { type: 'Metaspace'; replacement?: string; prepend_scheme?: 'always' | 'first' | 'never'; split?: boolean }
  | { type: 'Sequence'; pretokenizers: PreTokenizerJson[] };

export const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/** An Oniguruma pattern as a JavaScript RegExp (global, unicode). */
export function onigRegex(source: string): RegExp {
  let s = source.replace(/\(\?i:((?:[^()\\]|\\.)*)\)/g, (_, body: string) => `(?:${caseless(body)})`);
  s = s.replace(/\\s/g, '\\p{White_Space}').replace(/\\S/g, '\\P{White_Space}');
  return new RegExp(s, 'gu');
}

function caseless(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\') {
      out += c + body[++i]!;
      continue;
    }
    const lo = c.toLowerCase();
    const up = c.toUpperCase();
    out += lo !== up ? `[${lo}${up}]` : c;
  }
  return out;
}

function patternRegex(p: Pattern): RegExp {
  if ('Regex' in p) return onigRegex(p.Regex);
  return new RegExp(p.String.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gu');
}

export type Normalize = (text: string) => string;

export function buildNormalizer(json: NormalizerJson | null, file: string): Normalize {
  if (!json) return (t) => t;
  switch (json.type) {
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD': {
      const form = json.type;
      return (t) => t.normalize(form);
    }
    case 'Lowercase':
      return (t) => t.toLowerCase();
    case 'Prepend': {
      const p = json.prepend;
      return (t) => (t.length ? p + t : t);
    }
    case 'Replace': {
      const re = patternRegex(json.pattern);
      const content = json.content;
      return (t) => t.replace(re, () => content);
    }
    case 'Sequence': {
      const steps = json.normalizers.map((n) => buildNormalizer(n, file));
      return (t) => steps.reduce((acc, f) => f(acc), t);
    }
    default:
      throw new Error(
        `${file}: normalizer ${(json as { type: string }).type} is not supported; supported: NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Sequence`,
      );
  }
}

/** Splits `text` on the regex's matches as tokenizers' `split` does with the behaviour given. */
export function splitBy(text: string, re: RegExp, behavior: Behavior, invert = false): string[] {
  const parts: Array<[string, boolean]> = [];
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m[0].length === 0) continue;
    if (m.index > at) parts.push([text.slice(at, m.index), invert]);
    parts.push([m[0], !invert]);
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push([text.slice(at), invert]);
  if (behavior === 'MergedWithNext') {
    // A match joins the piece after it unless that piece is a match too (tokenizers folds from the end).
    const rev: string[] = [];
    let nextMatch = false;
    for (let i = parts.length - 1; i >= 0; i--) {
      const [piece, isMatch] = parts[i]!;
      if (isMatch && !nextMatch && rev.length) rev[rev.length - 1] = piece + rev[rev.length - 1]!;
      else rev.push(piece);
      nextMatch = isMatch;
    }
    return rev.reverse().filter((p) => p.length > 0);
  }
  const out: string[] = [];
  let lastMatch = false;
  for (const [piece, isMatch] of parts) {
    switch (behavior) {
      case 'Removed':
        if (!isMatch) out.push(piece);
        break;
      case 'Isolated':
        out.push(piece);
        break;
      case 'MergedWithPrevious':
        if (isMatch && out.length && !lastMatch) out[out.length - 1] += piece;
        else out.push(piece);
        break;
      case 'Contiguous':
        if (isMatch && lastMatch) out[out.length - 1] += piece;
        else out.push(piece);
        break;
    }
    lastMatch = isMatch;
  }
  return out.filter((p) => p.length > 0);
}

/** Splits one piece into words (the strings the BPE model sees). `first` marks the text's first piece. */
export type PreTokenize = (piece: string, first: boolean) => string[];

export function buildPreTokenizer(json: PreTokenizerJson | null, file: string): PreTokenize {
  if (!json) return (p) => [p];
  switch (json.type) {
    case 'ByteLevel': {
      const re = json.use_regex === false ? null : onigRegex(GPT2_PATTERN);
      const prefix = json.add_prefix_space ?? true;
      return (p) => {
        const t = prefix && !p.startsWith(' ') ? ` ${p}` : p;
        return (re ? splitBy(t, re, 'Isolated') : [t]).map(toByteLevel);
      };
    }
    case 'Split': {
      const re = patternRegex(json.pattern);
      const { behavior, invert } = json;
      return (p) => splitBy(p, re, behavior, invert ?? false);
    }
    case 'Digits': {
      const individual = json.individual_digits ?? false;
      return (p) => splitBy(p, /\p{N}/gu, individual ? 'Isolated' : 'Contiguous');
    }
    case 'Metaspace': {
      const r = json.replacement ?? '▁';
      const scheme = json.prepend_scheme ?? 'always';
      const split = json.split ?? true;
      return (p, first) => {
        let t = p.replace(/ /g, r);
        if (!t.startsWith(r) && (scheme === 'always' || (scheme === 'first' && first))) t = r + t;
        return split ? splitBy(t, new RegExp(r, 'gu'), 'MergedWithNext') : [t];
      };
    }
    case 'Sequence': {
      const steps = json.pretokenizers.map((s) => buildPreTokenizer(s, file));
      return (p, first) =>
        steps.reduce<string[]>((pieces, step) => pieces.flatMap((q, i) => step(q, first && i === 0)), [p]);
    }
    default:
      throw new Error(
        `${file}: pre_tokenizer ${(json as { type: string }).type} is not supported; supported: ByteLevel, Split, Digits, Metaspace, Sequence`,
      );
  }
}
