import { decoderTokens, extractionTokens } from './billing-tokens';
import { shapeFeatures, tokenize, wordNgrams } from './tokenize';

describe('tokenizer', () => {
  it('when text has words, numbers and punctuation, then each is a token whose offsets slice the original', () => {
    const text = "O'Neil paid $1,200.50 on 3 May — in New-York.";
    const tokens = tokenize(text);
    expect(tokens.map((t) => t.text)).toEqual([
      "O'Neil",
      'paid',
      '$',
      '1,200.50',
      'on',
      '3',
      'May',
      '—',
      'in',
      'New-York',
      '.',
    ]);
    for (const t of tokens) expect(text.slice(t.start, t.end)).toBe(t.text);
  });

  it('when shapes are computed, then capitalisation and digits are flagged', () => {
    expect(shapeFeatures('London')).toEqual([1, 0, 0, 0, 0, 0, 0]);
    expect(shapeFeatures('NASA')).toEqual([1, 1, 0, 0, 0, 0, 0]);
    expect(shapeFeatures('1862')).toEqual([0, 0, 0, 1, 1, 0, 0]);
  });

  it('when n-grams are built, then unigrams and bigrams are lower-cased', () => {
    expect(wordNgrams('Top up card')).toEqual(['top', 'up', 'card', 'top up', 'up card']);
  });
});

describe('billing tokens', () => {
  it('when a decoder reads text, then each UTF-8 byte is a token', () => {
    expect(decoderTokens('héllo')).toBe(6);
    expect(decoderTokens('')).toBe(0);
  });

  it('when extraction reads text, then words and single symbols count and whitespace does not', () => {
    expect(extractionTokens('Ada Lovelace, born in 1815.')).toBe(7);
    expect(extractionTokens('  \n ')).toBe(0);
    expect(extractionTokens('São Paulo!!')).toBe(4);
  });
});
