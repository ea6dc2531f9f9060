import type { ServiceImpl } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Reasons, errors } from '@whetstone/errors';
import { TrainerService, TrainingService } from '@whetstone/proto/training/v1';
import type { Caller, CheckpointRow, EvaluationRow, JobRow, LogRow, Training } from '../../application/training';
import { ARTIFACTS_BUCKET, LEASE_MS, artifactPrefix } from '../../domain/job';

const callerOf = (c: { teamId: string; keyId: string; userId: string } | undefined): Caller => {
  if (!c?.teamId)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'caller.team_id is required', [
      { field: 'caller.team_id', message: 'required' },
    ]);
  return { teamId: c.teamId, keyId: c.keyId, userId: c.userId };
};
const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

export function jobToPb(j: JobRow) {
  return {
    id: j.id,
    status: j.status,
    baseModel: j.baseModel,
    rootBaseModel: j.rootBaseModel,
    datasets: j.datasets.map((d) => ({ name: d.name, versionNumber: d.version_number, size: d.size })),
    modelName: j.modelName,
    trainingType: j.trainingType,
    nrEpochs: j.nrEpochs,
    learningRate: j.learningRate,
    projectId: j.projectId ?? '',
    ...(j.metrics ? { metrics: j.metrics as never } : {}),
    ...(j.progress ? { progress: j.progress as never } : {}),
    failureReason: j.failureReason ?? '',
    attempts: j.attempts,
    artifactBucket: j.artifactKey ? ARTIFACTS_BUCKET : '',
    artifactKey: j.artifactKey ?? '',
    artifactSize: BigInt(j.artifactSize ?? 0),
    createdAt: ts(j.createdAt),
    startedAt: ts(j.startedAt),
    finishedAt: ts(j.finishedAt),
    costMicroCredits: j.costMicroCredits,
  };
}

const logToPb = (l: LogRow) => ({
  id: l.id,
  jobId: l.jobId,
  timestamp: ts(l.timestamp),
  level: l.level,
  message: l.message,
  source: l.source,
});
const checkpointToPb = (c: CheckpointRow) => ({
  uuid: c.id,
  checkpointId: c.checkpointId,
  checkpointType: c.type,
  time: ts(c.createdAt),
  sizeBytes: BigInt(c.sizeBytes),
  step: BigInt(c.step),
});
const evaluationToPb = (e: EvaluationRow) => ({
  id: e.id,
  jobId: e.jobId,
  datasetName: e.datasetName,
  status: e.status,
  ...(e.metrics ? { metrics: e.metrics as never } : {}),
  error: e.error ?? '',
  createdAt: ts(e.createdAt),
});

/** TrainingService: the public side, scoped to the caller's team. */
export function trainingHandler(training: Training): ServiceImpl<typeof TrainingService> {
  return {
    async createJob(req) {
      const job = await training.create(callerOf(req.caller), {
        baseModel: req.baseModel,
        datasets: req.datasets,
        modelName: req.modelName,
        trainingType: req.trainingType,
        nrEpochs: req.nrEpochs,
        learningRate: req.learningRate,
        projectId: req.projectId,
      });
      return { job: jobToPb(job) };
    },
    async listJobs(req) {
      const out = await training.list(callerOf(req.caller), {
        status: req.status,
        projectId: req.projectId,
        limit: req.limit,
        offset: req.offset,
      });
      return { jobs: out.rows.map(jobToPb), total: out.total };
    },
    async getJob(req) {
      return { job: jobToPb(await training.get(callerOf(req.caller), req.jobId)) };
    },
    async stopJob(req) {
      return { job: jobToPb(await training.stop(callerOf(req.caller), req.jobId)) };
    },
    async deleteJob(req) {
      await training.remove(callerOf(req.caller), req.jobId);
      return {};
    },
    async listLogs(req) {
      return { logs: (await training.logs(callerOf(req.caller), req.jobId)).map(logToPb) };
    },
    async *streamLogs(req, ctx) {
      const caller = callerOf(req.caller);
      let after = req.afterId || undefined;
      for (;;) {
        const job = await training.get(caller, req.jobId);
        const logs = await training.logs(caller, req.jobId, after);
        if (logs.length) after = logs[logs.length - 1]!.id;
        if (logs.length || training.isTerminal(job.status)) yield { logs: logs.map(logToPb), status: job.status };
        if (training.isTerminal(job.status)) return;
        await new Promise((r) => setTimeout(r, 250));
        if (ctx.signal.aborted) return;
      }
    },
    async listCheckpoints(req) {
      return { checkpoints: (await training.checkpoints(callerOf(req.caller), req.jobId)).map(checkpointToPb) };
    },
    async getDownload(req) {
      const d = await training.download(callerOf(req.caller), req.jobId, req.checkpointId);
      return { downloadUrl: d.url, expiresInSeconds: d.expiresIn, fileName: d.fileName, sizeBytes: BigInt(d.size) };
    },
    async listTrainedModels(req) {
      return { jobs: (await training.trainedModels(callerOf(req.caller))).map(jobToPb) };
    },
    async createEvaluation(req) {
      return {
        evaluation: evaluationToPb(await training.createEvaluation(callerOf(req.caller), req.jobId, req.datasetName)),
      };
    },
    async getEvaluation(req) {
      return { evaluation: evaluationToPb(await training.getEvaluation(callerOf(req.caller), req.evaluationId)) };
    },
    async pushToHub(req) {
      return training.pushToHub(callerOf(req.caller), req.jobId, {
        repoId: req.repoId,
        token: req.hubToken,
        private: req.private,
      });
    },
  };
}

