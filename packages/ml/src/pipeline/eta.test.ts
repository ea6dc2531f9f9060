import { EtaEstimator } from './eta';

describe('EtaEstimator', () => {
  it('when the first steps are slow (warm-up), then the first-epoch estimate leaves them out', () => {
    // 100 steps per epoch, 3 epochs; the first 5 steps take 5 s, then 10 ms a step.
    const eta = new EtaEstimator(300, 100, 0, 0);
    let now = 0;
    for (let step = 1; step <= 50; step++) {
      now += step <= 5 ? 1000 : 10;
      eta.observe(step, now);
    }
    expect(eta.etaSeconds(50, now)).toBe(3); // 250 steps × 10 ms, not 250 × (5.45 s / 50)
  });

  it('when an epoch has ended, then the estimate is that epoch’s pace, overhead included', () => {
    const eta = new EtaEstimator(300, 100, 0, 0);
    eta.observe(100, 2000);
    eta.epochEnded(100, 3000); // 1 s of checkpoint writes on top of 2 s of steps
    expect(eta.etaSeconds(100, 3000)).toBe(6);
    expect(eta.etaSeconds(150, 4500)).toBe(5);
  });

  it('when held-out scoring and checkpoints take time, then the training rate leaves them out and the ETA does not', () => {
    const eta = new EtaEstimator(300, 100, 0, 0);
    for (let step = 1; step <= 100; step++) eta.observe(step, step * 20);
    eta.exclude(1000); // 2 s of steps, then 1 s of scoring before the report
    expect(eta.trainingMsPerStep(100, 3000)).toBe(20); // from the warm-up mark (step 5, 100 ms), scoring left out
    eta.exclude(500); // and a checkpoint
    eta.epochEnded(100, 3500);
    expect(eta.trainingMsPerStep(100, 3500)).toBe(20);
    expect(eta.msPerStep(100, 3500)).toBe(35);
    expect(eta.etaSeconds(100, 3500)).toBe(7);
  });

  it('when a run resumes mid-way, then steps before the resume do not count as progress', () => {
    const eta = new EtaEstimator(300, 100, 200, 0);
    eta.observe(210, 1000);
    eta.observe(220, 2000);
    expect(eta.etaSeconds(220, 2000)).toBe(8); // 80 steps at 100 ms, measured after the warm-up mark
  });

  it('when nothing has been measured, then the estimate is 0', () => {
    expect(new EtaEstimator(10, 10, 0, 0).etaSeconds(0, 5)).toBe(0);
  });
});
