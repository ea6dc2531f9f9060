import type { Artifacts, Failpoints, Logger, Orchestrator, TrainingEngine } from './ports';

/** What every use case may use: ports only. */
export interface UseCaseDeps {
  orchestrator: Orchestrator;
  artifacts: Artifacts;
  engine: TrainingEngine;
  logger: Logger;
  /** Names this worker in leases and logs. */
  trainerId: string;
  /** Where tests make the process die on purpose; none in production. */
  failpoints?: Failpoints;
}
