import { AppError, isUuid } from '@whetstone/errors';
import type { Inference, Principal, TrainingPort } from '../../../application/ports';
import type { Api } from '../api';
import { authOf } from '../auth';
import { parseParams } from '../validate';
import {
  CreateJobBody,
  EvaluationBody,
  EvaluationResponse,
  ListQuery,
  PushBody,
  TrainingJobListResponse,
  TrainingJobResponse,
} from './training.schemas';

const id = (value: unknown, _name: string): string => {
  if (typeof value !== 'string' || !isUuid(value))
    throw new AppError('NotFound', 'JOB_NOT_FOUND', `Training job '${String(value)}' was not found.`);
  return value;
};

/** The authenticated principal of a request (set by the auth middleware). */
type Me = (res: Parameters<typeof authOf>[0]) => ReturnType<typeof authOf>['principal'];

/** Training jobs, logs, checkpoints, downloads and evaluations, as the spec's Training jobs section. */
export function registerTrainingRoutes(api: Api, training: TrainingPort, projects?: ProjectLookup): void {
  const me: Me = (res) => authOf(res).principal;
  lifecycleRoutes(api, training, me, projects);
  queryRoutes(api, training, me);
  logsRoutes(api, training, me);
  artifactsRoutes(api, training, me);
  hubAndEvaluationRoutes(api, training, me);
}

/** The team's projects, which live in the inference-router. */
type ProjectLookup = Pick<Inference, 'listProjects'>;

/**
 * A job's `project_id` must name one of the team's projects (404 otherwise),
 * checked here because projects live in the inference-router, which the
 * orchestrator does not call; without a router no project exists to check.
 */
async function assertProject(projects: ProjectLookup | undefined, principal: Principal, projectId: string) {
  if (!projectId || !projects) return;
  if (!(await projects.listProjects(principal)).some((p) => p.id === projectId))
    throw new AppError('NotFound', 'PROJECT_NOT_FOUND', `Project '${projectId}' was not found.`);
}

/** Creating, stopping and deleting jobs. */
function lifecycleRoutes(api: Api, training: TrainingPort, me: Me, projects?: ProjectLookup): void {
  api.route(
    {
      method: 'post',
      path: '/core/training-jobs',
      summary: 'Create a training job on ready datasets; returns at once with status requested',
      tag: 'Training',
      auth: 'key-or-session',
      body: CreateJobBody,
    },
    async ({ res, body }) => {
      await assertProject(projects, me(res), body.project_id ?? '');
      const job = await training.create(me(res), {
        baseModel: body.base_model,
        datasets: body.datasets.map((d) => d.name),
        modelName: body.model_name ?? '',
        trainingType: body.training_type,
        nrEpochs: body.nr_epochs ?? 0,
        learningRate: body.learning_rate ?? 0,
        projectId: body.project_id ?? '',
        outOfScopeLabel: body.out_of_scope_label ?? '',
      });
      return { id: job.id, status: job.status, model_name: job.model_name };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/core/training-jobs/:id/stop',
      summary: 'Stop a running job (→ cancelled)',
      tag: 'Training',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const job = await training.stop(me(res), id(req.params.id, 'id'));
      return { success: true, id: job.id, status: job.status, message: 'Job cancelled.' };
    },
  );

  for (const path of ['/core/training-jobs/:id', '/v1/training-jobs/:id']) {
    api.route(
      {
        method: 'delete',
        path,
        summary: 'Delete a job: stops it if active, removes logs, checkpoints, weights and files, releases deployments',
        tag: 'Training',
        auth: 'key-or-session',
      },
      async ({ req, res }) => {
        await training.remove(me(res), id(req.params.id, 'id'));
        return { success: true, message: 'Training job deleted with its logs, checkpoints and artifacts.' };
      },
    );
  }
}

