import { z } from 'zod';
import { AppError, toHttpError } from '@whetstone/errors';
import type {
  ChatBatches,
  ChatBatchResultView,
  ChatBatchView,
  ChatInput,
  Principal,
} from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { invalidBody, invalidQuery, parseParams } from '../../validate';
import { ToolCallAssembler } from './chat-run';
import { MessagesBody, messagesInputOf } from './messages.schema';
import { messageOfReply } from './messages.routes';

/**
 * Anthropic's Message Batches (the `@anthropic-ai/sdk` client's `messages.batches`): many Messages requests stored
 * at once and answered in the background by the router's batch worker, each billed and (with `store: true`)
 * recorded as the Messages call it is; the results are read as JSON Lines once the batch has ended.
 */

const PREFIX = 'msgbatch_';
/** Requests per batch: the body is one JSON request, checked at once (the router takes up to 50,000, OpenAI's cap). */
const MAX_REQUESTS = 10_000;

const BatchRequest = z.object({
  custom_id: z.string().regex(/^[\w-]{1,64}$/, 'must be 1–64 letters, digits, _ or -'),
  params: MessagesBody,
});
const MessageBatchBody = z
  .object({
    requests: z
      .array(BatchRequest)
      .min(1, 'must hold at least 1 request')
      .max(MAX_REQUESTS, `must hold at most ${MAX_REQUESTS} requests`),
  })
  .openapi('MessageBatchCreateRequest');

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  after_id: z.string().max(200).optional(),
  before_id: z.string().max(200).optional(),
});

const notFound = (id: string) =>
  new AppError('NotFound', 'BATCH_NOT_FOUND', `Message batch '${id.slice(0, 100)}' was not found.`);

/** The batch id inside a public `msgbatch_…` id; anything else names no batch. */
function batchIdOf(publicId: unknown): string {
  const id = String(publicId);
  if (!id.startsWith(PREFIX)) throw notFound(id);
  return id.slice(PREFIX.length);
}

