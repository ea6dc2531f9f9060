import { readFileSync } from 'node:fs';
import { CheckpointError } from '../checkpoints/safetensors';
import { BpeModel, CHAR_TO_BYTE, type BpeModelJson } from './bpe';
import {
  buildNormalizer,
  buildPreTokenizer,
  type Normalize,
  type NormalizerJson,
  type PreTokenize,
  type PreTokenizerJson,
} from './bpe-pretokenizers';

/**
 * A BPE `tokenizer.json` as HF `tokenizers` runs it: added tokens matched first (the ones with `normalized: false`
 * in the raw text, the others after normalisation; `lstrip`, `rstrip` and `single_word` as the Rust library
 * applies them), then the normalizer, the pre-tokenizer and the BPE model on each remaining piece, then the
 * post-processor's template (ByteLevel's adds nothing). Decoding runs the decoder chain (ByteLevel, or
 * Replace/ByteFallback/Fuse/Strip/Metaspace as Llama 2's files have it).
 */
interface AddedTokenJson {
  id: number;
  content: string;
  special: boolean;
  normalized: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  single_word?: boolean;
}

type Piece = { Sequence: { id: 'A' | 'B' } } | { SpecialToken: { id: string } };

type PostProcessorJson =
  | { type: 'TemplateProcessing'; single: Piece[]; pair: Piece[]; special_tokens: Record<string, { ids: number[] }> }
  | { type: 'ByteLevel' }
  | { type: 'Sequence'; processors: PostProcessorJson[] };

type DecoderJson =
  | { type: 'ByteLevel' }
  | { type: 'Replace'; pattern: { String: string }; content: string }
  | { type: 'ByteFallback' }
  | { type: 'Fuse' }
  | { type: 'Strip'; content: string; start: number; stop: number }
  | { type: 'Metaspace'; replacement?: string; prepend_scheme?: string }
  | { type: 'Sequence'; decoders: DecoderJson[] };

export interface BpeTokenizerJson {
  normalizer: NormalizerJson | null;
  pre_tokenizer: PreTokenizerJson | null;
  model: BpeModelJson;
  post_processor: PostProcessorJson | null;
  decoder: DecoderJson | null;
  added_tokens: AddedTokenJson[];
}

export interface BpeEncoding {
  ids: Int32Array;
  tokens: string[];
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const isSpace = (c: string | undefined): boolean => c !== undefined && /^\p{White_Space}$/u.test(c);
const isWordChar = (c: string | undefined): boolean => c !== undefined && /^[\p{L}\p{N}_]$/u.test(c);

export class BpeTokenizer {
  private readonly model: BpeModel;
  private readonly idToToken: string[] = [];
  private readonly added = new Map<string, AddedTokenJson>();
  private readonly special = new Set<number>();
  private readonly rawPattern: RegExp | null;
  private readonly normalizedPattern: RegExp | null;
  private readonly normalize: Normalize;
  private readonly preTokenize: PreTokenize;
  private readonly template: { single: Piece[]; pair: Piece[]; ids: Record<string, { ids: number[] }> } | null;

  constructor(
    private readonly json: BpeTokenizerJson,
    file = 'tokenizer.json',
  ) {
    if (json.model?.type !== 'BPE')
      throw new CheckpointError(`${file}: model ${String(json.model?.type)} is not supported here; supported: BPE`);
    if (json.model.continuing_subword_prefix || json.model.end_of_word_suffix)
      throw new CheckpointError(`${file}: BPE with continuing_subword_prefix or end_of_word_suffix is not supported`);
    this.model = new BpeModel(json.model);
    for (const [t, id] of this.model.vocab) this.idToToken[id] = t;
    for (const t of json.added_tokens ?? []) {
      this.idToToken[t.id] = t.content;
      this.added.set(t.content, t);
      if (t.special) this.special.add(t.id);
    }
    const pattern = (normalized: boolean): RegExp | null => {
      const list = [...this.added.values()].filter((t) => t.normalized === normalized).map((t) => t.content);
      list.sort((a, b) => b.length - a.length);
      return list.length ? new RegExp(list.map(escape).join('|'), 'gu') : null;
    };
    this.rawPattern = pattern(false);
    this.normalizedPattern = pattern(true);
    try {
      this.normalize = buildNormalizer(json.normalizer, file);
      this.preTokenize = buildPreTokenizer(json.pre_tokenizer, file);
    } catch (e) {
      throw new CheckpointError((e as Error).message);
    }
    this.template = findTemplate(json.post_processor, file);
  }

  static fromFile(path: string): BpeTokenizer {
    let json: BpeTokenizerJson;
    try {
      json = JSON.parse(readFileSync(path, 'utf8')) as BpeTokenizerJson;
    } catch (e) {
      throw new CheckpointError(`${path}: not readable as tokenizer.json (${(e as Error).message})`);
    }
    return new BpeTokenizer(json, path);
  }

  get vocabSize(): number {
    return this.idToToken.length;
  }

  tokenToId(token: string): number | undefined {
    return this.added.get(token)?.id ?? this.model.vocab.get(token);
  }

  idToTokenString(id: number): string | undefined {
    return this.idToToken[id];
  }

  isSpecial(id: number): boolean {
    return this.special.has(id);
  }

