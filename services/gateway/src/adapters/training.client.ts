import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import {
  CheckpointType,
  EvaluationStatus,
  JobStatus,
  TrainingService,
  TrainingType,
  type Checkpoint,
  type Evaluation,
  type Job,
  type LogEntry,
} from '@whetstone/proto/training/v1';
import type { CheckpointView, EvaluationView, JobView, LogView, TrainingPort } from '../application/ports';
import { callerOf } from './caller';

// The public API's strings for the training enums (the HTTP JSON keeps its words; the contract carries enums).
const JOB_STATUS: Record<string, JobStatus> = {
  requested: JobStatus.REQUESTED,
  running: JobStatus.RUNNING,
  complete: JobStatus.COMPLETE,
  failed: JobStatus.FAILED,
  deployed: JobStatus.DEPLOYED,
  cancelled: JobStatus.CANCELLED,
};
const TRAINING_TYPE: Record<string, TrainingType> = { lora: TrainingType.LORA, full: TrainingType.FULL };
const CHECKPOINT_TYPE: Record<string, CheckpointType> = {
  training: CheckpointType.TRAINING,
  sampler: CheckpointType.SAMPLER,
};
const EVALUATION_STATUS: Record<string, EvaluationStatus> = {
  running: EvaluationStatus.RUNNING,
  complete: EvaluationStatus.COMPLETE,
  failed: EvaluationStatus.FAILED,
};
const nameOf = <V extends number>(table: Record<string, V>, value: V | undefined): string =>
  Object.keys(table).find((k) => table[k] === value) ?? '';
const jobStatusName = (s: JobStatus | undefined) => nameOf(JOB_STATUS, s);

