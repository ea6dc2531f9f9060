import { readFileSync } from 'node:fs';
import { CheckpointError } from '../checkpoints/safetensors';
import {
  bertNormalize,
  bertPreTokenize,
  fromText,
  slice,
  type BertNormalizerOptions,
  type Normalized,
} from './normalized';
import { wordPiece, type WordPieceModel } from './wordpiece';

/**
 * A `tokenizer.json` (HF `tokenizers`' serialisation) for the BERT family: BertNormalizer, BertPreTokenizer,
 * WordPiece and the TemplateProcessing (or BertProcessing) post-processor, with special added tokens matched in the
 * raw text first, as the Rust library does. The output is what `tokenizers` gives with padding and truncation
 * turned off; offsets are UTF-16 indices into the text (JavaScript string positions), special tokens [0, 0].
 */
export interface Encoding {
  ids: Int32Array;
  tokens: string[];
  typeIds: Int32Array;
  /** [start, end) per token in UTF-16 units of the input; [0, 0] for special tokens. */
  offsets: Array<[number, number]>;
  /** 1 for tokens the template added. */
  specialTokensMask: Uint8Array;
  /** The index of the pre-tokenized word each token came from (null for template tokens). */
  wordIds: Array<number | null>;
}

type Piece = { Sequence: { id: 'A' | 'B'; type_id: number } } | { SpecialToken: { id: string; type_id: number } };

interface TokenizerJson {
  normalizer: ({ type: string } & Partial<BertNormalizerOptions>) | null;
  pre_tokenizer: { type: string } | null;
  model: { type: string; vocab: Record<string, number> } & Partial<WordPieceModel>;
  post_processor:
    | { type: 'TemplateProcessing'; single: Piece[]; pair: Piece[]; special_tokens: Record<string, { ids: number[] }> }
    | { type: 'BertProcessing'; sep: [string, number]; cls: [string, number] }
    | { type: string }
    | null;
  added_tokens: Array<{ id: number; content: string; special: boolean; normalized: boolean }>;
}

interface Part {
  ids: number[];
  tokens: string[];
  offsets: Array<[number, number]>;
  wordIds: Array<number | null>;
}

export class WordPieceTokenizer {
  readonly vocab: Map<string, number>;
  private readonly idToToken: string[] = [];
  private readonly model: WordPieceModel;
  private readonly normalizer: BertNormalizerOptions | null;
  private readonly added: Map<string, number>;
  private readonly addedPattern: RegExp | null;
  private readonly single: Piece[];
  private readonly pair: Piece[];

  constructor(json: TokenizerJson, file = 'tokenizer.json') {
    const unsupported = (what: string, type: string, ok: string): CheckpointError =>
      new CheckpointError(`${file}: ${what} ${type} is not supported; supported: ${ok}`);
    if (json.model?.type !== 'WordPiece') throw unsupported('model', String(json.model?.type), 'WordPiece');
    if (json.normalizer && json.normalizer.type !== 'BertNormalizer')
      throw unsupported('normalizer', json.normalizer.type, 'BertNormalizer');
    if (json.pre_tokenizer && json.pre_tokenizer.type !== 'BertPreTokenizer')
      throw unsupported('pre_tokenizer', json.pre_tokenizer.type, 'BertPreTokenizer');
    this.vocab = new Map(Object.entries(json.model.vocab));
    for (const [t, id] of this.vocab) this.idToToken[id] = t;
    this.model = {
      vocab: this.vocab,
      unk_token: json.model.unk_token ?? '[UNK]',
      continuing_subword_prefix: json.model.continuing_subword_prefix ?? '##',
      max_input_chars_per_word: json.model.max_input_chars_per_word ?? 100,
    };
    const n = json.normalizer;
    this.normalizer = n
      ? {
          clean_text: n.clean_text ?? true,
          handle_chinese_chars: n.handle_chinese_chars ?? true,
          strip_accents: n.strip_accents ?? null,
          lowercase: n.lowercase ?? true,
        }
      : null;
    // Added tokens that are matched before normalisation (BERT's specials are all `normalized: false`).
    this.added = new Map(json.added_tokens.filter((t) => !t.normalized).map((t) => [t.content, t.id]));
    for (const t of json.added_tokens) this.idToToken[t.id] = t.content;
    const escaped = [...this.added.keys()]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    this.addedPattern = escaped.length ? new RegExp(escaped.join('|'), 'gu') : null;
    const pp = json.post_processor;
    if (!pp) [this.single, this.pair] = [[seq('A', 0)], [seq('A', 0), seq('B', 1)]];
    else if (pp.type === 'TemplateProcessing') {
      const t = pp as Extract<TokenizerJson['post_processor'], { type: 'TemplateProcessing' }>;
      [this.single, this.pair] = [t.single, t.pair];
    } else if (pp.type === 'BertProcessing') {
      const b = pp as Extract<TokenizerJson['post_processor'], { type: 'BertProcessing' }>;
      const cls = special(b.cls[0], 0);
      [this.single, this.pair] = [
        [cls, seq('A', 0), special(b.sep[0], 0)],
        [cls, seq('A', 0), special(b.sep[0], 0), seq('B', 1), special(b.sep[0], 1)],
      ];
      this.vocab.set(b.cls[0], b.cls[1]);
      this.vocab.set(b.sep[0], b.sep[1]);
    } else throw unsupported('post_processor', pp.type, 'TemplateProcessing, BertProcessing');
  }

