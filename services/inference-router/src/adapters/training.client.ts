import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { AppError } from '@whetstone/errors';
import type { Job, TrainingService } from '@whetstone/proto/training/v1';
import type { Logger } from '@whetstone/telemetry';
import type { TrainedModels } from '../application/ports';
import type { TrainedModel } from '../domain/trained-model';
import { jobStatusView } from './proto-kinds';

function modelOf(j: Job, teamId: string): TrainedModel {
  const { servable, statusLabel } = jobStatusView(j.status, j.artifactKey);
  const finishedAt = j.finishedAt ? timestampDate(j.finishedAt) : null;
  return {
    jobId: j.id,
    teamId,
    servable,
    statusLabel,
    baseModel: j.rootBaseModel || j.baseModel,
    modelName: j.modelName,
    bundle: servable ? { bucket: j.artifactBucket, key: j.artifactKey } : null,
    completedAt: finishedAt,
    updatedAt: finishedAt ?? new Date(0),
  };
}

/**
 * The read model, and the orchestrator only for the moment its events have not
 * arrived yet: a job the read model does not hold as servable (unknown, or
 * still running in its copy) is asked once of the orchestrator, so a client that
 * saw a job complete can deploy or call it at once. A servable job never costs
 * a hop: the cache in front of this keeps it, and the hot path is
 * gateway → router → model-server. Nothing read here is written to the read
 * model; only events move it.
 */
export function withOrchestratorFallback(
  readModel: TrainedModels,
  client: Client<typeof TrainingService>,
  logger: Logger,
): TrainedModels {
  return {
    ...readModel,
    async get(teamId, jobId) {
      const held = await readModel.get(teamId, jobId);
      if (held?.servable) return held;
      try {
        const res = await client.getJob({ caller: { teamId, keyId: '', userId: '' }, jobId });
        return res.job ? modelOf(res.job, teamId) : held;
      } catch (err) {
        if (err instanceof AppError && err.kind === 'NotFound') return null;
        logger.warn({ err, jobId }, 'the orchestrator did not answer; using the read model alone');
        return held;
      }
    },
  };
}
