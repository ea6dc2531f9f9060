import { z } from 'zod';
import { AppError, isUuid } from '@whetstone/errors';
import type { HistoryPort } from '../../../../application/history-ports';
import type { Principal } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { invalidQuery, parseParams } from '../../validate';
import { Metadata, metadataOfQuery, openAiList } from './blocks';
import { CHAT_COMPLETIONS, completionOfRecord, CursorQuery, storedCall } from './stored-responses';

/**
 * OpenAI's list and update of stored chat completions (`chat.completions.list`, `chat.completions.update`): the
 * team's chat-completions calls made with `store: true`, filtered by model and metadata, oldest first by default.
 */

/** GET /v1/chat/completions's query, besides its `metadata[key]=value` pairs. */
const ListQuery = z.object({
  model: z.string().trim().max(200).optional(),
  limit: CursorQuery.shape.limit,
  order: CursorQuery.shape.order,
  after: CursorQuery.shape.after,
});

/** POST /v1/chat/completions/:completion_id's body: the new metadata, which replaces the old (null clears it). */
const CompletionUpdateBody = z.object({ metadata: Metadata.nullable() }).openapi('ChatCompletionUpdateRequest');

/** One page of the team's stored chat completions, in OpenAI's cursor list shape. */
async function storedCompletionsPage(history: HistoryPort, principal: Principal, rawQuery: unknown) {
  const query = (rawQuery ?? {}) as Record<string, unknown>;
  const q = parseParams(ListQuery, query, 'query');
  const metadata = metadataOfQuery(query);
  const afterId = q.after?.startsWith(CHAT_COMPLETIONS.prefix) ? q.after.slice(CHAT_COMPLETIONS.prefix.length) : '';
  if (q.after !== undefined && !isUuid(afterId))
    throw invalidQuery('after', `names no stored chat completion: '${q.after.slice(0, 200)}'`);
  const page = await history
    .list(principal, {
      limit: q.limit ?? 20,
      offset: 0,
      surface: CHAT_COMPLETIONS.surface,
      modelId: q.model || undefined,
      metadata,
      oldestFirst: (q.order ?? 'asc') === 'asc',
      afterId: afterId || undefined,
      countToPage: true,
    })
    .catch((err: unknown) => {
      // History names its own cursor parameter; the caller's is `after`.
      if (err instanceof AppError && err.fieldErrors.some((f) => f.field === 'after_id'))
        throw invalidQuery('after', `names no chat completion of this list: '${String(q.after).slice(0, 200)}'`);
      throw err;
    });
  const data = page.records.map(completionOfRecord);
  return openAiList(data, page.totalCapped || page.total > data.length);
}

/** GET /v1/chat/completions (the list) and POST /v1/chat/completions/:completion_id (the metadata update). */
export function registerCompletionListRoutes(api: Api, history: HistoryPort): void {
  api.route(
    {
      method: 'get',
      path: '/v1/chat/completions',
      summary: 'OpenAI-compatible list of the stored chat completions (those made with store: true)',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      response: {
        status: 200,
        description:
          '`{object: "list", data, first_id, last_id, has_more}` of `chat.completion` objects; `model`, `metadata[key]=value`, `limit` (1–100, default 20), `order` (`asc` default), `after`',
      },
    },
    async ({ req, res }) => storedCompletionsPage(history, authOf(res).principal, req.query),
  );
  api.route(
    {
      method: 'post',
      path: '/v1/chat/completions/:completion_id',
      summary: 'OpenAI-compatible update of a stored chat completion: its metadata, replaced (null clears it)',
      tag: 'Compatible surfaces',
      auth: 'key-or-session',
      body: CompletionUpdateBody,
      response: { status: 200, description: 'The `chat.completion` object with its new `metadata`' },
    },
    async ({ req, res, body }) => {
      const principal = authOf(res).principal;
      const record = await storedCall(CHAT_COMPLETIONS, history, principal, String(req.params.completion_id));
      return completionOfRecord(await history.updateMetadata(principal, record.inference_id, body.metadata ?? {}));
    },
  );
}
