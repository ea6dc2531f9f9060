import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AppError, Reasons } from '@whetstone/errors';
import type {
  DatasetVersionView,
  DatasetsPort,
  FilesPort,
  JobView,
  Principal,
  TrainingPort,
} from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { invalidBody, invalidQuery, parseParams } from '../../validate';
import { Metadata, ModelId, openAiList } from './blocks';
import { FILE_ID_PREFIX } from './files.routes';
import {
  deleteFineTunedModel,
  asFineTuningError,
  CHECKPOINT_ID_PREFIX,
  checkpointObject,
  eventObject,
  metricsByStep,
  fineTuningJob,
  fineTuningJobObject,
  JOB_ID_PREFIX,
  pageAfter,
  uuidOf,
} from './fine-tuning';

const Auto = z.literal('auto');
const Hyperparameters = z.object({
  n_epochs: z.union([Auto, z.number().int().min(1).max(50)]).optional(),
  batch_size: z.union([Auto, z.number().int().min(1).max(256)]).optional(),
  learning_rate_multiplier: z.union([Auto, z.number().positive().max(100)]).optional(),
});

const FineTuningBody = z
  .object({
    model: ModelId,
    training_file: z.string().min(1).max(200),
    validation_file: z.string().min(1).max(200).nullish(),
    hyperparameters: Hyperparameters.nullish(),
    method: z
      .object({
        type: z.enum(['supervised', 'dpo', 'reinforcement']),
        supervised: z.object({ hyperparameters: Hyperparameters.nullish() }).nullish(),
      })
      .nullish(),
    suffix: z.string().min(1).max(64).nullish(),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .nullish(),
    metadata: Metadata.nullish(),
    integrations: z.array(z.unknown()).nullish(),
  })
  .openapi('FineTuningJobCreateRequest');
type FineTuningBody = z.infer<typeof FineTuningBody>;

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  after: z.string().max(200).optional(),
});

const tag = 'Compatible surfaces';
/** Problems listed from a file that did not validate; the rest are counted. */
const MAX_LISTED = 20;

export interface FineTuningBackends {
  training: TrainingPort;
  datasets: DatasetsPort;
  files: FilesPort;
}

/** The hyperparameters asked for (the method's win over the top-level, deprecated ones), checked. */
function hyperparametersOf(body: FineTuningBody) {
  if (body.method && body.method.type !== 'supervised')
    throw invalidBody('method.type', `only supervised fine-tuning is offered, not ${body.method.type}`);
  if (body.integrations?.length) throw invalidBody('integrations', 'are not offered (none can be configured)');
  const hp = { ...body.hyperparameters, ...body.method?.supervised?.hyperparameters };
  const field = body.method?.supervised?.hyperparameters ? 'method.supervised.hyperparameters' : 'hyperparameters';
  if (typeof hp.batch_size === 'number')
    throw invalidBody(`${field}.batch_size`, 'must be auto: the base model fixes its batch size');
  return {
    nrEpochs: typeof hp.n_epochs === 'number' ? hp.n_epochs : 0,
    learningRateMultiplier: typeof hp.learning_rate_multiplier === 'number' ? hp.learning_rate_multiplier : undefined,
  };
}

/** The uuid of a `fine-tune` file of the team named by `param`; 422 naming it otherwise. */
async function fineTuneFile(files: FilesPort, principal: Principal, param: string, publicId: string) {
  const id = uuidOf(publicId, FILE_ID_PREFIX);
  const file = id
    ? await files.get(principal, id).catch((err: unknown) => {
        if (err instanceof AppError && err.kind === 'NotFound') return null;
        throw err;
      })
    : null;
  if (!file) throw invalidBody(param, `'${publicId.slice(0, 100)}' names no uploaded file of this team`);
  if (file.purpose !== 'fine-tune')
    throw invalidBody(param, `must name a file uploaded with purpose fine-tune, not ${file.purpose}`);
  return id;
}

