import { BUILTIN_MODELS } from '@whetstone/catalog';
import { AppError, isUuid, Reasons, type FieldError } from '@whetstone/errors';
import type {
  CheckpointView,
  JobView,
  LogView,
  Principal,
  StepMetricsView,
  TrainingPort,
} from '../../../../application/ports';
import { type DerivedFiles, FILE_ID_PREFIX, fileObject } from './files.routes';

/**
 * OpenAI's fine-tuning API over the training-orchestrator: a `fine_tuning.job` is a LoRA training job whose data
 * is a generation (chat) dataset made from the job's Files API files, so everything the core API says about a
 * job (logs, checkpoints, billing, deployment) holds for it too. Only jobs made through this API are listed here.
 */

export const JOB_ID_PREFIX = 'ftjob-';
export const CHECKPOINT_ID_PREFIX = 'ftckpt-';
export const EVENT_ID_PREFIX = 'ftevent-';

export const fineTuningJobNotFound = (id: string) =>
  new AppError('NotFound', 'JOB_NOT_FOUND', `Fine-tuning job '${id.slice(0, 100)}' was not found.`);

/** The uuid behind a public id with this prefix (the bare uuid is accepted too), or '' when it is none. */
export function uuidOf(publicId: string, prefix: string): string {
  const id = publicId.startsWith(prefix) ? publicId.slice(prefix.length) : publicId;
  return isUuid(id) ? id : '';
}

/** A fine-tuning job of the team by its public `ftjob-…` id; a job made through the core API is not one. */
export async function fineTuningJob(training: TrainingPort, principal: Principal, publicId: string): Promise<JobView> {
  const id = uuidOf(publicId, JOB_ID_PREFIX);
  if (!id) throw fineTuningJobNotFound(publicId);
  const job = await training.get(principal, id).catch((err: unknown) => {
    if (err instanceof AppError && err.kind === 'NotFound') throw fineTuningJobNotFound(publicId);
    throw err;
  });
  if (!job.fine_tuning) throw fineTuningJobNotFound(publicId);
  return job;
}

const unix = (iso: string | null) => (iso ? Math.floor(Date.parse(iso) / 1000) : null);

