import { AppError, Reasons } from '@whetstone/errors';
import type { Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { meta } from './extraction.routes';
import { respondGenerate } from './generate';
import { CreateDeploymentBody, CreateProjectBody, ProjectInferenceBody } from './schemas';

/** A path id, or 400 naming the parameter. */
export const pathId = (value: unknown, name: string): string => {
  if (typeof value !== 'string' || !value || value.length > 100)
    throw new AppError('Malformed', Reasons.MALFORMED_PARAMETER, `Invalid path parameter: ${name}`);
  return value;
};

function registerProjectCrud(api: Api, inference: Inference): void {
  api.route(
    { method: 'get', path: '/projects', summary: 'List the team’s projects', tag: 'Projects', auth: 'key-or-session' },
    async ({ res }) => ({
      projects: await inference.listProjects(authOf(res).principal),
    }),
  );

  api.route(
    {
      method: 'post',
      path: '/projects',
      summary: 'Create a project (names are unique per team)',
      tag: 'Projects',
      auth: 'key-or-session',
      body: CreateProjectBody,
      response: { status: 201, description: 'The project' },
    },
    async ({ res, body }) => {
      const p = await inference.createProject(authOf(res).principal, body.name);
      return { id: p.id, name: p.name, created_at: p.created_at };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/projects/:project_id',
      summary: 'Delete a project and its deployment history; its endpoint stops at once',
      tag: 'Projects',
      auth: 'key-or-session',
      response: { status: 204, description: 'Deleted' },
    },
    async ({ req, res }) => {
      await inference.deleteProject(authOf(res).principal, pathId(req.params.project_id, 'project_id'));
      return undefined;
    },
  );
}

function registerDeploymentRoutes(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/projects/:project_id/deployments',
      summary: 'Deploy a complete training job; deploying → active once warm',
      tag: 'Projects',
      auth: 'key-or-session',
      body: CreateDeploymentBody,
      response: { status: 201, description: 'The deployment' },
    },
    ({ req, res, body }) =>
      inference.createDeployment(
        authOf(res).principal,
        pathId(req.params.project_id, 'project_id'),
        body.training_job_id,
      ),
  );

  api.route(
    {
      method: 'get',
      path: '/projects/:project_id/deployments',
      summary: 'Deployment history, newest first',
      tag: 'Projects',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const projectId = pathId(req.params.project_id, 'project_id');
      const deployments = await inference.listDeployments(authOf(res).principal, projectId);
      return { project_id: req.params.project_id, count: deployments.length, deployments };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/training-jobs/:job_id/deployments',
      summary: 'Deployments of one training job across projects, newest first',
      tag: 'Projects',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const deployments = await inference.listJobDeployments(
        authOf(res).principal,
        pathId(req.params.job_id, 'job_id'),
      );
      return { training_job_id: req.params.job_id, count: deployments.length, deployments };
    },
  );
}

function registerProjectInference(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/projects/:project_id/inference',
      summary: 'Run on the project’s active deployment (schema optional: the trained schema is used)',
      tag: 'Projects',
      auth: 'key-or-session',
      body: ProjectInferenceBody,
    },
    async ({ req, res, body }) => {
      const projectId = pathId(req.params.project_id, 'project_id');
      if (body.messages) return respondGenerate(inference, res, body, projectId);
      const out = await inference.infer(authOf(res).principal, {
        modelId: '',
        projectId,
        texts: body.inputs ?? [body.text!],
        schema: body.schema,
        threshold: body.threshold ?? 0,
        includeConfidence: body.include_confidence ?? false,
        includeSpans: body.include_spans ?? false,
        task: 'project',
      });
      return {
        ...(body.inputs ? { results: out.results } : { result: out.results[0] }),
        project_id: req.params.project_id,
        ...meta(out),
      };
    },
  );
}

/** Projects, their deployments, and calls on a project's active deployment. */
export function registerProjectRoutes(api: Api, inference: Inference): void {
  registerProjectCrud(api, inference);
  registerDeploymentRoutes(api, inference);
  registerProjectInference(api, inference);
}
