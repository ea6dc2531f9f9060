import { loadGlove } from '../assets/load';
import { Rng } from '../nn';
import { readBrown } from './brown';
import { featurize } from './features';
import { ENCODER_CONFIG, makeBatch, maskTokens, maskVocabulary } from './model';
import { PRETRAINED_NAME_LABELS, silverExamples } from './pretrain';

jest.setTimeout(120_000);

describe('pretraining data from real text', () => {
  const brown = readBrown();

  it('reads the Brown corpus with its hand-assigned tags', () => {
    expect(brown.length).toBeGreaterThan(50_000);
    expect(brown[0]!.words.slice(0, 3)).toEqual(['The', 'Fulton', 'County']);
    expect(brown[0]!.tags.slice(0, 3)).toEqual(['at', 'np-tl', 'nn-tl']);
    expect(brown.every((s) => s.words.length === s.tags.length)).toBe(true);
  });

  it('labels silver spans only where the tags say a proper-noun run, under the names the base follows', () => {
    const rows = silverExamples(brown, 60, 7);
    expect(rows).toHaveLength(60);
    expect(silverExamples(brown, 60, 7)).toEqual(rows);
    const spans = rows.flatMap((r) => (r.entities ?? []).map((e) => ({ ...e, text: r.text!.slice(e.start, e.end) })));
    expect(spans.length).toBeGreaterThan(10);
    for (const s of spans) {
      expect(s.text).toMatch(/^\p{Lu}/u);
      expect(s.text).not.toMatch(/^(Mr|Mrs|Dr)\.? /);
      expect(s.text).not.toMatch(/'s?$/);
      expect(PRETRAINED_NAME_LABELS.has(s.label)).toBe(true);
    }
    for (const r of rows) for (const e of r.entities ?? []) expect(r.labels).toContain(e.label);
  });
});

describe('masked tokens', () => {
  it("hides a chosen word from its own and its neighbours' inputs, and names the word to restore", () => {
    const glove = loadGlove();
    const vocabulary = maskVocabulary(glove, 2000);
    expect(vocabulary.vectors.shape).toEqual([2000, 100]);
    const chunks = ['the cat sat on the mat', 'a dog'].map((t) => featurize(t, glove, ENCODER_CONFIG.hashLog2));
    const batch = makeBatch(chunks, glove);
    const before = { dense: batch.dense.data.slice(), offsets: batch.hashOffsets.slice() };
    const masked = maskTokens(batch, chunks, vocabulary, 0.5, new Rng(3));
    expect(masked.rows.length).toBeGreaterThan(0);
    const width = batch.dense.data.length / (batch.size * batch.time);
    masked.rows.forEach((row, i) => {
      const b = Math.floor(row / batch.time);
      const word = chunks[b]!.tokens[row % batch.time]!.text;
      expect(vocabulary.ids.get(word)).toBe(masked.targets[i]);
      expect(batch.dense.data.subarray(row * width, (row + 1) * width).every((v) => v === 0)).toBe(true);
      expect(batch.hashOffsets[row + 1]).toBe(batch.hashOffsets[row]);
      expect(before.offsets[row + 1]! - before.offsets[row]!).toBeGreaterThan(0);
    });
    // Rows not chosen keep their inputs.
    for (let r = 0; r < batch.size * batch.time; r++) {
      if (masked.rows.includes(r)) continue;
      expect(batch.dense.data.subarray(r * width, (r + 1) * width)).toEqual(
        before.dense.subarray(r * width, (r + 1) * width),
      );
      expect(batch.hashOffsets[r + 1]! - batch.hashOffsets[r]!).toBe(before.offsets[r + 1]! - before.offsets[r]!);
    }
  });
});
