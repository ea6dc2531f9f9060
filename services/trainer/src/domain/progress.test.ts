import { PROGRESS_LOG_EVERY_MS, progressLine, shouldReport, stepMetricsOf, type Progress } from './progress';

const p = (step: number, extra: Partial<Progress> = {}): Progress => ({
  step,
  totalSteps: 100,
  epoch: 2,
  loss: 0.5,
  learningRate: 0.002,
  examplesPerSecond: 80,
  etaSeconds: 30,
  ...extra,
});

describe('progress', () => {
  it('when reports come every 500 ms, then the job log keeps one line per few seconds and the last', () => {
    let last = -Infinity;
    const logged: number[] = [];
    for (let step = 1; step <= 100; step++) {
      const now = step * 500;
      if (shouldReport(p(step), now, last, PROGRESS_LOG_EVERY_MS)) {
        last = now;
        logged.push(step);
      }
    }
    expect(logged).toEqual([1, 11, 21, 31, 41, 51, 61, 71, 81, 91, 100]);
  });

  it('when progress carries held-out figures, then the line names them', () => {
    expect(progressLine(p(50, { metrics: { f1: 0.6491, headline: 'entity_span_micro_f1' } }))).toBe(
      'step 50/100 epoch 2 loss 0.5000 80 rows/s ETA 30s held-out span F1 0.6491',
    );
    expect(progressLine(p(50))).toBe('step 50/100 epoch 2 loss 0.5000 80 rows/s ETA 30s');
  });

  it("when a decoder's step ends an epoch, then its report is never dropped and its line and figures carry the held-out loss", () => {
    const end = p(40, { tokenAccuracy: 0.61234, validation: { loss: 1.25, tokenAccuracy: 0.5 } });
    expect(shouldReport(end, 1_000, 900, PROGRESS_LOG_EVERY_MS)).toBe(true);
    expect(shouldReport(p(39, { tokenAccuracy: 0.6 }), 1_000, 900, PROGRESS_LOG_EVERY_MS)).toBe(false);
    expect(progressLine(end)).toBe(
      'step 40/100 epoch 2 loss 0.5000 token accuracy 0.6123 80 rows/s ETA 30s held-out loss 1.2500 token accuracy 0.5000',
    );
    expect(stepMetricsOf(end)).toEqual({
      step: 40,
      totalSteps: 100,
      epoch: 2,
      trainLoss: 0.5,
      trainMeanTokenAccuracy: 0.61234,
      validLoss: 1.25,
      validMeanTokenAccuracy: 0.5,
    });
    expect(stepMetricsOf(p(39))).toEqual({ step: 39, totalSteps: 100, epoch: 2, trainLoss: 0.5 });
  });
});
