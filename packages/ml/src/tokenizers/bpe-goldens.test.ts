import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BpeTokenizer } from './bpe-tokenizer';
import { onigRegex, splitBy } from './bpe-pretokenizers';

/**
 * Byte-level BPE against HF `tokenizers` (goldens written by packages/ml/python/make_decoder_goldens.py): three
 * trained tokenizers pre-tokenized as SmolLM2's, Qwen2's and Llama 3's files are, and one laid out as Llama 2's
 * (Metaspace-style normalizer, byte fallback, its decoder chain), on texts with unicode, emoji,
 * whitespace runs, numbers and added tokens. Ids with and without the template, tokens and decoded text identical.
 */
const FIXTURES = join(__dirname, '../../fixtures');

interface Row {
  text: string;
  ids: number[];
  tokens: string[];
  ids_no_special: number[];
  decoded: string;
}

describe('byte-level BPE against tokenizers', () => {
  for (const kind of ['smollm', 'qwen2', 'llama3', 'bytefallback']) {
    it(`${kind}-style tokenizer.json: ids, tokens and decoded text`, () => {
      const dir = join(FIXTURES, `bpe-${kind}`);
      const tok = BpeTokenizer.fromFile(join(dir, 'tokenizer.json'));
      const rows = JSON.parse(readFileSync(join(dir, 'goldens.json'), 'utf8')) as Row[];
      expect(rows.length).toBeGreaterThan(20);
      for (const row of rows) {
        const e = tok.encode(row.text);
        expect({ text: row.text, ids: Array.from(e.ids) }).toEqual({ text: row.text, ids: row.ids });
        expect(e.tokens).toEqual(row.tokens);
        const plain = tok.encode(row.text, { addSpecialTokens: false });
        expect(Array.from(plain.ids)).toEqual(row.ids_no_special);
        expect({ text: row.text, decoded: tok.decode(e.ids) }).toEqual({ text: row.text, decoded: row.decoded });
      }
    });
  }

  it('translates Oniguruma regexes: (?i:…) groups and \\s as Unicode White_Space', () => {
    const re = onigRegex("(?i:'s|'ll)|\\p{L}+|\\s+(?!\\S)|\\s+");
    expect(splitBy("IT'S we'LL a\u0085\u0085 b", re, 'Isolated')).toEqual([
      'IT',
      "'S",
      ' ',
      'we',
      "'LL",
      ' ',
      'a',
      '\u0085\u0085',
      ' ',
      'b',
    ]);
  });

  it('names an unsupported model or pre-tokenizer', () => {
    const base = { normalizer: null, post_processor: null, decoder: null, added_tokens: [] };
    expect(
      () => new BpeTokenizer({ ...base, pre_tokenizer: null, model: { type: 'Unigram' } as never }, 'x/tokenizer.json'),
    ).toThrow('x/tokenizer.json: model Unigram is not supported here; supported: BPE');
    expect(
      () =>
        new BpeTokenizer(
          { ...base, pre_tokenizer: { type: 'Punctuation' } as never, model: { type: 'BPE', vocab: {}, merges: [] } },
          'x/tokenizer.json',
        ),
    ).toThrow('x/tokenizer.json: pre_tokenizer Punctuation is not supported');
  });
});
