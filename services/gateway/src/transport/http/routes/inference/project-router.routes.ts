import type { Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { pathId } from './projects.routes';
import { ProjectRouterBody } from './schemas';

/**
 * A project as a router: candidates, a reference model and rules; Chat calls
 * naming the project on the compatible surfaces are then routed (docs/api.md,
 * "Router projects"). Another team's project and unknown models are 404.
 */
export function registerProjectRouterRoutes(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'put',
      path: '/projects/:project_id/router',
      summary: 'Make the project a router (or replace its router): the cheapest allowed candidate answers',
      tag: 'Projects',
      auth: 'key-or-session',
      body: ProjectRouterBody,
      response: { status: 200, description: 'The router, with its candidates ranked cheapest first' },
    },
    ({ req, res, body }) =>
      inference.setProjectRouter(authOf(res).principal, pathId(req.params.project_id, 'project_id'), {
        candidates: body.candidates,
        referenceModel: body.reference_model,
        maxPromptTokens: body.rules?.max_prompt_tokens ?? 0,
      }),
  );

  api.route(
    {
      method: 'get',
      path: '/projects/:project_id/router',
      summary: 'The project’s router; 404 when it is not a router',
      tag: 'Projects',
      auth: 'key-or-session',
    },
    ({ req, res }) => inference.getProjectRouter(authOf(res).principal, pathId(req.params.project_id, 'project_id')),
  );

  api.route(
    {
      method: 'delete',
      path: '/projects/:project_id/router',
      summary: 'Turn routing off: the active deployment serves the project again',
      tag: 'Projects',
      auth: 'key-or-session',
      response: { status: 204, description: 'Routing is off' },
    },
    async ({ req, res }) => {
      await inference.deleteProjectRouter(authOf(res).principal, pathId(req.params.project_id, 'project_id'));
      return undefined;
    },
  );
}
