import type { UseCaseDeps } from './deps';
import { runEvaluation } from './run-evaluation';
import { runTrainingJob } from './run-training-job';

/** How long one LeaseWork call waits for work. */
export const LEASE_WAIT_MS = 5_000;
/** Pause before asking again when the orchestrator cannot be reached. */
export const RETRY_AFTER_MS = 1_000;

/** A stateless worker: lease work (a training job or an evaluation), run it, repeat until stopped. */
export class WorkLoop {
  private readonly stopping = new AbortController();

  constructor(private readonly deps: UseCaseDeps) {}

  async run(): Promise<void> {
    // 'starting' until the first answer: the orchestrator may still be coming up beside us (pnpm start, a
    // rollout), which is worth one info line, not a warning. An outage after that is one warning, not one per retry.
    let state: 'starting' | 'waiting' | 'up' | 'down' = 'starting';
    while (!this.stopping.signal.aborted) {
      const work = await this.deps.orchestrator
        .leaseWork(this.deps.trainerId, LEASE_WAIT_MS)
        .catch((err: unknown) => ({ unreachable: err instanceof Error ? err.message : String(err) }));
      if (work && 'unreachable' in work) {
        const reason = work.unreachable;
        if (state === 'starting') this.deps.logger.info({ reason }, 'waiting for the orchestrator to answer');
        if (state === 'up') this.deps.logger.warn({ reason }, 'lost the orchestrator; retrying every second');
        state = state === 'starting' || state === 'waiting' ? 'waiting' : 'down';
        await new Promise((r) => setTimeout(r, RETRY_AFTER_MS));
        continue;
      }
      if (state === 'down') this.deps.logger.info({}, 'the orchestrator answers again');
      state = 'up';
      if (work?.kind === 'job') await runTrainingJob(this.deps, work, this.stopping.signal);
      else if (work?.kind === 'evaluation') await runEvaluation(this.deps, work);
    }
  }

  /** Stops after aborting the current job (its lease expires and another trainer resumes it). */
  stop(): void {
    this.stopping.abort();
  }
}
