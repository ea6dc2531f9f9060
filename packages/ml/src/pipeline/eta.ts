/**
 * Time left in a training run. The first steps pay for warm-up (kernel sessions, caches, the first
 * checkpoint's allocation), so a rate from the start overstates what is left, by 10× on a first report.
 * Within the first epoch the rate leaves out the first `warmupShare` of its steps; after an epoch ends,
 * the estimate is the last whole epoch's seconds per step (its checkpoint writes included) times the
 * steps left. The training rate ({@link trainingMsPerStep}) is the same pace without the time the run
 * reported as not training (held-out scoring, checkpoints).
 */
export class EtaEstimator {
  private epochStartMs: number;
  private epochStartStep: number;
  private warmMark: { ms: number; step: number } | null = null;
  private lastEpochMsPerStep: number | null = null;
  private lastEpochTrainingMsPerStep: number | null = null;
  /** Milliseconds of the current epoch spent on something other than its steps. */
  private excludedMs = 0;

  constructor(
    private readonly totalSteps: number,
    private readonly stepsPerEpoch: number,
    startStep: number,
    nowMs: number,
    private readonly warmupShare = 0.05,
  ) {
    this.epochStartMs = nowMs;
    this.epochStartStep = startStep;
  }

  /** Records progress within the current epoch. */
  observe(step: number, nowMs: number): void {
    if (!this.warmMark && step - this.epochStartStep >= Math.max(1, this.stepsPerEpoch * this.warmupShare))
      this.warmMark = { ms: nowMs, step };
  }

  /** Records time the current epoch spent after its steps on something else (held-out scoring, checkpoints). */
  exclude(ms: number): void {
    this.excludedMs += ms;
  }

  /** Marks the end of an epoch (after its checkpoints), so the next estimates use its pace. */
  epochEnded(step: number, nowMs: number): void {
    const steps = step - this.epochStartStep;
    if (steps > 0) {
      this.lastEpochMsPerStep = (nowMs - this.epochStartMs) / steps;
      this.lastEpochTrainingMsPerStep = (nowMs - this.epochStartMs - this.excludedMs) / steps;
    }
    this.epochStartMs = nowMs;
    this.epochStartStep = step;
    this.warmMark = null;
    this.excludedMs = 0;
  }

  /** Milliseconds per step of training alone: {@link msPerStep} without the excluded time. */
  trainingMsPerStep(step: number, nowMs: number): number | null {
    if (this.lastEpochTrainingMsPerStep !== null) return this.lastEpochTrainingMsPerStep;
    const from = this.from(step);
    return step > from.step ? (nowMs - from.ms - this.excludedMs) / (step - from.step) : null;
  }

  /** Where the current epoch's rate is measured from: its warm-up mark once passed, else its start. */
  private from(step: number): { ms: number; step: number } {
    return this.warmMark && step > this.warmMark.step
      ? this.warmMark
      : { ms: this.epochStartMs, step: this.epochStartStep };
  }

  /** Milliseconds per step: the last whole epoch's, else the current epoch's after warm-up, else since it began. */
  msPerStep(step: number, nowMs: number): number | null {
    if (this.lastEpochMsPerStep !== null) return this.lastEpochMsPerStep;
    const from = this.from(step);
    return step > from.step ? (nowMs - from.ms) / (step - from.step) : null;
  }

  /** Seconds left, rounded; 0 when nothing is known yet. */
  etaSeconds(step: number, nowMs: number): number {
    const ms = this.msPerStep(step, nowMs);
    return ms === null ? 0 : Math.round((Math.max(0, this.totalSteps - step) * ms) / 1000);
  }
}