/** 422 naming the file and line of each problem of a version that did not validate. */
function invalidFiles(version: DatasetVersionView, trainingLines: number): AppError {
  const issues = (version.report?.issues ?? []).filter((i) => i.fatal);
  const fieldErrors = issues.slice(0, MAX_LISTED).map((i) => {
    const inValidation = i.line > trainingLines;
    const line = inValidation ? i.line - trainingLines : i.line;
    const where = i.line > 0 ? `line ${line}: ` : '';
    const field = i.field && !i.field.startsWith('(') ? `${i.field} ` : '';
    return { field: inValidation ? 'validation_file' : 'training_file', message: `${where}${field}${i.reason}` };
  });
  if (!fieldErrors.length)
    fieldErrors.push({ field: 'training_file', message: version.report?.failure_reason ?? 'did not validate' });
  const more = issues.length - fieldErrors.length + (version.report?.issues_truncated ?? 0);
  const message = `The file is not a valid chat fine-tuning file${more > 0 ? ` (${more} more problems not listed)` : ''}`;
  return new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, message, { fieldErrors });
}

/** A job's model: a built-in base, or a fine-tuning job (`ftjob-…`) or checkpoint (`ftckpt-…`) to continue from. */
function baseModelOf(model: string): string {
  for (const prefix of [JOB_ID_PREFIX, CHECKPOINT_ID_PREFIX])
    if (model.startsWith(prefix)) return uuidOf(model, prefix) || model;
  return model;
}

/** Makes the job's dataset from its files, then the job; the dataset goes again when either fails. */
async function createFineTuningJob(b: FineTuningBackends, principal: Principal, body: FineTuningBody) {
  const hp = hyperparametersOf(body);
  const trainingFileId = await fineTuneFile(b.files, principal, 'training_file', body.training_file);
  const validationFileId = body.validation_file
    ? await fineTuneFile(b.files, principal, 'validation_file', body.validation_file)
    : '';
  const datasetName = `fine-tune-${randomUUID()}`;
  const removeDataset = () => b.datasets.remove(principal.teamId, datasetName).catch(() => undefined);
  const imported = await b.datasets.importFiles(principal.teamId, { datasetName, trainingFileId, validationFileId });
  if (imported.version.status !== 'ready') {
    await removeDataset();
    throw invalidFiles(imported.version, imported.trainingLines);
  }
  return b.training
    .create(principal, {
      baseModel: baseModelOf(body.model),
      datasets: [datasetName],
      modelName: body.suffix ?? '',
      trainingType: 'lora',
      nrEpochs: hp.nrEpochs,
      learningRate: 0,
      ...(hp.learningRateMultiplier ? { learningRateMultiplier: hp.learningRateMultiplier } : {}),
      projectId: '',
      outOfScopeLabel: '',
      seed: body.seed ?? 0,
      fineTuning: {
        training_file: trainingFileId,
        validation_file: validationFileId,
        suffix: body.suffix ?? '',
        metadata: body.metadata ?? {},
      },
    })
    .catch(async (err: unknown) => {
      await removeDataset();
      throw asFineTuningError(err);
    });
}

/**
 * OpenAI's fine-tuning API (`openai.fineTuning.jobs`): create, list, retrieve, cancel, events and checkpoints.
 * Supervised LoRA fine-tuning of the built-in decoder on a chat JSONL file uploaded with purpose `fine-tune`.
 */
export function registerFineTuningRoutes(api: Api, backends: FineTuningBackends): void {
  api.route(
    {
      method: 'post',
      path: '/v1/fine_tuning/jobs',
      summary:
        'OpenAI-compatible fine-tuning job: LoRA training of `whetstone-decoder-base` (or continuing a job or checkpoint) on a chat JSONL file uploaded with purpose `fine-tune`; the file is validated before the answer (422 naming the line)',
      tag,
      auth: 'key',
      body: FineTuningBody,
      response: { status: 200, description: 'The `fine_tuning.job`, `status: "queued"`' },
    },
    async ({ res, body }) => {
      const principal = authOf(res).principal;
      return fineTuningJobObject(await createFineTuningJob(backends, principal, body), principal.teamId);
    },
  );
  registerListRoute(api, backends.training);
  registerJobRoutes(api, backends.training);
  api.route(
    {
      method: 'delete',
      path: '/v1/models/:model_id',
      summary:
        "Delete a fine-tuned model (OpenAI's `models.delete`): a finished training job of the team, with its weights, checkpoints and logs; its deployments are released",
      tag,
      auth: 'key-or-session',
      response: { status: 200, description: '`{id, object: "model", deleted: true}`; a built-in model is 403' },
    },
    async ({ req, res }) => deleteFineTunedModel(backends.training, authOf(res).principal, String(req.params.model_id)),
  );
}

