import { z } from 'zod';
import { AppError, isUuid } from '@whetstone/errors';
import type { ChatBatches, FilesPort } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { invalidBody, invalidQuery, parseParams } from '../../validate';
import { Metadata, openAiList } from './blocks';
import { FILE_ID_PREFIX } from './files.routes';
import { BATCH_ID_PREFIX, batchObject, ENDPOINTS, openAiBatch, requestsOfFile } from './openai-batches';

const BatchBody = z
  .object({
    input_file_id: z.string().min(1).max(200),
    endpoint: z.enum(ENDPOINTS, { message: `must be one of ${ENDPOINTS.join(', ')}` }),
    completion_window: z.literal('24h', { message: 'must be 24h' }),
    metadata: Metadata.nullish(),
  })
  .openapi('BatchCreateRequest');

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  after: z.string().max(200).optional(),
});

const tag = 'Compatible surfaces';

/** POST/GET /v1/batches, GET /v1/batches/:batch_id and POST …/cancel (OpenAI's Batch API, the `openai` client's `batches`). */
export function registerOpenAiBatchRoutes(api: Api, batches: ChatBatches, files: FilesPort): void {
  api.route(
    {
      method: 'post',
      path: '/v1/batches',
      summary:
        'OpenAI-compatible batch over an uploaded `batch` file of up to 50,000 chat completions, Responses, completions or embeddings requests, answered in the background within 24h',
      tag,
      auth: 'key',
      body: BatchBody,
      response: {
        status: 200,
        description:
          'The `batch` object: `status: "in_progress"`, or `"failed"` with `errors` listing the input file\'s bad lines',
      },
    },
    async ({ res, body }) => {
      const principal = authOf(res).principal;
      const fileId = body.input_file_id.startsWith(FILE_ID_PREFIX)
        ? body.input_file_id.slice(FILE_ID_PREFIX.length)
        : '';
      if (!isUuid(fileId)) throw invalidBody('input_file_id', 'names no uploaded file of this team');
      const input = await files.content(principal, fileId).catch((err: unknown) => {
        if (err instanceof AppError && err.kind === 'NotFound')
          throw invalidBody('input_file_id', 'names no uploaded file of this team');
        throw err;
      });
      if (input.file.purpose !== 'batch')
        throw invalidBody('input_file_id', `must name a file uploaded with purpose batch, not ${input.file.purpose}`);
      // A file whose lines do not validate makes a failed batch that lists why, as OpenAI's do.
      const { requests, errors } = await requestsOfFile(input.content, body.endpoint);
      const source = {
        inputFileId: fileId,
        endpoint: body.endpoint,
        metadata: body.metadata ?? {},
        ...(errors.length ? { errors } : {}),
      };
      return batchObject((await batches.create(principal, requests, 'openai_batch', source)).batch);
    },
  );

  registerBatchListRoute(api, batches);
}

/** GET /v1/batches. */
function registerBatchListRoute(api: Api, batches: ChatBatches): void {
  api.route(
    {
      method: 'get',
      path: '/v1/batches',
      summary:
        'The team\'s OpenAI batches, newest first: `{object: "list", data, first_id, last_id, has_more}`; `limit` (1–100, default 20), `after` (older)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const q = parseParams(ListQuery, req.query, 'query');
      if (q.after !== undefined && !q.after.startsWith(BATCH_ID_PREFIX))
        throw invalidQuery('after', 'names no batch of this team');
      const page = await batches
        .list(authOf(res).principal, {
          limit: q.limit ?? 20,
          afterId: q.after?.slice(BATCH_ID_PREFIX.length),
          kind: 'openai_batch',
        })
        .catch((err: unknown) => {
          if (err instanceof AppError && err.kind === 'InvalidArgument')
            throw invalidQuery('after', 'names no batch of this team');
          throw err;
        });
      const data = page.batches.map(batchObject);
      return openAiList(data, page.hasMore);
    },
  );

  registerBatchReadRoutes(api, batches);
}

/** GET /v1/batches/:batch_id and POST …/cancel. */
function registerBatchReadRoutes(api: Api, batches: ChatBatches): void {
  api.route(
    {
      method: 'get',
      path: '/v1/batches/:batch_id',
      summary: 'One OpenAI batch with its request counts (`output_file_id` and `error_file_id` once it has ended)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => batchObject(await openAiBatch(batches, authOf(res).principal, String(req.params.batch_id))),
  );

  api.route(
    {
      method: 'post',
      path: '/v1/batches/:batch_id/cancel',
      summary:
        'Cancel an OpenAI batch: requests not yet running are not run; running ones finish (`cancelling`, then `cancelled`)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const batch = await openAiBatch(batches, principal, String(req.params.batch_id));
      return batchObject(await batches.cancel(principal, batch.id));
    },
  );
}
