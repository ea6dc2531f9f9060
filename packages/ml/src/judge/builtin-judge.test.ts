import { builtinJudgeCanScore, builtinJudgeScore } from './builtin-judge';

const mention = (text: string, start: number, confidence: number) => ({
  text,
  start,
  end: start + text.length,
  confidence,
});

describe('builtinJudgeScore', () => {
  it('when the served model is sure and the independent model finds the same mentions, then the score is 1', () => {
    const output = { entities: { person: [mention('Ada', 0, 1)], location: [mention('London', 13, 1)] } };
    const r = builtinJudgeScore({ output, independent: output });
    expect(r).toMatchObject({ score: 1, confidence: 1, agreement: 1, items: 2 });
    expect(r.rationale).toMatch(/^built-in judge \(not an LLM\)/);
  });

  it('when confidences are lower, then the confidence ingredient is their product and the score mixes it 3:1 with agreement', () => {
    const output = { entities: { person: [mention('Ada', 0, 0.8), mention('Bob', 8, 0.5)] } };
    const independent = { entities: { person: [mention('Ada', 0, 0.9)], location: [] } };
    const r = builtinJudgeScore({ output, independent });
    expect(r.confidence).toBeCloseTo(0.4, 6);
    expect(r.agreement).toBeCloseTo((2 * 1) / 3, 4);
    expect(r.score).toBeCloseTo(0.75 * 0.4 + 0.25 * (2 / 3), 4);
    expect(r.rationale).toContain('agrees on 1 of 2 (it found 1)');
  });

  it('when the independent model gives the same span another label, then it does not count as agreement', () => {
    const output = { entities: { person: [mention('Paris', 0, 0.9)] } };
    const independent = { entities: { location: [mention('Paris', 0, 0.9)] } };
    expect(builtinJudgeScore({ output, independent }).agreement).toBe(0);
  });

  it('when both outputs are empty, then they agree and the score is 1', () => {
    const empty = { entities: { person: [], location: [] } };
    expect(builtinJudgeScore({ output: empty, independent: empty }).score).toBe(1);
  });

  it('when the served output is empty but the independent model found a mention, then agreement is 0', () => {
    const r = builtinJudgeScore({
      output: { entities: { person: [] } },
      independent: { entities: { person: [mention('Ada', 0, 0.7)] } },
    });
    expect(r).toMatchObject({ confidence: 1, agreement: 0, score: 0.75 });
  });

  it('when classification tasks are judged, then each task label counts as one item, single- or multi-label', () => {
    const output = {
      sentiment: { label: 'positive', confidence: 0.9 },
      topics: [
        { label: 'sport', confidence: 0.5 },
        { label: 'news', confidence: 1 },
      ],
    };
    const independent = { sentiment: { label: 'positive', confidence: 0.6 }, topics: ['sport'] };
    const r = builtinJudgeScore({ output, independent });
    expect(r.items).toBe(3);
    expect(r.confidence).toBeCloseTo(0.45, 6);
    expect(r.agreement).toBeCloseTo(0.8, 6);
  });

  it('when a score is computed, then it stays within [0, 1] even for out-of-range confidences', () => {
    const output = { entities: { person: [mention('Ada', 0, 1.7)] } };
    const r = builtinJudgeScore({ output, independent: { entities: { person: [mention('Ada', 0, -2)] } } });
    expect(r.score).toBeGreaterThanOrEqual(0);
    expect(r.score).toBeLessThanOrEqual(1);
  });
});

describe('builtinJudgeCanScore', () => {
  it('when an output has only relations, then the built-in judge cannot score it; entities or tasks it can', () => {
    expect(builtinJudgeCanScore({ relation_extraction: {} })).toBe(false);
    expect(builtinJudgeCanScore({ entities: {} })).toBe(true);
    expect(builtinJudgeCanScore({ sentiment: 'positive' })).toBe(true);
  });
});
