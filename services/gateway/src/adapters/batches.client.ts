import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import {
  type ChatBatch,
  ChatBatchKind,
  ChatBatchOutcome,
  type ChatBatchResult,
  type ChatBatchService,
  ChatBatchStatus,
} from '@whetstone/proto/inference/v1';
import { AppError } from '@whetstone/errors';
import { appErrorOfDetail } from '@whetstone/rpc';
import type { ChatBatches, ChatBatchResultView, ChatBatchView } from '../application/ports';
import { chatPieceOf, chatRequestToPb } from './chat.mapper';
import { embeddingsView } from './inference.client';
import { callerOf } from './caller';

const dateOf = (ts: Timestamp | undefined) => (ts ? timestampDate(ts) : null);

const STATUS: Record<ChatBatchStatus, ChatBatchView['status']> = {
  [ChatBatchStatus.UNSPECIFIED]: 'in_progress',
  [ChatBatchStatus.IN_PROGRESS]: 'in_progress',
  [ChatBatchStatus.CANCELING]: 'canceling',
  [ChatBatchStatus.ENDED]: 'ended',
};

const KIND_OF: Record<ChatBatchKind, ChatBatchView['kind']> = {
  [ChatBatchKind.UNSPECIFIED]: 'messages',
  [ChatBatchKind.MESSAGE_BATCH]: 'messages',
  [ChatBatchKind.BACKGROUND_RESPONSE]: 'background_response',
  [ChatBatchKind.OPENAI_BATCH]: 'openai_batch',
};
const KIND: Record<ChatBatchView['kind'], ChatBatchKind> = {
  messages: ChatBatchKind.MESSAGE_BATCH,
  background_response: ChatBatchKind.BACKGROUND_RESPONSE,
  openai_batch: ChatBatchKind.OPENAI_BATCH,
};

function batchView(batch: ChatBatch | undefined): ChatBatchView {
  const c = batch?.counts;
  return {
    id: batch?.id ?? '',
    kind: KIND_OF[batch?.kind ?? ChatBatchKind.UNSPECIFIED],
    status: STATUS[batch?.status ?? ChatBatchStatus.UNSPECIFIED],
    counts: {
      processing: c?.processing ?? 0,
      succeeded: c?.succeeded ?? 0,
      errored: c?.errored ?? 0,
      canceled: c?.canceled ?? 0,
      expired: c?.expired ?? 0,
    },
    createdAt: dateOf(batch?.createdAt) ?? new Date(0),
    expiresAt: dateOf(batch?.expiresAt) ?? new Date(0),
    endedAt: dateOf(batch?.endedAt),
    cancelInitiatedAt: dateOf(batch?.cancelInitiatedAt),
    source: batch?.source
      ? {
          inputFileId: batch.source.inputFileId,
          endpoint: batch.source.endpoint,
          metadata: { ...batch.source.metadata },
          ...(batch.source.errors.length
            ? { errors: batch.source.errors.map(({ code, message, line, param }) => ({ code, message, line, param })) }
            : {}),
        }
      : null,
  };
}

function resultView(r: ChatBatchResult): ChatBatchResultView {
  const customId = r.customId;
  const succeeded = {
    customId,
    outcome: 'succeeded' as const,
    requestedModel: r.requestedModel,
    requestMetadata: { ...r.requestMetadata },
  };
  if (r.outcome === ChatBatchOutcome.SUCCEEDED && r.embeddings)
    return { ...succeeded, embeddings: embeddingsView(r.embeddings), responseId: r.responseId };
  if (r.outcome === ChatBatchOutcome.SUCCEEDED && r.reply) return { ...succeeded, reply: chatPieceOf(r.reply) };
  if (r.outcome === ChatBatchOutcome.ERRORED && r.error)
    return { customId, outcome: 'errored', error: appErrorOfDetail(r.error, r.errorMessage) };
  return { customId, outcome: r.outcome === ChatBatchOutcome.EXPIRED ? 'expired' : 'canceled' };
}

/**
 * How long creating a batch may take: past the router's 2 minutes for storing one (and its wait for a
 * connection), so a call that runs out here was not stored, and a retry makes no second batch.
 */
const CREATE_DEADLINE_MS = 180_000;

/** The router's ChatBatchService over gRPC, in the gateway's plain shapes. */
export function chatBatchesOverRpc(client: Client<typeof ChatBatchService>): ChatBatches {
  return {
    async create(principal, requests, kind = 'messages', source) {
      const res = await client.createChatBatch(
        {
          caller: callerOf(principal),
          requests: requests.map((r) =>
            'embed' in r
              ? {
                  customId: r.customId,
                  embed: { caller: callerOf(principal), ...r.embed },
                  requestMetadata: r.metadata,
                }
              : { customId: r.customId, chat: chatRequestToPb(principal, r.input) },
          ),
          kind: KIND[kind],
          ...(source ? { source } : {}),
        },
        { timeoutMs: CREATE_DEADLINE_MS },
      );
      return { batch: batchView(res.batch), responseIds: res.responseIds };
    },
    async findCall(principal, responseId) {
      try {
        const res = await client.getBatchedCall({ caller: callerOf(principal), responseId });
        return {
          batch: batchView(res.batch),
          started: res.started,
          result: res.result ? resultView(res.result) : null,
          model: res.requestedModel,
          metadata: { ...res.requestMetadata },
        };
      } catch (err) {
        if (err instanceof AppError && err.kind === 'NotFound') return null;
        throw err;
      }
    },
    async get(principal, batchId) {
      return batchView((await client.getChatBatch({ caller: callerOf(principal), batchId })).batch);
    },
    async list(principal, page) {
      const res = await client.listChatBatches({
        caller: callerOf(principal),
        limit: page.limit,
        afterId: page.afterId ?? '',
        beforeId: page.beforeId ?? '',
        kind: KIND[page.kind ?? 'messages'],
      });
      return { batches: res.batches.map(batchView), hasMore: res.hasMore };
    },
    async cancel(principal, batchId) {
      return batchView((await client.cancelChatBatch({ caller: callerOf(principal), batchId })).batch);
    },
    async delete(principal, batchId) {
      return (await client.deleteChatBatch({ caller: callerOf(principal), batchId })).batchId;
    },
    async results(principal, batchId, offset) {
      const res = await client.listChatBatchResults({ caller: callerOf(principal), batchId, offset, limit: 500 });
      return { results: res.results.map(resultView), nextOffset: res.nextOffset };
    },
  };
}
