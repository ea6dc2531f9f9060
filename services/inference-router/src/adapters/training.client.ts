import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import { AppError } from '@whetstone/errors';
import { JobStatus as PbJobStatus, TrainingService, type Job } from '@whetstone/proto/training/v1';
import type { JobStatus, TrainedModel, TrainedModels } from '../application/ports';

const STATUS: Partial<Record<PbJobStatus, JobStatus>> = {
  [PbJobStatus.REQUESTED]: 'requested',
  [PbJobStatus.RUNNING]: 'running',
  [PbJobStatus.COMPLETE]: 'complete',
  [PbJobStatus.FAILED]: 'failed',
  [PbJobStatus.DEPLOYED]: 'deployed',
  [PbJobStatus.CANCELLED]: 'cancelled',
};

const toModel = (j: Job): TrainedModel => ({
  jobId: j.id,
  teamId: '',
  // UNSPECIFIED is never sent by the orchestrator; a job in it is not servable.
  status: STATUS[j.status] ?? 'failed',
  baseModel: j.rootBaseModel || j.baseModel,
  modelName: j.modelName,
  bundle: j.artifactKey ? { bucket: j.artifactBucket, key: j.artifactKey } : null,
  completedAt: j.finishedAt ? timestampDate(j.finishedAt) : null,
});

/**
 * Training jobs from the orchestrator over gRPC. A complete job's bundle never
 * changes, so servable answers are cached briefly; anything else is asked again.
 */
export function trainedModelsOverRpc(client: Client<typeof TrainingService>, cacheMs = 5_000): TrainedModels {
  const cache = new Map<string, { model: TrainedModel; until: number }>();
  return {
    async get(teamId, jobId) {
      const key = `${teamId}/${jobId}`;
      const hit = cache.get(key);
      if (hit && hit.until > Date.now()) return hit.model;
      try {
        const res = await client.getJob({ caller: { teamId, keyId: '', userId: '' }, jobId });
        if (!res.job) return null;
        const model = { ...toModel(res.job), teamId };
        if (model.status === 'complete' || model.status === 'deployed')
          cache.set(key, { model, until: Date.now() + cacheMs });
        return model;
      } catch (err) {
        if (err instanceof AppError && err.kind === 'NotFound') return null;
        throw err;
      }
    },
    async listServable(teamId) {
      const res = await client.listTrainedModels({ caller: { teamId, keyId: '', userId: '' } });
      return res.jobs.map((j) => ({ ...toModel(j), teamId }));
    },
  };
}
