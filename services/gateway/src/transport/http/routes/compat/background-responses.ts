import { AppError, isUuid, toHttpError } from '@whetstone/errors';
import type { ChatBatches, ChatBatchView, ChatInput, Principal } from '../../../../application/ports';
import { ToolCallAssembler } from './chat-run';
import type { ResponsesBody } from './responses.schema';
import { responseOfReply } from './responses.routes';
import { RESPONSE_ID_PREFIX } from './stored-responses';
import { invalidBody } from '../../validate';

/**
 * OpenAI's background Responses (`background: true`): the call is stored in the router as a batch of one and run
 * by its batch worker (the same worker as Anthropic's Message Batches), so it survives restarts and the caller polls
 * `GET /v1/responses/:id` (`queued` → `in_progress` → `completed`, `failed` or `cancelled`) or cancels it with
 * `POST /v1/responses/:id/cancel`.
 */

type Found = NonNullable<Awaited<ReturnType<ChatBatches['findCall']>>>;

/** What `background: true` cannot go with: an unstored call (it could never be read back), or a stream. */
export function checkBackground(body: ResponsesBody): void {
  if (body.store === false)
    throw invalidBody('store', 'a background response is stored: leave store out or set it true');
  if (body.stream) throw invalidBody('stream', 'a background response is polled, not streamed: leave stream out');
}

const unix = (d: Date) => Math.floor(d.getTime() / 1000);

/** The Response object of a background call that has no reply (yet, or at all). */
function withoutReply(
  id: string,
  batch: ChatBatchView,
  model: string,
  status: string,
  error: { code: string; message: string } | null = null,
  metadata: Record<string, string> = {},
) {
  return {
    id: `${RESPONSE_ID_PREFIX}${id}`,
    object: 'response',
    created_at: unix(batch.createdAt),
    status,
    background: true,
    model,
    output: [],
    output_text: '',
    error,
    incomplete_details: null,
    usage: null,
    metadata,
  };
}

/** Stores the call to run in the background; the Response object answered at once (`queued`). */
export async function startBackground(batches: ChatBatches, principal: Principal, input: ChatInput, model: string) {
  const { batch, responseIds } = await batches.create(
    principal,
    [{ customId: 'response', input }],
    'background_response',
  );
  return withoutReply(responseIds[0]!, batch, model, 'queued', null, input.metadata ?? {});
}

/** The Response object of a background call as it stands. */
function render(id: string, found: Found) {
  const { batch, result, model, metadata } = found;
  if (!result) return withoutReply(id, batch, model, found.started ? 'in_progress' : 'queued', null, metadata);
  if (result.outcome === 'succeeded' && 'reply' in result) {
    const tools = new ToolCallAssembler();
    tools.add(result.reply.toolCalls);
    const { reply } = result;
    const meta = { created: unix(batch.createdAt), metadata: result.requestMetadata };
    const whole = { ...reply, toolCalls: tools.all(), done: reply.done! };
    return {
      ...responseOfReply(whole, meta, result.requestedModel, reply.reasoning !== ''),
      background: true,
    };
  }
  if (result.outcome === 'errored') {
    const { error } = toHttpError(result.error, 'openai').body as { error: { code: string; message: string } };
    return withoutReply(id, batch, model, 'failed', { code: error.code, message: error.message }, metadata);
  }
  if (result.outcome === 'canceled') return withoutReply(id, batch, model, 'cancelled', null, metadata);
  const expired = { code: 'response_expired', message: 'The response was not run within 24 hours of its creation.' };
  return withoutReply(id, batch, model, 'failed', expired, metadata);
}

/** The background call a public `resp_…` id names; null when it names none of the team's. */
async function find(batches: ChatBatches, principal: Principal, publicId: string) {
  const id = publicId.startsWith(RESPONSE_ID_PREFIX) ? publicId.slice(RESPONSE_ID_PREFIX.length) : '';
  if (!isUuid(id)) return null;
  const found = await batches.findCall(principal, id);
  return found?.batch.kind === 'background_response' ? { id, found } : null;
}

/** The Response object of a background call, or null when the id names none (it may be an ordinary stored one). */
export async function backgroundResponse(batches: ChatBatches, principal: Principal, publicId: string) {
  const hit = await find(batches, principal, publicId);
  return hit ? render(hit.id, hit.found) : null;
}

/**
 * Cancels a background call: one not yet taken by a worker ends `cancelled`; one running finishes. Cancelling a call
 * that has ended changes nothing. Null when the id names no background call of the team.
 */
export async function cancelBackground(batches: ChatBatches, principal: Principal, publicId: string) {
  const hit = await find(batches, principal, publicId);
  if (!hit) return null;
  await batches.cancel(principal, hit.found.batch.id);
  const now = await batches.findCall(principal, hit.id);
  return now ? render(hit.id, now) : null;
}

/**
 * Deletes an ended background call's batch (its stored record goes with the caller's history deletion); a call still
 * queued or running is 409. False when the id names no background call of the team.
 */
export async function deleteBackground(batches: ChatBatches, principal: Principal, publicId: string) {
  const hit = await find(batches, principal, publicId);
  if (!hit) return false;
  if (hit.found.batch.status !== 'ended')
    throw new AppError(
      'FailedPrecondition',
      'RESPONSE_NOT_COMPLETED',
      `Response '${publicId.slice(0, 200)}' is still ${hit.found.started ? 'running' : 'queued'}: cancel it first.`,
    );
  await batches.delete(principal, hit.found.batch.id);
  return true;
}
