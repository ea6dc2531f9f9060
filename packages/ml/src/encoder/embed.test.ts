import { extractBaseModel } from '../zeroshot/base-model';
import { EMBEDDING_DIMENSIONS } from './train';

const norm = (v: Float32Array) => Math.hypot(...v);
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('encoder embeddings (whetstone-extract-base)', () => {
  const texts = [
    'Ada Lovelace wrote the first program.',
    'My card has not arrived yet.',
    'a long text '.repeat(200),
    '',
  ];

  it('when texts are embedded together, then each is unit length and equals its embedding alone', () => {
    const together = extractBaseModel.embed!(texts);
    expect(together).toHaveLength(4);
    for (const [i, v] of together.slice(0, 3).entries()) {
      expect(v).toHaveLength(EMBEDDING_DIMENSIONS);
      // The base's encoder part is zeros (state weight 0): its words' GloVe mean is all there is.
      expect(v.slice(0, 128).every((x) => x === 0)).toBe(true);
      expect(norm(v)).toBeCloseTo(1, 5);
      const [alone] = extractBaseModel.embed!([texts[i]!]);
      expect(cosine(v, alone!)).toBeCloseTo(1, 5);
    }
  });

  it('when a text has no words, then its embedding is all zeros; the same text always gives the same vector', () => {
    for (const [v] of [extractBaseModel.embed!(['']), extractBaseModel.embed!(['?!'])])
      expect([...v!].every((x) => x === 0)).toBe(true);
    const [a, b] = extractBaseModel.embed!([texts[0]!, texts[0]!]);
    expect([...a!]).toEqual([...b!]);
  });
});
