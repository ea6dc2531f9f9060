import type { EventTransport } from '@whetstone/events';
import type { InferenceRouter } from '../../application/router';

export interface Logger {
  info(obj: object, msg: string): void;
}

/** training.jobs.v1 → release deployments of deleted jobs (wired once the orchestrator publishes). */
export async function startTrainingConsumer(_transport: EventTransport, _router: InferenceRouter, _logger: Logger): Promise<{ stop(): Promise<void> }> {
  return { stop: async () => undefined };
}