/** TrainerService: how workers lease and report. */
export function trainerHandler(training: Training, leaseMs = LEASE_MS): ServiceImpl<typeof TrainerService> {
  return {
    async leaseJob(req, ctx) {
      const deadline = Date.now() + Math.min(10_000, Math.max(0, req.waitMs));
      for (;;) {
        const job = await training.lease(req.trainerId || 'trainer');
        if (job) {
          return {
            job: {
              jobId: job.id,
              leaseToken: job.leaseToken ?? '',
              leaseMs,
              baseModel: job.rootBaseModel,
              trainingType: job.trainingType,
              nrEpochs: job.nrEpochs,
              learningRate: job.learningRate,
              seed: BigInt(job.seed),
              datasetBucket: job.datasets[0]?.bucket ?? 'datasets',
              trainKeys: job.datasets.map((d) => d.train_key),
              heldoutKeys: job.datasets.map((d) => d.heldout_key),
              artifactBucket: ARTIFACTS_BUCKET,
              artifactPrefix: artifactPrefix(job.id),
              resumeKey: job.resumeKey ?? '',
              attempt: job.attempts,
            },
          };
        }
        if (Date.now() >= deadline || ctx.signal.aborted) return {};
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async heartbeat(req) {
      return { cancel: !(await training.heartbeat(req.jobId, req.leaseToken)) };
    },
    async reportProgress(req) {
      const progress = {
        step: Number(req.step),
        total_steps: Number(req.totalSteps),
        epoch: req.epoch,
        loss: req.loss,
        learning_rate: req.learningRate,
        examples_per_second: req.examplesPerSecond,
        eta_seconds: req.etaSeconds,
      };
      return { cancel: !(await training.heartbeat(req.jobId, req.leaseToken, progress)) };
    },
    async appendLogs(req) {
      return {
        cancel: !(await training.appendLogs(
          req.jobId,
          req.leaseToken,
          req.source || 'trainer',
          req.lines.map((l) => ({ level: l.level, message: l.message })),
        )),
      };
    },
    async putCheckpoint(req) {
      const ok = await training.putCheckpoint(req.jobId, req.leaseToken, {
        checkpointId: req.checkpointId,
        type: req.checkpointType === 'sampler' ? 'sampler' : 'training',
        step: Number(req.step),
        key: req.key,
        sizeBytes: Number(req.sizeBytes),
      });
      return { cancel: !ok };
    },
    async completeJob(req) {
      await training.complete(req.jobId, req.leaseToken, {
        artifactKey: req.artifactKey,
        artifactSize: Number(req.artifactSize),
        metrics: (req.metrics ?? {}) as Record<string, unknown>,
        exampleEpochs: Number(req.exampleEpochs),
      });
      return {};
    },
    async failJob(req) {
      await training.fail(req.jobId, req.leaseToken, req.reason, req.retryable);
      return {};
    },
  };
}
