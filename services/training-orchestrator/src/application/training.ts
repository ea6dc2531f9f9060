import { randomUUID } from 'node:crypto';
import type { BlobStore } from '@whetstone/blobs';
import { AppError, Reasons, errors, type FieldError } from '@whetstone/errors';
import { DECODER_BASE, decodeAdapterBundle, evaluateBundle, readManifest } from '@whetstone/ml';
import { REPO_ID } from '../domain/hub';
import {
  ARTIFACTS_BUCKET,
  LEASE_MS,
  MAX_ATTEMPTS,
  TERMINAL,
  artifactPrefix,
  defaultModelName,
  trainableBase,
  trainingCost,
  type JobStatus,
} from '../domain/job';

export interface Caller {
  teamId: string;
  keyId: string;
  userId: string;
}

export interface DatasetSplit {
  name: string;
  version_number: number;
  size: number;
  bucket: string;
  train_key: string;
  heldout_key: string;
}

export interface JobRow {
  id: string;
  teamId: string;
  userId: string;
  keyId: string;
  baseModel: string;
  rootBaseModel: string;
  modelName: string;
  trainingType: 'lora' | 'full';
  nrEpochs: number;
  learningRate: number;
  seed: number;
  projectId: string | null;
  datasets: DatasetSplit[];
  status: JobStatus;
  metrics: Record<string, unknown> | null;
  progress: Record<string, unknown> | null;
  failureReason: string | null;
  attempts: number;
  resumeKey: string | null;
  artifactKey: string | null;
  artifactSize: number | null;
  costMicroCredits: bigint;
  leaseToken: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface CheckpointRow {
  id: string;
  jobId: string;
  checkpointId: string;
  type: 'training' | 'sampler';
  step: number;
  key: string;
  sizeBytes: number;
  createdAt: Date;
}

export interface LogRow {
  id: string;
  jobId: string;
  timestamp: Date;
  level: string;
  message: string;
  source: string;
}

export interface EvaluationRow {
  id: string;
  teamId: string;
  jobId: string;
  datasetName: string;
  status: 'running' | 'complete' | 'failed';
  metrics: Record<string, unknown> | null;
  error: string | null;
  createdAt: Date;
}

/** Persistence. Status changes write JobStatusChanged (and JobDeleted) in the same transaction. */
export interface JobStore {
  create(row: JobRow): Promise<void>;
  get(teamId: string, id: string): Promise<JobRow | null>;
  getById(id: string): Promise<JobRow | null>;
  list(
    teamId: string,
    filter: { status?: string; projectId?: string; limit: number; offset: number },
  ): Promise<{ rows: JobRow[]; total: number }>;
  /** Leases the oldest requested job, or takes over one whose lease expired. */
  lease(owner: string, token: string, leaseMs: number): Promise<JobRow | null>;
  /** Extends a lease; false when the token no longer holds the job (cancelled, deleted, re-leased). */
  renew(id: string, token: string, leaseMs: number, progress?: Record<string, unknown>): Promise<boolean>;
  /** Moves a job; `token` (when given) must still hold it. Returns false when the move did not apply. */
  move(
    id: string,
    from: JobStatus[],
    to: JobStatus,
    patch?: Partial<
      Pick<
        JobRow,
        'metrics' | 'failureReason' | 'artifactKey' | 'artifactSize' | 'costMicroCredits' | 'resumeKey' | 'finishedAt'
      >
    > & { clearLease?: boolean },
    token?: string,
  ): Promise<boolean>;
  /** Running jobs whose lease expired: back to requested (attempts below the limit) or failed. */
  expired(): Promise<JobRow[]>;
  requeue(id: string, resumeKey: string | null): Promise<boolean>;
  delete(teamId: string, id: string): Promise<boolean>;
  appendLogs(jobId: string, source: string, lines: { level: string; message: string }[]): Promise<void>;
  logs(jobId: string, afterId?: string): Promise<LogRow[]>;
  putCheckpoint(row: CheckpointRow): Promise<void>;
  checkpoints(jobId: string): Promise<CheckpointRow[]>;
  checkpointByUuid(teamId: string, uuid: string): Promise<(CheckpointRow & { job: JobRow }) | null>;
  createEvaluation(row: EvaluationRow): Promise<void>;
  updateEvaluation(id: string, patch: Partial<Pick<EvaluationRow, 'status' | 'metrics' | 'error'>>): Promise<void>;
  getEvaluation(teamId: string, id: string): Promise<EvaluationRow | null>;
}

export interface DatasetResolver {
  /** The newest ready version's splits; NotFound or FailedPrecondition otherwise. */
  resolve(teamId: string, name: string): Promise<DatasetSplit>;
}

export interface Billing {
  checkSpendable(teamId: string, costMicroCredits: bigint): Promise<void>;
  /** Records usage through the outbox (exactly-once by usage id in key-billing). */
  recordTrainingUsage(job: JobRow, costMicroCredits: bigint, exampleEpochs: number): Promise<void>;
}

/** A Hugging Face-compatible model hub. */
export interface ModelHub {
  push(input: {
    repoId: string;
    token: string;
    private: boolean;
    files: { path: string; bytes: Uint8Array }[];
    message: string;
  }): Promise<{ url: string; commit: string }>;
}

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface TrainingDeps {
  store: JobStore;
  datasets: DatasetResolver;
  blobs: BlobStore;
  billing: Billing;
  logger: Logger;
  leaseMs?: number;
  /** Absent when the operator configured no hub. */
  hub?: ModelHub;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES = ['requested', 'running', 'complete', 'failed', 'deployed', 'cancelled'];

const invalid = (message: string, fieldErrors: FieldError[]) =>
  errors.invalid(Reasons.VALIDATION_FAILED, message, fieldErrors);
const jobNotFound = (id: string) => errors.notFound('JOB_NOT_FOUND', `Training job '${id}' was not found.`);

/** The orchestrator's use cases: the job state machine, leases, logs, checkpoints, downloads, evaluations. */
/** Progress reports within this window are kept in memory; the lease is renewed in Postgres once per window. */
const RENEW_EVERY_MS = 1_000;

export class Training {
  private readonly leaseMs: number;
  private readonly renewals = new Map<string, { token: string; at: number; progress?: Record<string, unknown> }>();

  constructor(private readonly deps: TrainingDeps) {
    this.leaseMs = deps.leaseMs ?? LEASE_MS;
  }

  async create(
    caller: Caller,
    input: {
      baseModel: string;
      datasets: string[];
      modelName: string;
      trainingType: string;
      nrEpochs: number;
      learningRate: number;
      projectId: string;
    },
  ): Promise<JobRow> {
    const problems: FieldError[] = [];
    if (!input.baseModel)
      problems.push({
        field: 'base_model',
        message: 'is required: a base model id from GET /v1/base-models, or a job or checkpoint id to continue from',
      });
    if (!input.datasets.length)
      problems.push({ field: 'datasets', message: 'give at least one dataset: [{"name": "<a ready dataset>"}]' });
    const trainingType = input.trainingType || 'lora';
    if (trainingType !== 'lora' && trainingType !== 'full')
      problems.push({ field: 'training_type', message: "must be 'lora' or 'full'" });
    if (problems.length) throw invalid('Invalid training job', problems);

    // base_model: a built-in model, or a job / checkpoint of this team to continue from.
    let root = trainableBase(input.baseModel);
    let resumeKey: string | null = null;
    if (!root) {
      if (!UUID.test(input.baseModel))
        throw invalid('Unknown base_model', [
          {
            field: 'base_model',
            message: `'${input.baseModel}' is not a trainable base model (see GET /v1/base-models) nor a job or checkpoint id`,
          },
        ]);
      const fromJob = await this.deps.store.get(caller.teamId, input.baseModel);
      const fromCheckpoint = fromJob ? null : await this.deps.store.checkpointByUuid(caller.teamId, input.baseModel);
      const parent = fromJob ?? fromCheckpoint?.job;
      if (!parent)
        throw errors.notFound(
          'BASE_MODEL_NOT_FOUND',
          `No job or checkpoint '${input.baseModel}' is visible to this team.`,
        );
      root = trainableBase(parent.rootBaseModel);
      if (fromCheckpoint) {
        if (fromCheckpoint.type !== 'training')
          throw invalid('Not a training checkpoint', [
            {
              field: 'base_model',
              message: 'a sampler_weights checkpoint cannot resume training; use a weights/<step> checkpoint',
            },
          ]);
        resumeKey = fromCheckpoint.key;
      } else {
        const last = (await this.deps.store.checkpoints(parent.id)).find((c) => c.type === 'training');
        if (!last)
          throw errors.precondition(
            'NO_CHECKPOINT',
            `Job '${parent.id}' has no training checkpoint to continue from yet.`,
          );
        resumeKey = last.key;
      }
    }
    if (!root) throw invalid('Unknown base_model', [{ field: 'base_model', message: 'is not trainable' }]);
    if (!root.trainingTypes.includes(trainingType as 'lora' | 'full')) {
      throw invalid(`${root.id} accepts training_type ${root.trainingTypes.join(' or ')}`, [
        {
          field: 'training_type',
          message: `must be ${root.trainingTypes.map((t) => `'${t}'`).join(' or ')} for ${root.id}`,
        },
      ]);
    }
    const nrEpochs = input.nrEpochs || root.nrEpochs.default;
    const learningRate = input.learningRate || root.learningRate.default;
    if (!Number.isInteger(nrEpochs) || nrEpochs < root.nrEpochs.min || nrEpochs > root.nrEpochs.max)
      problems.push({
        field: 'nr_epochs',
        message: `must be an integer from ${root.nrEpochs.min} to ${root.nrEpochs.max} for ${root.id}`,
      });
    if (!(learningRate >= root.learningRate.min && learningRate <= root.learningRate.max))
      problems.push({
        field: 'learning_rate',
        message: `must be from ${root.learningRate.min} to ${root.learningRate.max} for ${root.id}`,
      });
    if (problems.length) throw invalid('Invalid training job', problems);

    const splits: DatasetSplit[] = [];
    for (const name of input.datasets) splits.push(await this.deps.datasets.resolve(caller.teamId, name));
    const exampleEpochs = splits.reduce((n, d) => n + d.size, 0) * nrEpochs;
    await this.deps.billing.checkSpendable(caller.teamId, trainingCost(exampleEpochs));

    const now = new Date();
    const row: JobRow = {
      id: randomUUID(),
      teamId: caller.teamId,
      userId: caller.userId,
      keyId: caller.keyId,
      baseModel: input.baseModel,
      rootBaseModel: root.id,
      modelName: input.modelName.trim() || defaultModelName(root.id, now),
      trainingType: trainingType as 'lora' | 'full',
      nrEpochs,
      learningRate,
      seed: Math.floor(Math.random() * 2 ** 31),
      projectId: input.projectId || null,
      datasets: splits,
      status: 'requested',
      metrics: null,
      progress: null,
      failureReason: null,
      attempts: 0,
      resumeKey,
      artifactKey: null,
      artifactSize: null,
      costMicroCredits: 0n,
      leaseToken: null,
      createdAt: now,
      startedAt: null,
      finishedAt: null,
    };
    await this.deps.store.create(row);
    await this.deps.store.appendLogs(row.id, 'orchestrator', [
      {
        level: 'info',
        message: `job requested: ${row.trainingType} training of ${root.id} on ${splits.map((d) => `${d.name} v${d.version_number} (${d.size} examples)`).join(', ')}, ${nrEpochs} epochs, learning rate ${learningRate}${resumeKey ? `, continuing from ${input.baseModel}` : ''}`,
      },
    ]);
    return row;
  }

  async get(caller: Caller, id: string): Promise<JobRow> {
    const job = UUID.test(id) ? await this.deps.store.get(caller.teamId, id) : null;
    if (!job) throw jobNotFound(id);
    return job;
  }

  async list(caller: Caller, filter: { status: string; projectId: string; limit: number; offset: number }) {
    if (filter.status && !STATUSES.includes(filter.status))
      throw invalid('Invalid status filter', [{ field: 'status', message: `must be one of ${STATUSES.join(', ')}` }]);
    const limit = filter.limit || 200;
    if (limit < 1 || limit > 200)
      throw invalid('Invalid limit', [{ field: 'limit', message: 'must be from 1 to 200' }]);
    if (filter.offset < 0) throw invalid('Invalid offset', [{ field: 'offset', message: 'must be at least 0' }]);
    return this.deps.store.list(caller.teamId, {
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.projectId ? { projectId: filter.projectId } : {}),
      limit,
      offset: filter.offset,
    });
  }

  async stop(caller: Caller, id: string): Promise<JobRow> {
    const job = await this.get(caller, id);
    if (job.status !== 'running' && job.status !== 'requested') {
      throw errors.precondition(
        'JOB_NOT_RUNNING',
        `Job '${id}' is ${job.status}; only a requested or running job can be stopped.`,
      );
    }
    await this.deps.store.move(job.id, ['requested', 'running'], 'cancelled', {
      finishedAt: new Date(),
      clearLease: true,
    });
    await this.deps.store.appendLogs(job.id, 'orchestrator', [{ level: 'warn', message: 'job stopped by the user' }]);
    return (await this.deps.store.getById(job.id))!;
  }

  async remove(caller: Caller, id: string): Promise<void> {
    const job = await this.get(caller, id);
    if (job.status === 'running' || job.status === 'requested')
      await this.deps.store.move(job.id, ['requested', 'running'], 'cancelled', {
        finishedAt: new Date(),
        clearLease: true,
      });
    const removed = await this.deps.blobs.deletePrefix(ARTIFACTS_BUCKET, artifactPrefix(job.id));
    if (!(await this.deps.store.delete(caller.teamId, job.id))) throw jobNotFound(id);
    this.deps.logger.info({ jobId: job.id, blobs: removed }, 'job deleted');
  }

  async logs(caller: Caller, id: string, afterId?: string): Promise<LogRow[]> {
    const job = await this.get(caller, id);
    return this.deps.store.logs(job.id, afterId);
  }

  async checkpoints(caller: Caller, id: string): Promise<CheckpointRow[]> {
    const job = await this.get(caller, id);
    return this.deps.store.checkpoints(job.id);
  }

  async download(
    caller: Caller,
    id: string,
    checkpointId: string,
  ): Promise<{ url: string; expiresIn: number; fileName: string; size: number }> {
    const job = await this.get(caller, id);
    const expiresIn = 3600;
    if (checkpointId) {
      const cp = (await this.deps.store.checkpoints(job.id)).find(
        (c) => c.checkpointId === checkpointId || c.id === checkpointId,
      );
      if (!cp) throw errors.notFound('CHECKPOINT_NOT_FOUND', `Job '${id}' has no checkpoint '${checkpointId}'.`);
      const url = await this.deps.blobs.presignGet(ARTIFACTS_BUCKET, cp.key, {
        expiresInSeconds: expiresIn,
        fileName: `${job.modelName}-${cp.checkpointId.replace('/', '-')}.ckpt`,
      });
      return {
        url: url.url,
        expiresIn,
        fileName: `${job.modelName}-${cp.checkpointId.replace('/', '-')}.ckpt`,
        size: cp.sizeBytes,
      };
    }
    if ((job.status !== 'complete' && job.status !== 'deployed') || !job.artifactKey) {
      throw errors.precondition(
        'JOB_NOT_COMPLETE',
        `Job '${id}' is ${job.status}; the model can be downloaded once the job is complete.`,
      );
    }
    const fileName = `${job.modelName}.whetstone-bundle`;
    const url = await this.deps.blobs.presignGet(ARTIFACTS_BUCKET, job.artifactKey, {
      expiresInSeconds: expiresIn,
      fileName,
    });
    return { url: url.url, expiresIn, fileName, size: job.artifactSize ?? 0 };
  }

  async trainedModels(caller: Caller): Promise<JobRow[]> {
    const done = await Promise.all(
      ['complete', 'deployed'].map((status) => this.deps.store.list(caller.teamId, { status, limit: 200, offset: 0 })),
    );
    return done.flatMap((d) => d.rows).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  }

  async createEvaluation(caller: Caller, jobId: string, datasetName: string): Promise<EvaluationRow> {
    const job = await this.get(caller, jobId);
    if (!datasetName)
      throw invalid('dataset_name is required', [
        { field: 'dataset_name', message: 'is required: the dataset whose held-out split is scored' },
      ]);
    if ((job.status !== 'complete' && job.status !== 'deployed') || !job.artifactKey) {
      throw errors.precondition(
        'JOB_NOT_COMPLETE',
        `Job '${jobId}' is ${job.status}; evaluate it once it is complete.`,
      );
    }
    if (job.rootBaseModel === DECODER_BASE)
      throw errors.precondition(
        'EVALUATION_NOT_SUPPORTED',
        'Decoder jobs report held-out loss and perplexity in their metrics; evaluations score extraction models.',
      );
    const split = await this.deps.datasets.resolve(caller.teamId, datasetName);
    const row: EvaluationRow = {
      id: randomUUID(),
      teamId: caller.teamId,
      jobId: job.id,
      datasetName,
      status: 'running',
      metrics: null,
      error: null,
      createdAt: new Date(),
    };
    await this.deps.store.createEvaluation(row);
    void this.runEvaluation(row, job.artifactKey, split);
    return row;
  }

  async getEvaluation(caller: Caller, id: string): Promise<EvaluationRow> {
    const row = UUID.test(id) ? await this.deps.store.getEvaluation(caller.teamId, id) : null;
    if (!row) throw errors.notFound('EVALUATION_NOT_FOUND', `Evaluation '${id}' was not found.`);
    return row;
  }

  private async runEvaluation(row: EvaluationRow, artifactKey: string, split: DatasetSplit): Promise<void> {
    try {
      const [bundle, heldout] = await Promise.all([
        readBlob(this.deps.blobs, ARTIFACTS_BUCKET, artifactKey),
        readBlob(this.deps.blobs, split.bucket, split.heldout_key),
      ]);
      const rows = Buffer.from(heldout)
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const metrics = evaluateBundle(bundle, rows);
      await this.deps.store.updateEvaluation(row.id, {
        status: 'complete',
        metrics: { ...metrics, examples: rows.length } as unknown as Record<string, unknown>,
      });
    } catch (err) {
      await this.deps.store.updateEvaluation(row.id, {
        status: 'failed',
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** Uploads a complete job's bundle, manifest and model card; the token is used for this call only. */
  async pushToHub(
    caller: Caller,
    jobId: string,
    input: { repoId: string; token: string; private: boolean },
  ): Promise<{ repoId: string; url: string; commit: string; files: string[] }> {
    const job = await this.get(caller, jobId);
    const problems: FieldError[] = [];
    if (!REPO_ID.test(input.repoId))
      problems.push({ field: 'repo_id', message: 'must be "owner/name" (letters, digits, ".", "_" or "-")' });
    if (!input.token || input.token.length < 8 || /\s/.test(input.token))
      problems.push({ field: 'hub_token', message: 'is required: a hub access token with write access' });
    if (problems.length) throw invalid('Invalid push to hub', problems);
    if ((job.status !== 'complete' && job.status !== 'deployed') || !job.artifactKey)
      throw errors.precondition('JOB_NOT_COMPLETE', `Job '${jobId}' is ${job.status}; push it once it is complete.`);
    if (!this.deps.hub)
      throw errors.precondition(
        'HUB_NOT_CONFIGURED',
        'No model hub is configured on this installation (HUB_BASE_URL).',
      );
    const bundle = await readBlob(this.deps.blobs, ARTIFACTS_BUCKET, job.artifactKey);
    const manifest = job.rootBaseModel === DECODER_BASE ? decodeAdapterBundle(bundle).manifest : readManifest(bundle);
    const card = [
      '---',
      'library_name: whetstone',
      `base_model: ${job.rootBaseModel}`,
      'tags: [whetstone, extraction]',
      '---',
      `# ${job.modelName}`,
      '',
      `Trained with Whetstone (${job.trainingType}, ${job.nrEpochs} epochs, learning rate ${job.learningRate}) from \`${job.rootBaseModel}\` on ${job.datasets.map((d) => `${d.name} v${d.version_number}`).join(', ')}.`,
      '',
      `Held-out metrics: ${JSON.stringify({ f1: job.metrics?.f1, precision: job.metrics?.precision, recall: job.metrics?.recall })}`,
      '',
    ].join('\n');
    const files = [
      { path: 'model.whetstone-bundle', bytes: bundle },
      { path: 'whetstone_manifest.json', bytes: new Uint8Array(Buffer.from(JSON.stringify(manifest, null, 2))) },
      { path: 'README.md', bytes: new Uint8Array(Buffer.from(card)) },
    ];
    const out = await this.deps.hub.push({
      repoId: input.repoId,
      token: input.token,
      private: input.private,
      files,
      message: `Upload ${job.modelName} from Whetstone`,
    });
    await this.deps.store.appendLogs(job.id, 'orchestrator', [
      { level: 'info', message: `pushed to the hub as ${input.repoId}` },
    ]);
    return { repoId: input.repoId, url: out.url, commit: out.commit, files: files.map((f) => f.path) };
  }

  // ---- trainer side ----

  async lease(trainerId: string): Promise<JobRow | null> {
    const job = await this.deps.store.lease(trainerId, randomUUID(), this.leaseMs);
    if (job)
      await this.deps.store.appendLogs(job.id, 'orchestrator', [
        {
          level: 'info',
          message: `leased by trainer ${trainerId} (attempt ${job.attempts}${job.resumeKey ? `, resuming from ${job.resumeKey.split('/').slice(-2).join('/')}` : ''})`,
        },
      ]);
    return job;
  }

  /**
   * Renews the lease. Frequent progress reports are answered from memory and
   * written at most once a second per job (the lease is far longer), so a
   * report costs the orchestrator microseconds; a stop is noticed within a second.
   */
  async heartbeat(jobId: string, token: string, progress?: Record<string, unknown>): Promise<boolean> {
    const now = Date.now();
    const last = this.renewals.get(jobId);
    if (progress && last && last.token === token && now - last.at < RENEW_EVERY_MS) {
      last.progress = progress;
      return true;
    }
    const ok = await this.deps.store.renew(jobId, token, this.leaseMs, progress ?? last?.progress);
    if (ok) this.renewals.set(jobId, { token, at: now });
    else this.renewals.delete(jobId);
    if (this.renewals.size > 10_000) this.renewals.clear();
    return ok;
  }

  async appendLogs(
    jobId: string,
    token: string,
    source: string,
    lines: { level: string; message: string }[],
  ): Promise<boolean> {
    if (!(await this.deps.store.renew(jobId, token, this.leaseMs))) return false;
    await this.deps.store.appendLogs(
      jobId,
      source,
      lines.map((l) => ({
        level: ['info', 'warn', 'error'].includes(l.level) ? l.level : 'info',
        message: l.message.slice(0, 4000),
      })),
    );
    return true;
  }

  async putCheckpoint(
    jobId: string,
    token: string,
    c: { checkpointId: string; type: 'training' | 'sampler'; step: number; key: string; sizeBytes: number },
  ): Promise<boolean> {
    if (!(await this.deps.store.renew(jobId, token, this.leaseMs))) return false;
    if (!c.key.startsWith(artifactPrefix(jobId)))
      throw invalid('checkpoint key outside the job', [
        { field: 'key', message: `must start with ${artifactPrefix(jobId)}` },
      ]);
    await this.deps.store.putCheckpoint({
      id: randomUUID(),
      jobId,
      checkpointId: c.checkpointId,
      type: c.type,
      step: c.step,
      key: c.key,
      sizeBytes: c.sizeBytes,
      createdAt: new Date(),
    });
    return true;
  }

  async complete(
    jobId: string,
    token: string,
    result: { artifactKey: string; artifactSize: number; metrics: Record<string, unknown>; exampleEpochs: number },
  ): Promise<void> {
    const job = await this.deps.store.getById(jobId);
    if (!job || job.leaseToken !== token)
      throw errors.precondition('LEASE_LOST', 'This trainer no longer holds the job.');
    const cost = trainingCost(result.exampleEpochs);
    const moved = await this.deps.store.move(
      jobId,
      ['running'],
      'complete',
      {
        metrics: result.metrics,
        artifactKey: result.artifactKey,
        artifactSize: result.artifactSize,
        costMicroCredits: cost,
        finishedAt: new Date(),
        clearLease: true,
      },
      token,
    );
    if (!moved) throw errors.precondition('LEASE_LOST', 'This trainer no longer holds the job.');
    await this.deps.billing.recordTrainingUsage(job, cost, result.exampleEpochs);
    const m = result.metrics;
    const summary =
      m.f1 !== undefined
        ? `f1 ${String(m.f1)}, precision ${String(m.precision)}, recall ${String(m.recall)}`
        : `held-out loss ${String(m.loss)} (base ${String(m.base_loss)}), perplexity ${String(m.perplexity)}`;
    await this.deps.store.appendLogs(jobId, 'orchestrator', [
      { level: 'info', message: `job complete: ${summary}; ${result.exampleEpochs} example-epochs billed` },
    ]);
  }

  async fail(jobId: string, token: string, reason: string, retryable: boolean): Promise<void> {
    const job = await this.deps.store.getById(jobId);
    if (!job || job.leaseToken !== token) return;
    if (retryable && job.attempts < MAX_ATTEMPTS) {
      const last = (await this.deps.store.checkpoints(jobId)).find((c) => c.type === 'training');
      await this.deps.store.appendLogs(jobId, 'orchestrator', [
        {
          level: 'warn',
          message: `attempt ${job.attempts} failed (${reason}); retrying${last ? ` from ${last.checkpointId}` : ''}`,
        },
      ]);
      await this.deps.store.requeue(jobId, last?.key ?? job.resumeKey);
      return;
    }
    await this.deps.store.move(
      jobId,
      ['running'],
      'failed',
      { failureReason: reason, finishedAt: new Date(), clearLease: true },
      token,
    );
    await this.deps.store.appendLogs(jobId, 'orchestrator', [{ level: 'error', message: `job failed: ${reason}` }]);
  }

  /** Takes back expired leases: the job resumes from its last training checkpoint, or fails after MAX_ATTEMPTS. */
  async sweep(): Promise<number> {
    const expired = await this.deps.store.expired();
    for (const job of expired) {
      if (job.attempts >= MAX_ATTEMPTS) {
        const reason = `the trainer stopped responding ${job.attempts} times; giving up`;
        await this.deps.store.move(job.id, ['running'], 'failed', {
          failureReason: reason,
          finishedAt: new Date(),
          clearLease: true,
        });
        await this.deps.store.appendLogs(job.id, 'orchestrator', [
          { level: 'error', message: `job failed: ${reason}` },
        ]);
        continue;
      }
      const last = (await this.deps.store.checkpoints(job.id)).find((c) => c.type === 'training');
      if (await this.deps.store.requeue(job.id, last?.key ?? job.resumeKey)) {
        await this.deps.store.appendLogs(job.id, 'orchestrator', [
          {
            level: 'warn',
            message: `the trainer's lease expired (attempt ${job.attempts}); the job is queued again${last ? ` and resumes from ${last.checkpointId}` : ''}`,
          },
        ]);
      }
    }
    return expired.length;
  }

  /** A deployment went active: the job is now deployed. */
  async markDeployed(jobId: string): Promise<void> {
    await this.deps.store.move(jobId, ['complete'], 'deployed');
  }

  isTerminal(status: JobStatus): boolean {
    return TERMINAL.includes(status);
  }
}

async function readBlob(blobs: BlobStore, bucket: string, key: string): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of await blobs.get(bucket, key)) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

export { AppError };
