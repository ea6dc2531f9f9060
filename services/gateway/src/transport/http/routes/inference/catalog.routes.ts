import { AppError } from '@whetstone/errors';
import type { Request } from 'express';
import type { Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { surfaceOf } from '../../errors';

type ModelEntry = Awaited<ReturnType<Inference['listModels']>>[number];

/** Anthropic's model object: its SDK's `models.list` and `models.retrieve` parse this shape. */
const anthropicModel = (m: ModelEntry) => ({
  type: 'model',
  id: m.id,
  display_name: m.id,
  created_at: new Date(m.created * 1000).toISOString(),
});

/** Requests carrying the messages contract's version header are answered in its shapes (spec, envelope rule 2). */
const wantsAnthropic = (req: Request) => surfaceOf(req) === 'anthropic';

/** The catalog of base models, and the callable model ids in OpenAI's or Anthropic's list and model shapes. */
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
      summary: "Model ids callable by this team (OpenAI's list shape; Anthropic's with an anthropic-version header)",
      tag: 'Models',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const data = await inference.listModels(authOf(res).principal);
      if (!wantsAnthropic(req)) return { object: 'list', data };
      return {
        data: data.map(anthropicModel),
        has_more: false,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/models/:model_id',
      summary: "One callable model (OpenAI's model shape; Anthropic's with an anthropic-version header)",
      tag: 'Models',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const id = String(req.params.model_id);
      const found = (await inference.listModels(authOf(res).principal)).find((m) => m.id === id);
      if (!found)
        throw new AppError(
          'NotFound',
          'MODEL_NOT_FOUND',
          `Model '${id}' was not found. GET /v1/models lists the models this key can call.`,
        );
      return wantsAnthropic(req) ? anthropicModel(found) : found;
    },
  );
}
