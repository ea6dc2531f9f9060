import type { TrainedModels } from '../application/ports';

export interface Logger {
  warn(obj: object, msg: string): void;
}

/**
 * Training jobs as the router sees them. Until the training-orchestrator
 * deployable exists there are no jobs, so every job id is unknown (404).
 */
export function trainedModelsOverRpc(_addr: string, _logger: Logger): TrainedModels {
  return {
    get: async () => null,
    listServable: async () => [],
  };
}
