import type { Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';

/** The catalog of base models and the OpenAI-shaped list of callable model ids. */
export function registerCatalogRoutes(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'get',
      path: '/v1/base-models',
      summary: 'List built-in and upstream base models with flags, training bounds and prices',
      tag: 'Models',
      auth: 'key-or-session',
    },
    async ({ res }) => {
      const data = await inference.listBaseModels(authOf(res).principal);
      return { object: 'list', data, count: data.length };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/models',
      summary: 'Model ids callable by this team (OpenAI list shape)',
      tag: 'Models',
      auth: 'key-or-session',
    },
    async ({ res }) => ({
      object: 'list',
      data: await inference.listModels(authOf(res).principal),
    }),
  );
}
