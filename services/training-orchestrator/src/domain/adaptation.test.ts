import {
  assertSettings,
  decide,
  defaultSettings,
  familyZ,
  pairedInterval,
  projectOfFeedbackDataset,
} from './adaptation';

const gate = { metric: 'f1' as const, minGain: 0.02, f1Tolerance: 0.05, minLabelSupport: 5 };
const scores = (f1: number, perLabel: Record<string, [number, number]>) => ({
  f1,
  precision: f1,
  recall: f1,
  per_label: Object.fromEntries(Object.entries(perLabel).map(([l, [f, support]]) => [l, { f1: f, support }])),
});

describe('the adaptive gate', () => {
  it('promotes a candidate that gains at least min_gain and drops no label past the tolerance', () => {
    const d = decide(
      gate,
      scores(0.6, { PER: [0.7, 400], ORG: [0.5, 300] }),
      scores(0.66, { PER: [0.8, 400], ORG: [0.47, 300] }),
    );
    expect(d).toMatchObject({ promote: true, gain: 0.06 });
    expect(d.reason).toContain('f1 0.6000 → 0.6600 (+0.0600)');
  });

  it('rejects a gain inside the noise band of the held-out set, however it clears min_gain', () => {
    const d = decide(gate, { f1: 0.4187, examples: 1003 }, { f1: 0.4527, examples: 1003 });
    expect(d.promote).toBe(false);
    expect(d.reason).toContain('within the noise of the held-out set (95% band ±0.0434)');
    expect(decide(gate, { f1: 0.4187, examples: 1003 }, { f1: 0.5105, examples: 1003 }).promote).toBe(true);
  });

  it('pairs the two evaluations row by row when they carry per-row counts (paired bootstrap)', () => {
    // 400 rows of one gold span each; the baseline finds 240, the candidate 270 (the same 240 plus 30).
    const rows = (hits: number) =>
      Array.from({ length: 400 }, (_, i): [number, number, number] => (i < hits ? [1, 0, 0] : [0, 1, 1]));
    const interval = pairedInterval(rows(240), rows(270))!;
    expect(interval.low).toBeGreaterThan(0);
    const better = decide(gate, { f1: 0.6, per_example: rows(240) }, { f1: 0.675, per_example: rows(270) });
    expect(better.promote).toBe(true);
    expect(better.reason).toContain('paired bootstrap interval');
    // A candidate that wins 10 rows and loses 6 others (+0.01): even with no min_gain, not evidence.
    const mixed = rows(240).map((r, i): [number, number, number] =>
      i >= 240 && i < 250 ? [1, 0, 0] : i < 6 ? [0, 1, 1] : r,
    );
    const noise = decide(
      { ...gate, minGain: 0 },
      { f1: 0.6, per_example: rows(240) },
      { f1: 0.61, per_example: mixed },
    );
    expect(noise.reason).toContain('includes 0');
    expect(noise.promote).toBe(false);
    expect(pairedInterval(rows(3), rows(3).slice(1))).toBeNull();
  });

  it('credits only the feedback: a candidate no better than a control retrained without it is rejected', () => {
    const rows = (hits: number) =>
      Array.from({ length: 400 }, (_, i): [number, number, number] => (i < hits ? [1, 0, 0] : [0, 1, 1]));
    const baseline = { f1: 0.6, per_example: rows(240) };
    const candidate = { f1: 0.675, per_example: rows(270) };
    const longer = decide(gate, baseline, candidate, { f1: 0.67, per_example: rows(268) });
    expect(longer.promote).toBe(false);
    expect(longer.reason).toContain('the gain comes from training longer');
    const helped = decide(gate, baseline, candidate, { f1: 0.61, per_example: rows(244) });
    expect(helped.promote).toBe(true);
    expect(helped.reason).toContain('beats a control retrained the same way without the feedback');
    expect(decide(gate, { loss: 1.5 }, { loss: 1.2 }, { loss: 1.25 }).promote).toBe(true);
    expect(decide(gate, { loss: 1.5 }, { loss: 1.2 }, { loss: 1.21 }).promote).toBe(false);
  });

  it('widens the per-label band for the number of labels checked (Bonferroni)', () => {
    expect(familyZ(1)).toBeCloseTo(1.96, 2);
    expect(familyZ(77)).toBeCloseTo(3.41, 2);
  });

  it('rejects a gain below min_gain', () => {
    const d = decide(gate, scores(0.6, {}), scores(0.61, {}));
    expect(d).toMatchObject({ promote: false, gain: 0.01 });
    expect(d.reason).toContain('below min_gain 0.02');
  });

  it('rejects a candidate that loses a label past the tolerance, naming it, even when the headline rises', () => {
    const d = decide(
      gate,
      scores(0.6, { PER: [0.7, 40], MISC: [0.5, 200] }),
      scores(0.7, { PER: [0.9, 40], MISC: [0.3, 200] }),
    );
    expect(d.promote).toBe(false);
    expect(d.reason).toContain('MISC 0.5000 → 0.3000');
  });

  it('does not hold labels with fewer held-out examples than min_label_support to the tolerance', () => {
    const d = decide(
      gate,
      scores(0.6, { big: [0.6, 2000], rare: [1, 2] }),
      scores(0.7, { big: [0.7, 2000], rare: [0, 2] }),
    );
    expect(d.promote).toBe(true);
  });

  it('allows a drop within the noise band of a label measured on few examples (one example of 13 is 0.077)', () => {
    expect(
      decide(
        gate,
        scores(0.6, { big: [0.6, 2000], rare: [0.8, 13] }),
        scores(0.7, { big: [0.7, 2000], rare: [0.723, 13] }),
      ).promote,
    ).toBe(true);
    expect(
      decide(
        gate,
        scores(0.6, { big: [0.6, 2000], rare: [0.8, 13] }),
        scores(0.7, { big: [0.7, 2000], rare: [0.4, 13] }),
      ).promote,
    ).toBe(false);
  });

  it('counts a label the candidate no longer predicts as F1 0', () => {
    const d = decide(gate, scores(0.6, { big: [0.6, 2000], LOC: [0.5, 100] }), scores(0.7, { big: [0.7, 2000] }));
    expect(d.promote).toBe(false);
  });

  it('gates decoders on held-out loss: it must fall by at least min_gain', () => {
    const fell = decide(gate, { loss: 1.5, perplexity: 4.48 }, { loss: 1.2, perplexity: 3.32 });
    expect(fell).toMatchObject({ promote: true, gain: 0.3 });
    expect(fell.reason).toContain('held-out loss 1.5000 → 1.2000');
    expect(decide(gate, { loss: 1.5 }, { loss: 1.49 }).promote).toBe(false);
    // With generation F1 beside it (decoder evaluations report both), the loss still decides.
    const withF1 = decide(
      gate,
      { loss: 1.5, perplexity: 4.48, f1: 0.4, precision: 0.4, recall: 0.4 },
      { loss: 1.2, perplexity: 3.32, f1: 0.3, precision: 0.3, recall: 0.3 },
    );
    expect(withF1.promote).toBe(true);
    expect(withF1.reason).toMatch(/held-out loss/);
    expect(decide(gate, { loss: 1.5 }, { loss: 1.7 })).toMatchObject({ promote: false, gain: -0.2 });
  });

  it('rejects when an evaluation lacks the metric', () => {
    expect(decide(gate, {}, scores(0.7, {})).promote).toBe(false);
  });
});

describe('adaptive settings', () => {
  it('accepts the defaults and names every bad field at once', () => {
    expect(() => assertSettings({ ...defaultSettings('p'), enabled: true })).not.toThrow();
    const bad = { ...defaultSettings('p'), minCorrections: 0, metric: 'auc' as never, minGain: 2, feedbackWeight: 50 };
    expect(() => assertSettings(bad)).toThrow(
      expect.objectContaining({
        fieldErrors: expect.arrayContaining([
          expect.objectContaining({ field: 'min_corrections' }),
          expect.objectContaining({ field: 'metric' }),
          expect.objectContaining({ field: 'min_gain' }),
          expect.objectContaining({ field: 'feedback_weight' }),
        ]),
      }),
    );
  });

  it('knows a feedback dataset by its name', () => {
    expect(projectOfFeedbackDataset('feedback-0195f3a1-2b3c-7d4e-8f90-123456789abc')).toBe(
      '0195f3a1-2b3c-7d4e-8f90-123456789abc',
    );
    expect(projectOfFeedbackDataset('feedback-notes')).toBeNull();
  });
});
