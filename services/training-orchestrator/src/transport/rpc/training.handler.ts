import { requireCaller, type ServiceImpl } from '@whetstone/rpc';
import { errors, Reasons } from '@whetstone/errors';
import type { TrainingService } from '@whetstone/proto/training/v1';
import { createEvaluation, getEvaluation } from '../../application/evaluations';
import { createJob } from '../../application/create-job';
import type { UseCaseDeps } from '../../application/deps';
import { deleteJob } from '../../application/delete-job';
import { getDownload } from '../../application/download';
import { followLogs } from '../../application/follow-logs';
import { getJob, listJobs, listTrainedModels } from '../../application/get-job';
import { listCheckpoints } from '../../application/checkpoints';
import { listLogs } from '../../application/job-logs';
import { pushToHub } from '../../application/push-to-hub';
import { stopJob } from '../../application/stop-job';
import { jobStatusFromPb, jobStatusToPb, trainingTypeFromPb } from '../../contracts/enums';
import { checkpointToPb, evaluationToPb, fineTuningFromPb, jobToPb, logToPb } from './training.mapper';

/** An enum value this build does not know is a bad request, not "unspecified". */
function knownStatus(status: number) {
  if (status === 0) return undefined;
  const known = jobStatusFromPb(status);
  if (!known)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'Invalid status filter', [
      { field: 'status', message: 'is not a job status' },
    ]);
  return known;
}

/** TrainingService: the public side, scoped to the caller's team. */
export function trainingHandler(deps: UseCaseDeps): ServiceImpl<typeof TrainingService> {
  return {
    async createJob(req) {
      const job = await createJob(deps, requireCaller(req.caller), {
        baseModel: req.baseModel,
        datasets: req.datasets,
        modelName: req.modelName,
        trainingType: trainingTypeFromPb(req.trainingType),
        nrEpochs: req.nrEpochs,
        learningRate: req.learningRate,
        learningRateMultiplier: req.learningRateMultiplier,
        projectId: req.projectId,
        outOfScopeLabel: req.outOfScopeLabel,
        fineTuning: req.fineTuning ? fineTuningFromPb(req.fineTuning) : null,
        seed: req.seed,
      });
      return { job: jobToPb(job) };
    },
    async listJobs(req) {
      const out = await listJobs(deps, requireCaller(req.caller), {
        status: knownStatus(req.status),
        projectId: req.projectId,
        fineTuningOnly: req.fineTuningOnly,
        afterId: req.afterId,
        limit: req.limit,
        offset: req.offset,
      });
      return { jobs: out.rows.map(jobToPb), total: out.total };
    },
    async getJob(req) {
      return { job: jobToPb(await getJob(deps, requireCaller(req.caller), req.jobId)) };
    },
    async stopJob(req) {
      return { job: jobToPb(await stopJob(deps, requireCaller(req.caller), req.jobId)) };
    },
    async deleteJob(req) {
      await deleteJob(deps, requireCaller(req.caller), req.jobId);
      return {};
    },
    async listLogs(req) {
      return { logs: (await listLogs(deps, requireCaller(req.caller), req.jobId)).map(logToPb) };
    },
    async *streamLogs(req, ctx) {
      for await (const batch of followLogs(deps, requireCaller(req.caller), req.jobId, req.afterId, ctx.signal))
        yield { logs: batch.logs.map(logToPb), status: jobStatusToPb(batch.status) };
    },
    async listCheckpoints(req) {
      return { checkpoints: (await listCheckpoints(deps, requireCaller(req.caller), req.jobId)).map(checkpointToPb) };
    },
    async getDownload(req) {
      const d = await getDownload(deps, requireCaller(req.caller), req.jobId, req.checkpointId);
      return { downloadUrl: d.url, expiresInSeconds: d.expiresIn, fileName: d.fileName, sizeBytes: BigInt(d.size) };
    },
    async listTrainedModels(req) {
      return { jobs: (await listTrainedModels(deps, requireCaller(req.caller))).map(jobToPb) };
    },
    async createEvaluation(req) {
      const e = await createEvaluation(deps, requireCaller(req.caller), req.jobId, req.datasetName);
      return { evaluation: evaluationToPb(e) };
    },
    async getEvaluation(req) {
      return { evaluation: evaluationToPb(await getEvaluation(deps, requireCaller(req.caller), req.evaluationId)) };
    },
    async pushToHub(req) {
      return pushToHub(deps, requireCaller(req.caller), req.jobId, {
        repoId: req.repoId,
        token: req.hubToken,
        private: req.private,
      });
    },
  };
}
