import { chooseRejectThreshold, expectedCalibrationError, fitTemperature, withTemperature } from './calibration';

describe('calibration', () => {
  it('when a model is overconfident, then the fitted temperature is above 1 and lowers ECE', () => {
    // Says 0.99 on every row but is right on 70% of them.
    const rows = Array.from({ length: 100 }, (_, i) => ({ probs: [0.99, 0.01], gold: i % 10 < 7 ? 0 : 1 }));
    const t = fitTemperature(rows);
    expect(t).toBeGreaterThan(1);
    const ece = (temp: number) =>
      expectedCalibrationError(
        rows.map((r) => {
          const p = withTemperature(r.probs, temp);
          return { confidence: Math.max(...p), correct: r.gold === p.indexOf(Math.max(...p)) };
        }),
      );
    expect(ece(1)).toBeCloseTo(0.29, 2);
    expect(ece(t)).toBeLessThan(0.05);
  });

  it('when out-of-scope rows are less confident, then the threshold rejects them within the accuracy budget', () => {
    const inScope = Array.from({ length: 100 }, (_, i) => ({
      top: 0.5 + i / 200,
      inScope: true,
      correct: i >= 10,
      predictedOutOfScope: false,
    }));
    const outOfScope = Array.from({ length: 20 }, (_, i) => ({
      top: 0.3 + i / 50,
      inScope: false,
      correct: false,
      predictedOutOfScope: false,
    }));
    const chosen = chooseRejectThreshold([...inScope, ...outOfScope], 0.02);
    expect(chosen.baseAccuracy).toBe(0.9);
    // Rejecting the 10 wrong, least confident in-scope rows costs nothing; two more right ones cost 0.02.
    expect(chosen.inScopeAccuracy).toBe(0.88);
    // Halfway between the highest rejected confidence (0.555) and the lowest kept one (0.56).
    expect(chosen.threshold).toBeCloseTo(0.5575, 10);
    expect(chosen.outOfScopeRecall).toBe(0.65);
  });

  it('when serving computes a kept row a rounding error less confident, then it is still kept', () => {
    const rows = [0.2, 0.4, 0.6, 0.8, 0.9].map((top, i) => ({
      top,
      inScope: i > 0,
      correct: i > 1,
      predictedOutOfScope: false,
    }));
    // Rejecting the wrong in-scope row at 0.4 costs nothing; the right one at 0.6 would cost 0.25.
    const chosen = chooseRejectThreshold(rows, 0.1);
    expect(chosen).toEqual({ threshold: 0.5, inScopeAccuracy: 0.75, baseAccuracy: 0.75, outOfScopeRecall: 1 });
    expect(0.6 - 1e-7 >= chosen.threshold).toBe(true);
  });
});