  static fromFile(path: string): WordPieceTokenizer {
    let json: TokenizerJson;
    try {
      json = JSON.parse(readFileSync(path, 'utf8')) as TokenizerJson;
    } catch (e) {
      throw new CheckpointError(`${path}: not readable as tokenizer.json (${(e as Error).message})`);
    }
    return new WordPieceTokenizer(json, path);
  }

  get vocabSize(): number {
    return this.idToToken.length;
  }

  tokenToId(token: string): number | undefined {
    return this.added.get(token) ?? this.vocab.get(token);
  }

  idToTokenString(id: number): string | undefined {
    return this.idToToken[id];
  }

  /** The tokens of one text, without the template's special tokens; offsets in code points. */
  private encodeText(text: string): Part {
    const part: Part = { ids: [], tokens: [], offsets: [], wordIds: [] };
    const whole = fromText(text);
    let word = 0;
    const plain = (from: number, to: number): void => {
      if (from >= to) return;
      let n: Normalized = slice(whole, from, to);
      if (this.normalizer) n = bertNormalize(n, this.normalizer);
      for (const [a, b] of bertPreTokenize(n)) {
        for (const p of wordPiece(n.chars.slice(a, b), this.model)) {
          part.ids.push(p.id);
          part.tokens.push(p.token);
          part.offsets.push([n.starts[a + p.from]!, n.ends[a + p.to - 1]!]);
          part.wordIds.push(word);
        }
        word++;
      }
    };
    if (!this.addedPattern) plain(0, whole.chars.length);
    else {
      // Split on the added tokens in the raw text (code-point positions), as tokenizers' AddedVocabulary does.
      const cpIndex = utf16ToCodePoint(text);
      let at = 0;
      for (const m of text.matchAll(this.addedPattern)) {
        const s = cpIndex[m.index]!;
        const e = cpIndex[m.index + m[0].length]!;
        plain(at, s);
        part.ids.push(this.added.get(m[0])!);
        part.tokens.push(m[0]);
        part.offsets.push([s, e]);
        part.wordIds.push(word++);
        at = e;
      }
      plain(at, whole.chars.length);
    }
    return part;
  }

  /** Encodes a text (and optionally its pair) as `tokenizers` does with add_special_tokens. */
  encode(text: string, pair?: string, addSpecialTokens = true): Encoding {
    const a = this.encodeText(text);
    const b = pair === undefined ? null : this.encodeText(pair);
    const ids: number[] = [];
    const tokens: string[] = [];
    const typeIds: number[] = [];
    const offsets: Array<[number, number]> = [];
    const mask: number[] = [];
    const wordIds: Array<number | null> = [];
    const template = addSpecialTokens ? (b ? this.pair : this.single) : b ? [seq('A', 0), seq('B', 1)] : [seq('A', 0)];
    for (const piece of template) {
      if ('SpecialToken' in piece) {
        const id = this.tokenToId(piece.SpecialToken.id);
        if (id === undefined)
          throw new CheckpointError(`tokenizer.json: special token ${piece.SpecialToken.id} has no id`);
        ids.push(id);
        tokens.push(piece.SpecialToken.id);
        typeIds.push(piece.SpecialToken.type_id);
        offsets.push([0, 0]);
        mask.push(1);
        wordIds.push(null);
        continue;
      }
      const src = piece.Sequence.id === 'A' ? a : b;
      if (!src) continue;
      const toUtf16 = codePointToUtf16(piece.Sequence.id === 'A' ? text : pair!);
      for (let i = 0; i < src.ids.length; i++) {
        ids.push(src.ids[i]!);
        tokens.push(src.tokens[i]!);
        typeIds.push(piece.Sequence.type_id);
        offsets.push([toUtf16[src.offsets[i]![0]]!, toUtf16[src.offsets[i]![1]]!]);
        mask.push(0);
        wordIds.push(src.wordIds[i]!);
      }
    }
    return {
      ids: Int32Array.from(ids),
      tokens,
      typeIds: Int32Array.from(typeIds),
      offsets,
      specialTokensMask: Uint8Array.from(mask),
      wordIds,
    };
  }
}

function seq(id: 'A' | 'B', type_id: number): Piece {
  return { Sequence: { id, type_id } };
}

function special(id: string, type_id: number): Piece {
  return { SpecialToken: { id, type_id } };
}

/** For each UTF-16 index of `text` (and its end), the code-point index there. */
function utf16ToCodePoint(text: string): Int32Array {
  const out = new Int32Array(text.length + 1);
  let cp = 0;
  for (let i = 0; i < text.length; i++) {
    out[i] = cp;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) out[++i] = cp;
    }
    cp++;
  }
  out[text.length] = cp;
  return out;
}

/** For each code-point index of `text` (and its end), the UTF-16 index there. */
function codePointToUtf16(text: string): Int32Array {
  const chars = Array.from(text);
  const out = new Int32Array(chars.length + 1);
  let u = 0;
  for (let i = 0; i < chars.length; i++) {
    out[i] = u;
    u += chars[i]!.length;
  }
  out[chars.length] = u;
  return out;
}