/** A message batch of the team; a background Response (a batch of one inside) is none. */
async function messageBatch(batches: ChatBatches, principal: Principal, publicId: unknown): Promise<ChatBatchView> {
  const batch = await batches.get(principal, batchIdOf(publicId));
  if (batch.kind !== 'messages') throw notFound(String(publicId));
  return batch;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Anthropic's MessageBatch object; `results_url` once it has ended. */
function batchObject(batch: ChatBatchView, publicBaseUrl: string) {
  const id = `${PREFIX}${batch.id}`;
  return {
    id,
    type: 'message_batch',
    processing_status: batch.status,
    request_counts: batch.counts,
    ended_at: iso(batch.endedAt),
    created_at: iso(batch.createdAt),
    expires_at: iso(batch.expiresAt),
    archived_at: null,
    cancel_initiated_at: iso(batch.cancelInitiatedAt),
    results_url: batch.status === 'ended' ? `${publicBaseUrl}/v1/messages/batches/${id}/results` : null,
  };
}

/** A request's params as the chat core's input; its errors name the request (`requests[2].params.messages`). */
function inputOf(params: MessagesBody, index: number): ChatInput {
  const at = `requests[${index}].params`;
  if (params.stream) throw invalidBody(`${at}.stream`, 'a batch request cannot stream; leave stream out');
  try {
    return messagesInputOf(params);
  } catch (err) {
    if (!(err instanceof AppError) || !err.fieldErrors.length) throw err;
    throw new AppError(err.kind, err.reason, err.message, {
      fieldErrors: err.fieldErrors.map((f) => ({ ...f, field: `${at}.${f.field}` })),
    });
  }
}

/** One line of the results file, as Anthropic's MessageBatchIndividualResponse. */
function resultLine(r: ChatBatchResultView): object {
  if (r.outcome === 'succeeded' && 'reply' in r) {
    const tools = new ToolCallAssembler();
    tools.add(r.reply.toolCalls);
    const done = r.reply.done;
    const message = done
      ? messageOfReply(
          {
            responseId: r.reply.responseId,
            text: r.reply.text,
            reasoning: r.reply.reasoning,
            toolCalls: tools.all(),
            logprobs: [],
            done,
          },
          r.requestedModel,
          // The router returns reasoning only to a request that asked for it.
          r.reply.reasoning !== '',
        )
      : null;
    return { custom_id: r.customId, result: { type: 'succeeded', message } };
  }
  if (r.outcome === 'errored')
    return { custom_id: r.customId, result: { type: 'errored', error: toHttpError(r.error, 'anthropic').body } };
  return { custom_id: r.customId, result: { type: r.outcome } };
}

const tag = 'Compatible surfaces';

/** POST/GET /v1/messages/batches, GET/DELETE /v1/messages/batches/:id, …/cancel and …/results. */
export function registerMessageBatchRoutes(api: Api, batches: ChatBatches, publicBaseUrl: string): void {
  registerBatchRoutes(api, batches, publicBaseUrl);
  registerBatchResultRoutes(api, batches, publicBaseUrl);
}

/** Create, list and read batches. */
function registerBatchRoutes(api: Api, batches: ChatBatches, publicBaseUrl: string): void {
  api.route(
    {
      method: 'post',
      path: '/v1/messages/batches',
      summary: `Anthropic-compatible Message Batches: store up to ${MAX_REQUESTS} Messages requests, answered in the background`,
      tag,
      auth: 'key',
      body: MessageBatchBody,
      response: { status: 200, description: 'The `message_batch` object, `processing_status: "in_progress"`' },
    },
    async ({ res, body }) => {
      const requests = body.requests.map((r, i) => ({ customId: r.custom_id, input: inputOf(r.params, i) }));
      return batchObject((await batches.create(authOf(res).principal, requests)).batch, publicBaseUrl);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/messages/batches',
      summary:
        "The team's message batches, newest first: `{data, has_more, first_id, last_id}`; `limit` (1–1000, default 20), `after_id` (older), `before_id` (newer)",
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const q = parseParams(ListQuery, req.query, 'query');
      const cursor = (field: 'after_id' | 'before_id') => {
        const value = q[field];
        if (value === undefined) return undefined;
        if (!value.startsWith(PREFIX)) throw invalidQuery(field, 'names no message batch of this team');
        return value.slice(PREFIX.length);
      };
      const page = await batches.list(authOf(res).principal, {
        limit: q.limit ?? 20,
        afterId: cursor('after_id'),
        beforeId: cursor('before_id'),
      });
      const data = page.batches.map((b) => batchObject(b, publicBaseUrl));
      return { data, has_more: page.hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/messages/batches/:message_batch_id',
      summary: 'One message batch with its request counts (`results_url` once it has ended)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) =>
      batchObject(await messageBatch(batches, authOf(res).principal, req.params.message_batch_id), publicBaseUrl),
  );
}

/** Cancel, delete and read the results of one batch. */
function registerBatchResultRoutes(api: Api, batches: ChatBatches, publicBaseUrl: string): void {
  api.route(
    {
      method: 'post',
      path: '/v1/messages/batches/:message_batch_id/cancel',
      summary: 'Cancel a message batch: requests not yet running end as canceled; running ones finish',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const batch = await messageBatch(batches, principal, req.params.message_batch_id);
      return batchObject(await batches.cancel(principal, batch.id), publicBaseUrl);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/v1/messages/batches/:message_batch_id',
      summary:
        'Delete an ended message batch and its results: `{id, type: "message_batch_deleted"}` (409 while it runs)',
      tag,
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const batch = await messageBatch(batches, principal, req.params.message_batch_id);
      return { id: `${PREFIX}${await batches.delete(principal, batch.id)}`, type: 'message_batch_deleted' };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/v1/messages/batches/:message_batch_id/results',
      summary:
        "An ended batch's results as JSON Lines, one `{custom_id, result}` per request in request order (409 until it has ended)",
      tag,
      auth: 'key-or-session',
      response: {
        status: 200,
        description:
          '`application/x-jsonl`: `result.type` succeeded (with `message`), errored (with `error`), canceled or expired',
      },
    },
    async ({ req, res }) => {
      const principal = authOf(res).principal;
      const batchId = (await messageBatch(batches, principal, req.params.message_batch_id)).id;
      // The first page before any byte, so an unknown or unfinished batch is an ordinary error response.
      let page = await batches.results(principal, batchId, 0);
      res.status(200).type('application/x-jsonl; charset=utf-8');
      for (;;) {
        for (const r of page.results) res.write(`${JSON.stringify(resultLine(r))}\n`);
        if (!page.nextOffset || res.destroyed) break;
        page = await batches.results(principal, batchId, page.nextOffset);
      }
      res.end();
      return undefined;
    },
  );
}