const STATUS: Record<string, string> = {
  requested: 'queued',
  running: 'running',
  complete: 'succeeded',
  deployed: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** The job's learning rate over its base model's default (what `learning_rate_multiplier` asked for). */
function multiplierOf(job: JobView): number {
  const base = BUILTIN_MODELS.find((m) => m.id === job.root_base_model)?.learningRate.default;
  return base ? Number((job.learning_rate / base).toPrecision(6)) : 1;
}

/** The tokens a succeeded decoder job read in training (its metrics' `trained_tokens`); null for older jobs. */
function trainedTokens(job: JobView): number | null {
  const n = job.metrics?.trained_tokens;
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : null;
}

function estimatedFinish(job: JobView): number | null {
  const eta = job.progress?.eta_seconds;
  return job.status === 'running' && typeof eta === 'number' ? Math.floor(Date.now() / 1000 + eta) : null;
}

/** A job as OpenAI's `fine_tuning.job`; `fine_tuned_model` is the id chat completions take once it succeeded. */
export function fineTuningJobObject(job: JobView, organizationId: string) {
  const source = job.fine_tuning;
  const status = STATUS[job.status] ?? job.status;
  const hyperparameters = { n_epochs: job.nr_epochs, batch_size: 'auto', learning_rate_multiplier: multiplierOf(job) };
  return {
    object: 'fine_tuning.job' as const,
    id: `${JOB_ID_PREFIX}${job.id}`,
    model: job.base_model,
    created_at: unix(job.created_at) ?? 0,
    finished_at: ['succeeded', 'failed', 'cancelled'].includes(status) ? unix(job.finished_at) : null,
    fine_tuned_model: status === 'succeeded' ? job.id : null,
    organization_id: organizationId,
    result_files: status === 'succeeded' ? [`${RESULTS_FILE_PREFIX}${job.id}`] : [],
    status,
    training_file: source ? `${FILE_ID_PREFIX}${source.training_file}` : null,
    validation_file: source?.validation_file ? `${FILE_ID_PREFIX}${source.validation_file}` : null,
    hyperparameters,
    method: { type: 'supervised' as const, supervised: { hyperparameters } },
    trained_tokens: status === 'succeeded' ? trainedTokens(job) : null,
    error:
      status === 'failed'
        ? { code: 'training_failed', message: job.failure_reason ?? 'Training failed.', param: null }
        : null,
    user_provided_suffix: source?.suffix || null,
    seed: job.seed,
    estimated_finish: estimatedFinish(job),
    integrations: [] as unknown[],
    metadata: source && Object.keys(source.metadata).length ? source.metadata : null,
  };
}

const LEVELS: Record<string, string> = { error: 'error', warn: 'warn', warning: 'warn' };

/**
 * A progress line's figures as OpenAI's metrics: the held-out figures are computed over every held-out row at an
 * epoch's end, so they are both the `valid_*` and the `full_valid_*` ones.
 */
const openAiMetrics = (m: StepMetricsView) => ({
  ...m,
  ...(m.valid_loss !== undefined ? { full_valid_loss: m.valid_loss } : {}),
  ...(m.valid_mean_token_accuracy !== undefined ? { full_valid_mean_token_accuracy: m.valid_mean_token_accuracy } : {}),
});

/**
 * A training log line as a `fine_tuning.job.event`: a progress line is a `metrics` event whose `data` holds its
 * figures (`step`, `total_steps`, `epoch`, `train_loss`, `train_mean_token_accuracy`, and at an epoch's end
 * `valid_loss`, `valid_mean_token_accuracy` and their `full_valid_` twins), as OpenAI's metrics events do; any
 * other line a `message`.
 */
export const eventObject = (log: LogView) => ({
  object: 'fine_tuning.job.event' as const,
  id: `${EVENT_ID_PREFIX}${log.id}`,
  created_at: unix(log.timestamp) ?? 0,
  level: LEVELS[log.level] ?? 'info',
  message: log.message,
  type: log.metrics ? ('metrics' as const) : ('message' as const),
  data: log.metrics ? openAiMetrics(log.metrics) : {},
});

/** The figures of each step's last progress line (a resumed step's replay wins). */
export function metricsByStep(logs: readonly LogView[]): Map<number, StepMetricsView> {
  const byStep = new Map<number, StepMetricsView>();
  for (const log of logs) if (log.metrics) byStep.set(log.metrics.step, log.metrics);
  return byStep;
}

/**
 * A training checkpoint (`weights/<step>`) as a `fine_tuning.job.checkpoint`; its `fine_tuned_model_checkpoint`
 * is the checkpoint's uuid, which a new job's `model` continues training from. Its `metrics` are those of the
 * progress line of its step when there is one (an epoch's end always has one), else just the step.
 */
export const checkpointObject = (job: JobView, c: CheckpointView, figures?: StepMetricsView) => {
  // OpenAI's checkpoint metrics have no total_steps or epoch.
  const { total_steps: _total, epoch: _epoch, ...metrics } = figures ? openAiMetrics(figures) : { step: c.step };
  return {
    object: 'fine_tuning.job.checkpoint' as const,
    id: `${CHECKPOINT_ID_PREFIX}${c.checkpoint_uuid}`,
    created_at: unix(c.time) ?? 0,
    fine_tuned_model_checkpoint: c.checkpoint_uuid,
    step_number: c.step,
    metrics: { ...metrics, step: c.step },
    fine_tuning_job_id: `${JOB_ID_PREFIX}${job.id}`,
  };
};

/** Where the training-orchestrator's fields are in a fine-tuning request. */
const PARAMS: Record<string, string> = {
  base_model: 'model',
  'datasets.0.name': 'model',
  training_type: 'model',
  nr_epochs: 'hyperparameters.n_epochs',
  learning_rate: 'hyperparameters.learning_rate_multiplier',
  seed: 'seed',
  model_name: 'suffix',
};

/** A training-orchestrator 4xx with its fields named as the fine-tuning request names them. */
export function asFineTuningError(err: unknown): unknown {
  if (!(err instanceof AppError) || err.kind !== 'InvalidArgument' || !err.fieldErrors?.length) return err;
  const fieldErrors: FieldError[] = err.fieldErrors.map((f) => ({ ...f, field: PARAMS[f.field] ?? f.field }));
  return new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, err.message, { fieldErrors });
}