  /**
   * Splits on added tokens: strings to tokenize further, and the added tokens matched (with the text they
   * cover, stripped whitespace included, which is the token string tokenizers reports).
   */
  private splitAdded(text: string, re: RegExp | null): Array<string | [number, string]> {
    if (!re) return [text];
    const out: Array<string | [number, string]> = [];
    let at = 0;
    for (const m of text.matchAll(re)) {
      const t = this.added.get(m[0])!;
      let start = m.index;
      let stop = start + m[0].length;
      if (start < at) continue;
      if (t.single_word && (isWordChar(text[start - 1]) || isWordChar(text[stop]))) continue;
      if (t.lstrip) while (start > at && isSpace(text[start - 1])) start--;
      if (t.rstrip) while (stop < text.length && isSpace(text[stop])) stop++;
      if (start > at) out.push(text.slice(at, start));
      out.push([t.id, text.slice(start, stop)]);
      at = stop;
    }
    if (at < text.length) out.push(text.slice(at));
    return out;
  }

  private encodeText(text: string): Array<[number, string]> {
    const out: Array<[number, string]> = [];
    let first = true;
    for (const raw of this.splitAdded(text, this.rawPattern)) {
      if (typeof raw !== 'string') {
        out.push(raw);
        continue;
      }
      for (const piece of this.splitAdded(this.normalize(raw), this.normalizedPattern)) {
        if (typeof piece !== 'string') {
          out.push(piece);
          continue;
        }
        for (const word of this.preTokenize(piece, first))
          for (const id of this.model.word(word)) out.push([id, this.idToToken[id]!]);
        first = false;
      }
    }
    return out;
  }

  /** The ids of a text (and optionally its pair), with the post-processor's special tokens when asked. */
  encode(text: string, options: { addSpecialTokens?: boolean; pair?: string } = {}): BpeEncoding {
    const a = this.encodeText(text);
    const b = options.pair === undefined ? null : this.encodeText(options.pair);
    let all = b ? [...a, ...b] : a;
    if ((options.addSpecialTokens ?? true) && this.template) {
      all = [];
      for (const p of b ? this.template.pair : this.template.single) {
        if ('SpecialToken' in p)
          for (const id of this.template.ids[p.SpecialToken.id]?.ids ?? []) all.push([id, this.idToToken[id] ?? '']);
        else all.push(...(p.Sequence.id === 'A' ? a : (b ?? [])));
      }
    }
    return { ids: Int32Array.from(all, (p) => p[0]), tokens: all.map((p) => p[1]) };
  }

  /** The text of `ids`, through the tokenizer.json decoder. */
  decode(ids: ArrayLike<number>, options: { skipSpecialTokens?: boolean } = {}): string {
    const tokens: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (options.skipSpecialTokens && this.special.has(id)) continue;
      const t = this.idToToken[id];
      if (t !== undefined) tokens.push(t);
    }
    return decodeChain(this.json.decoder, tokens).join('');
  }
}

function findTemplate(pp: PostProcessorJson | null, file: string): BpeTokenizer['template'] {
  if (!pp || pp.type === 'ByteLevel') return null;
  if (pp.type === 'TemplateProcessing') return { single: pp.single, pair: pp.pair, ids: pp.special_tokens };
  if (pp.type === 'Sequence') {
    const found = pp.processors.map((p) => findTemplate(p, file)).filter((t) => t !== null);
    return found[0] ?? null;
  }
  throw new CheckpointError(
    `${file}: post_processor ${(pp as { type: string }).type} is not supported; supported: TemplateProcessing, ByteLevel, Sequence`,
  );
}

/** UTF-8 bytes to text, invalid sequences as U+FFFD (Rust's from_utf8_lossy). */
const lossy = (bytes: number[]): string => new TextDecoder('utf-8', { ignoreBOM: true }).decode(Uint8Array.from(bytes));

/** UTF-8 bytes to text, or null when they are not valid UTF-8. */
function strictUtf8(bytes: number[]): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}

function decodeChain(d: DecoderJson | null, tokens: string[]): string[] {
  if (!d) return tokens;
  switch (d.type) {
    case 'ByteLevel': {
      const bytes: number[] = [];
      for (const t of tokens) {
        const mapped = [...t].map((c) => CHAR_TO_BYTE.get(c));
        if (mapped.every((b) => b !== undefined)) bytes.push(...(mapped as number[]));
        else bytes.push(...new TextEncoder().encode(t));
      }
      return [lossy(bytes)];
    }
    case 'Replace':
      return tokens.map((t) => t.split(d.pattern.String).join(d.content));
    case 'ByteFallback': {
      const out: string[] = [];
      let pending: number[] = [];
      const flush = (): void => {
        if (!pending.length) return;
        // As tokenizers' ByteFallback: the bytes' text, or one U+FFFD per byte when they are not valid UTF-8.
        out.push(strictUtf8(pending) ?? '\ufffd'.repeat(pending.length));
        pending = [];
      };
      for (const t of tokens) {
        const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(t);
        if (m) pending.push(parseInt(m[1]!, 16));
        else {
          flush();
          out.push(t);
        }
      }
      flush();
      return out;
    }
    case 'Fuse':
      return [tokens.join('')];
    case 'Strip':
      return tokens.map((t) => {
        const chars = [...t];
        let s = 0;
        let e = chars.length;
        while (s < d.start && chars[s] === d.content) s++;
        while (chars.length - e < d.stop && e > s && chars[e - 1] === d.content) e--;
        return chars.slice(s, e).join('');
      });
    case 'Metaspace': {
      const r = d.replacement ?? '▁';
      return tokens.map((t, i) => {
        const s = t.split(r).join(' ');
        return i === 0 && d.prepend_scheme !== 'never' && s.startsWith(' ') ? s.slice(1) : s;
      });
    }
    case 'Sequence':
      return d.decoders.reduce((acc, x) => decodeChain(x, acc), tokens);
    default:
      throw new Error(`tokenizer.json: decoder ${(d as { type: string }).type} is not supported`);
  }
}