const iso = (ts: Timestamp | undefined): string | null => (ts ? timestampDate(ts).toISOString() : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

export function jobView(j: Job | undefined): JobView {
  const status = jobStatusName(j?.status);
  return {
    id: j?.id ?? '',
    status,
    base_model: j?.baseModel ?? '',
    root_base_model: j?.rootBaseModel ?? '',
    datasets: (j?.datasets ?? []).map((d) => ({ name: d.name, version_number: String(d.versionNumber), size: d.size })),
    model_name: j?.modelName ?? '',
    training_type: nameOf(TRAINING_TYPE, j?.trainingType),
    nr_epochs: j?.nrEpochs ?? 0,
    learning_rate: j?.learningRate ?? 0,
    project_id: j?.projectId || null,
    out_of_scope_label: j?.outOfScopeLabel || null,
    seed: Number(j?.seed ?? 0),
    fine_tuning: j?.fineTuning
      ? {
          training_file: j.fineTuning.trainingFile,
          validation_file: j.fineTuning.validationFile,
          suffix: j.fineTuning.suffix,
          metadata: { ...j.fineTuning.metadata },
        }
      : null,
    // The spec: metrics only when complete (and still once deployed).
    ...((status === 'complete' || status === 'deployed') && j?.metrics
      ? { metrics: j.metrics as Record<string, unknown> }
      : {}),
    progress: (j?.progress as Record<string, unknown> | undefined) ?? null,
    failure_reason: j?.failureReason || null,
    attempts: j?.attempts ?? 0,
    created_at: iso(j?.createdAt),
    started_at: iso(j?.startedAt),
    finished_at: iso(j?.finishedAt),
    cost_credits: Number(j?.costMicroCredits ?? 0n) / 1_000_000,
  };
}

const logView = (l: LogEntry): LogView => ({
  id: l.id,
  job_id: l.jobId,
  timestamp: iso(l.timestamp),
  level: l.level,
  message: l.message,
  source: l.source,
  ...(l.metrics
    ? {
        metrics: {
          step: Number(l.metrics.step),
          total_steps: Number(l.metrics.totalSteps),
          epoch: l.metrics.epoch,
          train_loss: l.metrics.trainLoss,
          ...(l.metrics.trainMeanTokenAccuracy !== undefined
            ? { train_mean_token_accuracy: l.metrics.trainMeanTokenAccuracy }
            : {}),
          ...(l.metrics.validLoss !== undefined ? { valid_loss: l.metrics.validLoss } : {}),
          ...(l.metrics.validMeanTokenAccuracy !== undefined
            ? { valid_mean_token_accuracy: l.metrics.validMeanTokenAccuracy }
            : {}),
        },
      }
    : {}),
});

const checkpointView = (jobId: string, c: Checkpoint): CheckpointView => ({
  checkpoint_id: c.checkpointId,
  checkpoint_uuid: c.uuid,
  checkpoint_type: nameOf(CHECKPOINT_TYPE, c.checkpointType),
  time: iso(c.time),
  tinker_path: `whetstone://${jobId}/${c.checkpointId}`,
  size_bytes: Number(c.sizeBytes),
  public: false,
  user_metadata: null,
  expires_at: null,
  step: Number(c.step),
});

const evaluationView = (e: Evaluation | undefined): EvaluationView => {
  const m = (e?.metrics ?? {}) as Record<string, unknown>;
  return {
    id: e?.id ?? '',
    training_job_id: e?.jobId ?? '',
    dataset_name: e?.datasetName ?? '',
    status: nameOf(EVALUATION_STATUS, e?.status),
    f1: num(m.f1),
    precision: num(m.precision),
    recall: num(m.recall),
    per_label: (m.per_label as Record<string, unknown> | undefined) ?? null,
    examples: num(m.examples),
    // A decoder's evaluation: its held-out loss and perplexity, and how many rows its generation F1 scored.
    ...(m.perplexity !== undefined
      ? { loss: num(m.loss), perplexity: num(m.perplexity), generation_examples: num(m.generation_examples) }
      : {}),
    error: e?.error || null,
    created_at: iso(e?.createdAt),
  };
};

/** The training-orchestrator over gRPC, in the gateway's plain shapes. */
export function trainingOverRpc(client: Client<typeof TrainingService>, ready: () => Promise<boolean>): TrainingPort {
  return {
    ready,
    async create(p, input) {
      const { fineTuning, seed, ...rest } = input;
      const trainingType = TRAINING_TYPE[input.trainingType] ?? TrainingType.UNSPECIFIED;
      const source = fineTuning && {
        trainingFile: fineTuning.training_file,
        validationFile: fineTuning.validation_file,
        suffix: fineTuning.suffix,
        metadata: fineTuning.metadata,
      };
      const req = { caller: callerOf(p), ...rest, trainingType, seed: BigInt(seed ?? 0), fineTuning: source };
      return jobView((await client.createJob(req)).job);
    },
    async list(p, filter) {
      const status = JOB_STATUS[filter.status] ?? JobStatus.UNSPECIFIED;
      const res = await client.listJobs({ caller: callerOf(p), ...filter, status });
      return { jobs: res.jobs.map(jobView), total: res.total };
    },
    async get(p, id) {
      return jobView((await client.getJob({ caller: callerOf(p), jobId: id })).job);
    },
    async stop(p, id) {
      return jobView((await client.stopJob({ caller: callerOf(p), jobId: id })).job);
    },
    async remove(p, id) {
      await client.deleteJob({ caller: callerOf(p), jobId: id });
    },
    async logs(p, id) {
      return (await client.listLogs({ caller: callerOf(p), jobId: id })).logs.map(logView);
    },
    async *streamLogs(p, id, signal) {
      for await (const chunk of client.streamLogs(
        { caller: callerOf(p), jobId: id },
        { signal, timeoutMs: 6 * 3600 * 1000 },
      )) {
        yield { logs: chunk.logs.map(logView), status: jobStatusName(chunk.status) };
      }
    },
    async checkpoints(p, id) {
      return (await client.listCheckpoints({ caller: callerOf(p), jobId: id })).checkpoints.map((c) =>
        checkpointView(id, c),
      );
    },
    async download(p, id, checkpointId) {
      const d = await client.getDownload({ caller: callerOf(p), jobId: id, checkpointId });
      return {
        download_url: d.downloadUrl,
        expires_in_seconds: d.expiresInSeconds,
        file_name: d.fileName,
        size_bytes: Number(d.sizeBytes),
      };
    },
    async trainedModels(p) {
      return (await client.listTrainedModels({ caller: callerOf(p) })).jobs.map(jobView);
    },
    async createEvaluation(p, jobId, datasetName) {
      return evaluationView((await client.createEvaluation({ caller: callerOf(p), jobId, datasetName })).evaluation);
    },
    async pushToHub(p, jobId, input) {
      const res = await client.pushToHub(
        { caller: callerOf(p), jobId, repoId: input.repoId, hubToken: input.hubToken, private: input.private },
        { timeoutMs: 120_000 },
      );
      return { repo_id: res.repoId, url: res.url, commit: res.commit || null, files: res.files };
    },
    async getEvaluation(p, id) {
      return evaluationView((await client.getEvaluation({ caller: callerOf(p), evaluationId: id })).evaluation);
    },
  };
}
