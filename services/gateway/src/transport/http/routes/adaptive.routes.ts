import { AppError } from '@whetstone/errors';
import { z } from 'zod';
import type { AdaptivePort } from '../../../application/adaptive-ports';
import type { Api } from '../api';
import { authOf } from '../auth';
import { parseParams } from '../validate';
import { pathId } from './inference/projects.routes';

const fraction = (what: string) =>
  z
    .number({ error: `must be a number from 0 to 1 (${what})` })
    .min(0, 'must be from 0 to 1')
    .max(1, 'must be from 0 to 1');
const int = (min: number, max: number) =>
  z
    .number({ error: `must be an integer from ${min} to ${max}` })
    .int(`must be an integer from ${min} to ${max}`)
    .min(min, `must be an integer from ${min} to ${max}`)
    .max(max, `must be an integer from ${min} to ${max}`);

const AdaptiveSettingsBody = z
  .object({
    enabled: z.boolean({ error: 'must be true or false' }),
    min_corrections: int(1, 100_000).default(50),
    heldout_dataset: z.string().trim().max(100, 'must be at most 100 characters').nullable().default(null),
    metric: z.enum(['f1', 'precision', 'recall'], { error: "must be 'f1', 'precision' or 'recall'" }).default('f1'),
    min_gain: fraction('absolute gain of the metric').default(0.01),
    f1_tolerance: fraction('largest F1 drop allowed per label').default(0.05),
    feedback_weight: int(1, 20).default(3),
    min_label_support: int(1, 10_000).default(5),
    nr_epochs: int(1, 100).nullable().default(null),
  })
  .openapi('AdaptiveSettingsRequest');

const ListQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });

/**
 * Adaptive inference (issue 16): a project's settings, starting an adaptation, and the audit trail. The orchestrator
 * owns them and checks the project with the router (another team's, or an unknown one, is 404).
 */
export function registerAdaptiveRoutes(api: Api, adaptive: AdaptivePort): void {
  const me = (res: Parameters<typeof authOf>[0]) => authOf(res).principal;

  api.route(
    {
      method: 'put',
      path: '/projects/:project_id/adaptive',
      summary:
        'Adaptive settings: {enabled, min_corrections, heldout_dataset, metric, min_gain, f1_tolerance, feedback_weight, min_label_support, nr_epochs}; omitted fields take the defaults',
      tag: 'Adaptive',
      auth: 'key-or-session',
      body: AdaptiveSettingsBody,
    },
    async ({ req, res, body }) =>
      adaptive.setSettings(me(res), { project_id: pathId(req.params.project_id, 'project_id'), ...body }),
  );

  api.route(
    {
      method: 'get',
      path: '/projects/:project_id/adaptive',
      summary: 'The project’s adaptive settings; the defaults (disabled) until set',
      tag: 'Adaptive',
      auth: 'key-or-session',
    },
    async ({ req, res }) => adaptive.getSettings(me(res), pathId(req.params.project_id, 'project_id')),
  );

  api.route(
    {
      method: 'post',
      path: '/projects/:project_id/adapt',
      summary:
        'Start an adaptation now: retrain the deployed job on the project’s feedback dataset, score both on held-out data, promote or reject',
      tag: 'Adaptive',
      auth: 'key-or-session',
      response: {
        status: 202,
        description: 'Adaptation started (status training); poll GET /projects/:id/adaptations/:adaptation_id',
      },
    },
    async ({ req, res }) => adaptive.adapt(me(res), pathId(req.params.project_id, 'project_id')),
  );

  api.route(
    {
      method: 'get',
      path: '/projects/:project_id/adaptations',
      summary: 'The project’s adaptation audit trail, newest first: corrections, jobs, both evaluations, the decision',
      tag: 'Adaptive',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const { limit } = parseParams(ListQuery, req.query, 'query');
      return { data: await adaptive.list(me(res), pathId(req.params.project_id, 'project_id'), limit) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/projects/:project_id/adaptations/:adaptation_id',
      summary: 'One adaptation: its jobs, both evaluations and the gate’s decision with its reason',
      tag: 'Adaptive',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const projectId = pathId(req.params.project_id, 'project_id');
      const a = await adaptive.get(me(res), pathId(req.params.adaptation_id, 'adaptation_id'));
      if (a.project_id !== projectId)
        throw new AppError('NotFound', 'ADAPTATION_NOT_FOUND', `Adaptation '${a.id}' was not found in this project.`);
      return a;
    },
  );
}
