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
    while (!this.stopping.signal.aborted) {
      const work = await this.deps.orchestrator.leaseWork(this.deps.trainerId, LEASE_WAIT_MS).catch((err: unknown) => {
        // Expected while the orchestrator starts or restarts: one line, no stack.
        const reason = err instanceof Error ? err.message : String(err);
        this.deps.logger.warn({ reason }, 'could not reach the orchestrator; retrying');
        return 'unreachable' as const;
      });
      if (work === 'unreachable') await new Promise((r) => setTimeout(r, RETRY_AFTER_MS));
      else if (work?.kind === 'job') await runTrainingJob(this.deps, work, this.stopping.signal);
      else if (work?.kind === 'evaluation') await runEvaluation(this.deps, work);
    }
  }

  /** Stops after aborting the current job (its lease expires and another trainer resumes it). */
  stop(): void {
    this.stopping.abort();
  }
}