/** OpenAI's cursor page over an in-memory list, newest first: the items after `after` (an id), `limit` of them. */
export function pageAfter<T extends { id: string }>(items: T[], after: string | undefined, limit: number) {
  const start = after === undefined ? 0 : items.findIndex((i) => i.id === after) + 1;
  if (after !== undefined && start === 0) return null;
  return { data: items.slice(start, start + limit), hasMore: items.length > start + limit };
}

/**
 * Deletes a fine-tuned model (OpenAI's `models.delete`): the id is a finished training job of the team (its
 * `fine_tuned_model`), deleted with its weights, checkpoints and logs, its deployments released. A built-in model is
 * 403; anything else, a job that has not finished included, is 404.
 */
export async function deleteFineTunedModel(training: TrainingPort, principal: Principal, modelId: string) {
  const notFound = () =>
    new AppError(
      'NotFound',
      'MODEL_NOT_FOUND',
      `Model '${modelId.slice(0, 100)}' names no fine-tuned model of this team (only finished training jobs can be deleted as models).`,
    );
  if (BUILTIN_MODELS.some((m) => m.id === modelId))
    throw new AppError(
      'PermissionDenied',
      'MODEL_NOT_DELETABLE',
      `Model '${modelId}' is a built-in model: only fine-tuned models (finished training jobs) can be deleted.`,
    );
  if (!isUuid(modelId)) throw notFound();
  const job = await training.get(principal, modelId).catch((err: unknown) => {
    throw err instanceof AppError && err.kind === 'NotFound' ? notFound() : err;
  });
  if (job.status !== 'complete' && job.status !== 'deployed') throw notFound();
  await training.remove(principal, job.id);
  return { id: job.id, object: 'model' as const, deleted: true };
}

/** The public id of a succeeded fine-tuning job's results file is this prefix and the job's UUID. */
export const RESULTS_FILE_PREFIX = 'file-ftjob_results-';
/** OpenAI's results columns; a row leaves empty what its step did not compute (held-out figures: epoch ends). */
const RESULTS_HEADER = 'step,train_loss,train_accuracy,valid_loss,valid_mean_token_accuracy';

/** A succeeded fine-tuning job's results as CSV: one row per progress line, by step (a resumed step once). */
async function resultsOf(training: TrainingPort, principal: Principal, id: string) {
  if (!id.startsWith(RESULTS_FILE_PREFIX)) return null;
  const uuid = id.slice(RESULTS_FILE_PREFIX.length);
  if (!isUuid(uuid)) return null;
  const job = await training.get(principal, uuid).catch((err: unknown) => {
    if (err instanceof AppError && err.kind === 'NotFound') return null;
    throw err;
  });
  if (!job?.fine_tuning || STATUS[job.status] !== 'succeeded') return null;
  const cell = (x: number | undefined) => (x === undefined ? '' : String(x));
  const rows = [...metricsByStep(await training.logs(principal, job.id)).values()]
    .sort((a, b) => a.step - b.step)
    .map((m) =>
      [m.step, m.train_loss, m.train_mean_token_accuracy, m.valid_loss, m.valid_mean_token_accuracy]
        .map(cell)
        .join(','),
    );
  return { job, csv: `${[RESULTS_HEADER, ...rows].join('\n')}\n` };
}

/** Succeeded fine-tuning jobs' results files (`result_files`), rendered from their progress lines when read. */
export const fineTuningResultFiles = (training: TrainingPort): DerivedFiles => ({
  async file(principal, id) {
    const found = await resultsOf(training, principal, id);
    if (!found) return null;
    return fileObject({
      id,
      filename: 'step_metrics.csv',
      purpose: 'fine-tune-results',
      bytes: Buffer.byteLength(found.csv),
      createdAt: new Date(found.job.finished_at ?? found.job.created_at ?? 0),
      expiresAt: null,
    });
  },
  async render(principal, id, res) {
    const found = await resultsOf(training, principal, id);
    if (!found) return false;
    res.status(200).type('text/csv; charset=utf-8').end(found.csv);
    return true;
  },
  kept: "is a fine-tuning job's results: it is kept as long as its job",
});
