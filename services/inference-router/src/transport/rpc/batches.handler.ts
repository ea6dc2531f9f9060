import { create, fromBinary, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { AppError, INTERNAL_MESSAGE } from '@whetstone/errors';
import {
  ChatBatchItemSchema,
  type ChatBatchItem,
  ChatBatchKind,
  ChatBatchOutcome,
  ChatBatchResultSchema,
  type ChatBatchSchema,
  type ChatBatchService,
  ChatBatchStatus,
  ChatRequestSchema,
  EmbedTextsRequestSchema,
} from '@whetstone/proto/inference/v1';
import { errorDetailOf, requireCaller } from '@whetstone/rpc';
import {
  type BatchAnswer,
  type BatchAnswers,
  type BatchDeps,
  batchResults,
  cancelBatch,
  createBatch,
  deleteBatch,
  getBatch,
  getBatchedCall,
  listBatches,
} from '../../application/batches';
import { chat } from '../../application/chat';
import { embed } from '../../application/embed';
import type { RouterDeps } from '../../application/deps';
import type { BatchCall, BatchResultRow, ClaimedBatchRequest } from '../../application/ports';
import {
  type BatchKind,
  batchStatusOf,
  type BatchRequestState,
  type ChatBatch,
  pricePercentOf,
} from '../../domain/batch';
import type { TokenLogprob, ToolCallDelta } from '../../domain/chat';
import { chatCallOf, chatPieceToPb } from './chat.mapper';
import { embedInputOf, embedOutputToPb } from './router.mapper';

const STATUS = {
  in_progress: ChatBatchStatus.IN_PROGRESS,
  canceling: ChatBatchStatus.CANCELING,
  ended: ChatBatchStatus.ENDED,
} as const;

const KIND: Record<BatchKind, ChatBatchKind> = {
  messages: ChatBatchKind.MESSAGE_BATCH,
  background_response: ChatBatchKind.BACKGROUND_RESPONSE,
  openai_batch: ChatBatchKind.OPENAI_BATCH,
};
const kindOf = (k: ChatBatchKind): BatchKind =>
  k === ChatBatchKind.BACKGROUND_RESPONSE
    ? 'background_response'
    : k === ChatBatchKind.OPENAI_BATCH
      ? 'openai_batch'
      : 'messages';

const OUTCOME: Record<Exclude<BatchRequestState, 'pending'>, ChatBatchOutcome> = {
  succeeded: ChatBatchOutcome.SUCCEEDED,
  errored: ChatBatchOutcome.ERRORED,
  canceled: ChatBatchOutcome.CANCELED,
  expired: ChatBatchOutcome.EXPIRED,
};

function batchToPb(batch: ChatBatch): MessageInitShape<typeof ChatBatchSchema> {
  return {
    id: batch.id,
    kind: KIND[batch.kind],
    status: STATUS[batchStatusOf(batch)],
    counts: { ...batch.counts },
    createdAt: timestampFromDate(batch.createdAt),
    expiresAt: timestampFromDate(batch.expiresAt),
    ...(batch.endedAt ? { endedAt: timestampFromDate(batch.endedAt) } : {}),
    ...(batch.cancelInitiatedAt ? { cancelInitiatedAt: timestampFromDate(batch.cancelInitiatedAt) } : {}),
    ...(batch.source ? { source: { ...batch.source } } : {}),
  };
}

/** An ended request's result; the stored one names no custom id (the row does), canceled and expired have none. */
const resultToPb = (r: BatchResultRow) =>
  r.result
    ? { ...fromBinary(ChatBatchResultSchema, r.result), customId: r.customId }
    : create(ChatBatchResultSchema, { customId: r.customId, outcome: OUTCOME[r.state as 'canceled'] });

/**
 * A request as stored: a Chat call as its ChatRequest bytes; an embeddings call as its item (the EmbedTextsRequest and
 * the surface fields returned with its result), without the custom id, which has its own column.
 */
function storedRequest(item: ChatBatchItem) {
  if (item.embed) {
    const { embed: call, requestMetadata } = item;
    const request = toBinary(ChatBatchItemSchema, create(ChatBatchItemSchema, { embed: call, requestMetadata }));
    return { customId: item.customId, call: 'embed' as const, request, store: false };
  }
  const chatRequest = item.chat ?? create(ChatRequestSchema);
  const request = toBinary(ChatRequestSchema, chatRequest);
  return { customId: item.customId, call: 'chat' as const, request, store: chatRequest.store };
}

/** The model a stored request names, and the metadata its result echoes. */
function requestedOf(call: BatchCall, request: Uint8Array) {
  if (call === 'embed') {
    const item = fromBinary(ChatBatchItemSchema, request);
    return { requestedModel: item.embed?.modelId ?? '', requestMetadata: item.requestMetadata };
  }
  const chatRequest = fromBinary(ChatRequestSchema, request);
  return { requestedModel: chatRequest.model, requestMetadata: chatRequest.metadata };
}

/** ChatBatchService: proto in, use case, proto out. Requests are kept as the bytes `storedRequest` makes. */
export function batchesHandler(deps: BatchDeps): ServiceImpl<typeof ChatBatchService> {
  return {
    async createChatBatch(req) {
      const requests = req.requests.map(storedRequest);
      const source = req.source
        ? {
            inputFileId: req.source.inputFileId,
            endpoint: req.source.endpoint,
            metadata: { ...req.source.metadata },
            ...(req.source.errors.length
              ? { errors: req.source.errors.map(({ code, message, line, param }) => ({ code, message, line, param })) }
              : {}),
          }
        : null;
      const made = await createBatch(deps, requireCaller(req.caller), requests, kindOf(req.kind), source);
      return { batch: batchToPb(made.batch), responseIds: made.responseIds };
    },
    async getChatBatch(req) {
      return { batch: batchToPb(await getBatch(deps, requireCaller(req.caller), req.batchId)) };
    },
    async listChatBatches(req) {
      const page = await listBatches(deps, requireCaller(req.caller), {
        kind: kindOf(req.kind),
        limit: Math.min(Math.max(req.limit || 20, 1), 1000),
        afterId: req.afterId || undefined,
        beforeId: req.beforeId || undefined,
      });
      return { batches: page.batches.map(batchToPb), hasMore: page.hasMore };
    },
    async cancelChatBatch(req) {
      return { batch: batchToPb(await cancelBatch(deps, requireCaller(req.caller), req.batchId)) };
    },
    async deleteChatBatch(req) {
      return { batchId: await deleteBatch(deps, requireCaller(req.caller), req.batchId) };
    },
    async getBatchedCall(req) {
      const call = await getBatchedCall(deps, requireCaller(req.caller), req.responseId);
      return {
        batch: batchToPb(call.batch),
        started: call.started,
        ...requestedOf(call.call, call.request),
        ...(call.result.state === 'pending' ? {} : { result: resultToPb(call.result) }),
      };
    },
    async listChatBatchResults(req) {
      const page = await batchResults(deps, requireCaller(req.caller), req.batchId, req.offset, req.limit);
      return {
        results: page.results.map(resultToPb),
        nextOffset: page.nextOffset,
      };
    },
  };
}

/** Tool-call deltas joined into whole calls, each as one delta with its index, id, name and whole arguments. */
function wholeToolCalls(deltas: ToolCallDelta[]): ToolCallDelta[] {
  const calls = new Map<number, Required<ToolCallDelta>>();
  for (const d of deltas) {
    const call = calls.get(d.index) ?? { index: d.index, id: '', name: '', arguments: '' };
    if (d.id) call.id = d.id;
    if (d.name) call.name = d.name;
    if (d.arguments) call.arguments += d.arguments;
    calls.set(d.index, call);
  }
  return [...calls.values()].sort((a, b) => a.index - b.index);
}

/**
 * The batch worker's calls: a claimed request runs as the Chat call it encodes, for the batch's caller, under the
 * response id minted with the batch; its reply is kept whole, as one ChatResponse.
 */
export function batchAnswers(deps: RouterDeps, callTimeoutMs: number, pricePercent = 100): BatchAnswers {
  const errored = (err: unknown): BatchAnswer => {
    const typed = err instanceof AppError && err.kind !== 'Internal' ? err : null;
    if (!typed) deps.logger.error({ err }, 'batch request failed unexpectedly');
    const result = create(ChatBatchResultSchema, {
      outcome: ChatBatchOutcome.ERRORED,
      ...(typed
        ? { error: errorDetailOf(typed), errorMessage: typed.message }
        : { error: { reason: 'INTERNAL', kind: 'Internal' }, errorMessage: INTERNAL_MESSAGE }),
    });
    return {
      outcome: 'errored',
      result: toBinary(ChatBatchResultSchema, result),
      retryable: typed?.retryable ?? false,
    };
  };
  return {
    errored,
    async answer(claimed: ClaimedBatchRequest): Promise<BatchAnswer> {
      try {
        const percent = pricePercentOf(claimed.kind, pricePercent);
        if (claimed.call === 'embed') return await embedAnswer(deps, claimed, percent);
        const request = fromBinary(ChatRequestSchema, claimed.request);
        const call = {
          ...chatCallOf(claimed.caller, request, AbortSignal.timeout(callTimeoutMs), claimed.responseId),
          pricePercent: percent,
        };
        let text = '';
        let reasoning = '';
        const toolCalls: ToolCallDelta[] = [];
        const logprobs: TokenLogprob[] = [];
        for await (const piece of chat(deps, call)) {
          if ('delta' in piece) {
            text += piece.delta.text ?? '';
            reasoning += piece.delta.reasoning ?? '';
            toolCalls.push(...(piece.delta.toolCalls ?? []));
            logprobs.push(...(piece.delta.logprobs ?? []));
            continue;
          }
          const whole = wholeToolCalls(toolCalls);
          const reply = {
            ...chatPieceToPb(piece, claimed.responseId),
            text,
            reasoning,
            toolCallsJson: whole.length ? new TextEncoder().encode(JSON.stringify(whole)) : new Uint8Array(),
            logprobs,
          };
          const result = create(ChatBatchResultSchema, {
            outcome: ChatBatchOutcome.SUCCEEDED,
            reply,
            responseId: claimed.responseId,
            requestedModel: request.model,
            requestMetadata: request.metadata,
          });
          return { outcome: 'succeeded', result: toBinary(ChatBatchResultSchema, result), retryable: false };
        }
        throw new AppError('Unavailable', 'DEPENDENCY_UNAVAILABLE', 'The model stream ended without a final piece.');
      } catch (err) {
        return errored(err);
      }
    },
  };
}

/** An embeddings request of a batch, run as the EmbedTexts call it is, billed under the id minted with the batch. */
async function embedAnswer(deps: RouterDeps, claimed: ClaimedBatchRequest, pricePercent: number): Promise<BatchAnswer> {
  const item = fromBinary(ChatBatchItemSchema, claimed.request);
  const request = item.embed ?? create(EmbedTextsRequestSchema);
  const input = { ...embedInputOf(claimed.caller, request), inferenceId: claimed.responseId, pricePercent };
  const out = await embed(deps, input);
  const result = create(ChatBatchResultSchema, {
    outcome: ChatBatchOutcome.SUCCEEDED,
    embeddings: embedOutputToPb(out),
    responseId: claimed.responseId,
    requestedModel: request.modelId,
    requestMetadata: item.requestMetadata,
  });
  return { outcome: 'succeeded', result: toBinary(ChatBatchResultSchema, result), retryable: false };
}
