import { PROGRESS_LOG_EVERY_MS, progressLine, shouldReport, type Progress } from './progress';

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
});