/** GET /v1/fine_tuning/jobs. */
function registerListRoute(api: Api, training: TrainingPort): void {
  api.route(
    {
      method: 'get',
      path: '/v1/fine_tuning/jobs',
      summary:
        'The team\'s fine-tuning jobs, newest first: `{object: "list", data, has_more}`; `limit` (1–100, default 20), `after` (a job id: older ones)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const q = parseParams(ListQuery, req.query, 'query');
      const afterId = q.after === undefined ? '' : uuidOf(q.after, JOB_ID_PREFIX);
      if (q.after !== undefined && !afterId) throw invalidQuery('after', 'names no fine-tuning job of this team');
      const limit = q.limit ?? 20;
      const page = await training
        .list(principal, { status: '', projectId: '', limit: limit + 1, offset: 0, fineTuningOnly: true, afterId })
        .catch((err: unknown) => {
          if (err instanceof AppError && err.kind === 'InvalidArgument')
            throw invalidQuery('after', 'names no fine-tuning job of this team');
          throw err;
        });
      const data = page.jobs.slice(0, limit).map((j) => fineTuningJobObject(j, principal.teamId));
      return openAiList(data, page.jobs.length > limit);
    },
  );
}

type JobOf = (req: { params: Record<string, unknown> }, principal: Principal) => Promise<JobView>;
type JobItems = (principal: Principal, job: JobView) => Promise<{ id: string }[]>;

/** GET /v1/fine_tuning/jobs/:id, POST …/cancel, GET …/events and …/checkpoints. */
function registerJobRoutes(api: Api, training: TrainingPort): void {
  const jobPath = '/v1/fine_tuning/jobs/:fine_tuning_job_id';
  const jobOf: JobOf = (req, principal) => fineTuningJob(training, principal, String(req.params.fine_tuning_job_id));
  api.route(
    { method: 'get', path: jobPath, summary: 'One fine-tuning job', tag, auth: 'key-or-session' },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      return fineTuningJobObject(await jobOf(req, principal), principal.teamId);
    },
  );
  api.route(
    {
      method: 'post',
      path: `${jobPath}/cancel`,
      summary: 'Cancel a queued or running fine-tuning job (409 once it has ended)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const job = await jobOf(req, principal);
      return fineTuningJobObject(await training.stop(principal, job.id), principal.teamId);
    },
  );
  registerJobPages(api, training, jobPath, jobOf);
}

/** GET …/events and …/checkpoints: a job's derived list, newest first, as OpenAI's cursor page. */
function registerJobPages(api: Api, training: TrainingPort, jobPath: string, jobOf: JobOf): void {
  const pages: { suffix: string; summary: string; limit: number; items: JobItems; what: string }[] = [
    {
      suffix: 'events',
      summary: "The job's training log as `fine_tuning.job.event`s, newest first; `limit` (1–100, default 20), `after`",
      limit: 20,
      what: 'event',
      items: async (principal, job) => (await training.logs(principal, job.id)).map(eventObject).reverse(),
    },
    {
      suffix: 'checkpoints',
      summary:
        "The job's training checkpoints as `fine_tuning.job.checkpoint`s, newest first (a new job's `model` continues from one); `limit` (1–100, default 10), `after`",
      limit: 10,
      what: 'checkpoint',
      items: async (principal, job) => {
        const [checkpoints, logs] = await Promise.all([
          training.checkpoints(principal, job.id),
          training.logs(principal, job.id),
        ]);
        const figures = metricsByStep(logs);
        return checkpoints
          .filter((c) => c.checkpoint_type === 'training')
          .sort((a, b) => b.step - a.step)
          .map((c) => checkpointObject(job, c, figures.get(c.step)));
      },
    },
  ];
  for (const page of pages)
    api.route(
      { method: 'get', path: `${jobPath}/${page.suffix}`, summary: page.summary, tag, auth: 'key-or-session' },
      async ({ req, res }) => {
        const principal = authOf(res).principal;
        const q = parseParams(ListQuery, req.query, 'query');
        const items = await page.items(principal, await jobOf(req, principal));
        const found = pageAfter(items, q.after, q.limit ?? page.limit);
        if (!found) throw invalidQuery('after', `names no ${page.what} of this job`);
        return openAiList(found.data, found.hasMore);
      },
    );
}