/** Listing and reading jobs, and the trained models. */
function queryRoutes(api: Api, training: TrainingPort, me: Me): void {
  for (const path of ['/core/training-jobs', '/v1/training-jobs']) {
    api.route(
      {
        method: 'get',
        path,
        summary: 'List training jobs (filters status, project_id; limit 1–200, offset)',
        tag: 'Training',
        auth: 'key-or-session',
        response: { status: 200, description: 'Jobs, newest first', schema: TrainingJobListResponse },
      },
      async ({ req, res }) => {
        const q = parseParams(ListQuery, req.query, 'query');
        const out = await training.list(me(res), {
          status: q.status ?? '',
          projectId: q.project_id ?? '',
          limit: q.limit,
          offset: q.offset,
        });
        return {
          success: true,
          count: out.jobs.length,
          total: out.total,
          limit: q.limit,
          offset: q.offset,
          jobs: out.jobs,
        };
      },
    );
  }

  api.route(
    {
      method: 'get',
      path: '/core/training-jobs/:id',
      summary: 'One job: id, status, and metrics once complete',
      tag: 'Training',
      auth: 'key-or-session',
      response: { status: 200, description: 'The job', schema: TrainingJobResponse },
    },
    async ({ req, res }) => {
      return training.get(me(res), id(req.params.id, 'id'));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/core/trained-models',
      summary: 'Successfully trained models (complete or deployed jobs)',
      tag: 'Training',
      auth: 'key-or-session',
    },
    async ({ res }) => {
      const jobs = await training.trainedModels(me(res));
      return {
        success: true,
        count: jobs.length,
        models: jobs.map((j) => ({
          model_id: j.id,
          training_job_id: j.id,
          model_name: j.model_name,
          base_model: j.base_model,
          training_type: j.training_type,
          status: j.status,
          metrics: j.metrics ?? null,
          created_at: j.created_at,
          finished_at: j.finished_at,
        })),
      };
    },
  );
}

/** Job logs: a snapshot, or a server-sent stream while the job runs. */
function logsRoutes(api: Api, training: TrainingPort, me: Me): void {
  // Streams Server-Sent Events while the job runs: `event: log` per entry, then `event: end` with the final status.
  api.route(
    {
      method: 'get',
      path: '/core/training-jobs/:id/logs',
      summary: 'Log stream (text/event-stream) until the job ends; ?stream=false for a JSON snapshot',
      tag: 'Training',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const jobId = id(req.params.id, 'id');
      const principal = me(res);
      const job = await training.get(principal, jobId);
      if (req.query.stream === 'false') {
        const logs = await training.logs(principal, jobId);
        return { job_id: jobId, status: job.status, logs, total_logs: logs.length };
      }
      const controller = new AbortController();
      res.on('close', () => controller.abort());
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(': streaming training logs\n\n');
      let status = job.status;
      try {
        for await (const chunk of training.streamLogs(principal, jobId, controller.signal)) {
          status = chunk.status;
          for (const entry of chunk.logs) res.write(`event: log\nid: ${entry.id}\ndata: ${JSON.stringify(entry)}\n\n`);
        }
      } catch (err) {
        if (!controller.signal.aborted)
          res.write(
            `event: error\ndata: ${JSON.stringify({ detail: err instanceof AppError ? err.message : 'the log stream was interrupted' })}\n\n`,
          );
      }
      if (!controller.signal.aborted) res.end(`event: end\ndata: ${JSON.stringify({ job_id: jobId, status })}\n\n`);
      return undefined;
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/training-jobs/:job_id/logs',
      summary: 'Log snapshot: {job_id, logs, total_logs}; poll to follow a running job',
      tag: 'Training',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const jobId = id(req.params.job_id, 'job_id');
      const logs = await training.logs(me(res), jobId);
      return { job_id: jobId, logs, total_logs: logs.length };
    },
  );
}

