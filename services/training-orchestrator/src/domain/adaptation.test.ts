import { assertSettings, decide, defaultSettings, projectOfFeedbackDataset } from './adaptation';

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
      scores(0.6, { PER: [0.7, 40], ORG: [0.5, 30] }),
      scores(0.66, { PER: [0.8, 40], ORG: [0.47, 30] }),
    );
    expect(d).toMatchObject({ promote: true, gain: 0.06 });
    expect(d.reason).toContain('f1 0.6000 → 0.6600 (+0.0600)');
  });

  it('rejects a gain below min_gain', () => {
    const d = decide(gate, scores(0.6, {}), scores(0.61, {}));
    expect(d).toMatchObject({ promote: false, gain: 0.01 });
    expect(d.reason).toContain('below min_gain 0.02');
  });

  it('rejects a candidate that loses a label past the tolerance, naming it, even when the headline rises', () => {
    const d = decide(
      gate,
      scores(0.6, { PER: [0.7, 40], MISC: [0.5, 20] }),
      scores(0.7, { PER: [0.9, 40], MISC: [0.3, 20] }),
    );
    expect(d.promote).toBe(false);
    expect(d.reason).toContain('MISC 0.5000 → 0.3000');
  });

  it('does not hold labels with fewer held-out examples than min_label_support to the tolerance', () => {
    const d = decide(gate, scores(0.6, { rare: [1, 2] }), scores(0.7, { rare: [0, 2] }));
    expect(d.promote).toBe(true);
  });

  it('counts a label the candidate no longer predicts as F1 0', () => {
    const d = decide(gate, scores(0.6, { LOC: [0.5, 10] }), scores(0.7, {}));
    expect(d.promote).toBe(false);
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
