import { classificationPRF, relationClassificationPRF, relationPRF, spanPRF } from './metrics';

describe('evaluation metrics', () => {
  it('when spans match only with exact type and offsets, then micro and per-label P/R/F1 follow', () => {
    const gold = [
      [
        { start: 0, end: 5, label: 'person' },
        { start: 10, end: 15, label: 'location' },
      ],
      [{ start: 0, end: 3, label: 'organization' }],
    ];
    const pred = [
      [
        { start: 0, end: 5, label: 'person' },
        { start: 10, end: 14, label: 'location' },
      ],
      [{ start: 0, end: 3, label: 'location' }],
    ];
    const r = spanPRF(gold, pred);
    // 1 true positive, 2 false positives, 2 false negatives.
    expect(r.precision).toBeCloseTo(1 / 3);
    expect(r.recall).toBeCloseTo(1 / 3);
    expect(r.f1).toBeCloseTo(1 / 3);
    expect(r.perLabel.person).toEqual({ precision: 1, recall: 1, f1: 1, support: 1 });
    expect(r.perLabel.location).toMatchObject({ precision: 0, recall: 0, support: 1 });
    expect(r.perLabel.organization).toMatchObject({ recall: 0, support: 1 });
  });

  it('when nothing is predicted or gold is empty, then figures are zero rather than NaN', () => {
    expect(spanPRF([[]], [[]])).toEqual({ precision: 0, recall: 0, f1: 0, perLabel: {}, perExample: [[0, 0, 0]] });
    expect(spanPRF([[{ start: 0, end: 1, label: 'x' }]], [[]]).recall).toBe(0);
  });

  it('when classifications are multi-label, then each label is scored', () => {
    const r = classificationPRF([['a', 'b'], ['c']], [['a'], ['c', 'd']]);
    expect(r.precision).toBeCloseTo(2 / 3);
    expect(r.recall).toBeCloseTo(2 / 3);
    expect(r.perLabel.b).toMatchObject({ recall: 0, support: 1 });
  });

  it('when relations differ in a single argument offset, then they do not match', () => {
    const head = { start: 0, end: 4, label: 'person' };
    const tail = { start: 12, end: 18, label: 'organization' };
    const r = relationPRF(
      [[{ label: 'works_for', head, tail }]],
      [[{ label: 'works_for', head, tail: { ...tail, end: 17 } }]],
    );
    expect(r.f1).toBe(0);
  });

  it('when relations are classified on given spans, then micro F1 leaves no-relation out and accuracy counts it', () => {
    // Gold and predicted label per pair; null is no relation (TACRED's no_relation, SemEval's Other).
    const gold = ['works_for', 'works_for', 'born_in', null, null, 'born_in'];
    const pred = ['works_for', 'born_in', 'born_in', null, 'works_for', null];
    const r = relationClassificationPRF(gold, pred);
    // works_for: tp 1, fp 1 (the no-relation pair), fn 1; born_in: tp 1, fp 1, fn 1.
    expect(r.precision).toBeCloseTo(2 / 4);
    expect(r.recall).toBeCloseTo(2 / 4);
    expect(r.perLabel.works_for).toEqual({ precision: 0.5, recall: 0.5, f1: 0.5, support: 2 });
    expect(Object.keys(r.perLabel)).toEqual(['born_in', 'works_for']);
    expect(r.accuracy).toBeCloseTo(3 / 6);
    expect(relationClassificationPRF([null, null], [null, null])).toMatchObject({ f1: 0, accuracy: 1 });
  });

  it('when gold and predictions have different lengths, then it refuses to score', () => {
    expect(() => spanPRF([[]], [])).toThrow(/examples/);
  });
});