/** Checkpoints and downloads of the model and of checkpoints, through presigned URLs. */
function artifactsRoutes(api: Api, training: TrainingPort, me: Me): void {
  const checkpoints = async (principal: ReturnType<typeof me>, jobId: string) => {
    const list = await training.checkpoints(principal, jobId);
    return { success: true, run_id: jobId, checkpoints: list, count: list.length };
  };
  api.route(
    {
      method: 'get',
      path: '/core/training-jobs/:id/checkpoints',
      summary: 'Checkpoints, newest first',
      tag: 'Training',
      auth: 'key-or-session',
    },
    ({ req, res }) => checkpoints(me(res), id(req.params.id, 'id')),
  );
  api.route(
    {
      method: 'get',
      path: '/v1/training/jobs/:job_id/checkpoints',
      summary: 'Checkpoints (Tinker shape): {success, run_id, checkpoints, count}',
      tag: 'Training',
      auth: 'key-or-session',
    },
    ({ req, res }) => checkpoints(me(res), id(req.params.job_id, 'job_id')),
  );
  api.route(
    {
      method: 'get',
      path: '/v1/training/jobs/:job_id/checkpoints/:kind/:name/download',
      summary: 'Download one checkpoint (kind is weights or sampler_weights)',
      tag: 'Training',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const kind = String(req.params.kind);
      if (kind !== 'weights' && kind !== 'sampler_weights')
        throw new AppError(
          'NotFound',
          'CHECKPOINT_NOT_FOUND',
          `Unknown checkpoint kind '${kind}': use weights or sampler_weights.`,
        );
      const jobId = id(req.params.job_id, 'job_id');
      const d = await training.download(me(res), jobId, `${kind}/${String(req.params.name)}`);
      return {
        success: true,
        job_id: jobId,
        checkpoint_id: `${kind}/${String(req.params.name)}`,
        ...d,
        message: 'The URL is a temporary bearer credential: do not log or share it.',
      };
    },
  );

  for (const path of ['/core/training-jobs/:id/download', '/v1/training-jobs/:id/download']) {
    api.route(
      {
        method: 'get',
        path,
        summary: 'Presigned download of the trained model (job must be complete)',
        tag: 'Training',
        auth: 'key-or-session',
      },
      async ({ req, res }) => {
        const jobId = id(req.params.id, 'id');
        const d = await training.download(me(res), jobId, '');
        return {
          success: true,
          job_id: jobId,
          download_url: d.download_url,
          expires_in_seconds: d.expires_in_seconds,
          file_name: d.file_name,
          message: 'The URL is a temporary bearer credential: do not log or share it.',
        };
      },
    );
  }
}

/** Push-to-hub and held-out evaluations. */
function hubAndEvaluationRoutes(api: Api, training: TrainingPort, me: Me): void {
  api.route(
    {
      method: 'post',
      path: '/v1/training-jobs/:job_id/push-to-hub',
      summary:
        'Upload a complete job’s model to the operator’s Hugging Face-compatible hub (the token is used once, never stored)',
      tag: 'Training',
      auth: 'key-or-session',
      body: PushBody,
    },
    async ({ req, res, body }) => {
      const out = await training.pushToHub(me(res), id(req.params.job_id, 'job_id'), {
        repoId: body.repo_id,
        hubToken: body.hub_token,
        private: body.private,
      });
      return { success: true, ...out, message: `Pushed to ${out.url}` };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/core/evaluations',
      summary: 'Score a complete job on a dataset’s held-out split; poll GET /core/evaluations/:id',
      tag: 'Training',
      auth: 'key-or-session',
      body: EvaluationBody,
      response: { status: 202, description: 'Evaluation started' },
    },
    async ({ res, body }) => {
      const e = await training.createEvaluation(me(res), body.training_job_id, body.dataset_name);
      return { evaluation_id: e.id, status: e.status };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/core/evaluations/:id',
      summary: 'An evaluation: status, f1, precision, recall and per_label figures (decoders: and loss, perplexity)',
      tag: 'Training',
      auth: 'key-or-session',
      response: { status: 200, description: 'The evaluation', schema: EvaluationResponse },
    },
    async ({ req, res }) => {
      const evaluationId = String(req.params.id);
      if (!isUuid(evaluationId))
        throw new AppError('NotFound', 'EVALUATION_NOT_FOUND', `Evaluation '${evaluationId}' was not found.`);
      return training.getEvaluation(me(res), evaluationId);
    },
  );
}
