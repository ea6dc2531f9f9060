/**
 * A batch of Chat calls (Anthropic's Message Batches): stored at once, answered one request at a time by the batch
 * worker, read back once every request has a result. Its status is read off its requests' states.
 */

/** Where one request is: pending until it has a result. */
export type BatchRequestState = 'pending' | 'succeeded' | 'errored' | 'canceled' | 'expired';
export type BatchStatus = 'in_progress' | 'canceling' | 'ended';
/**
 * An Anthropic message batch, an OpenAI background Response (a batch of one, never listed with the others), or an
 * OpenAI Batch over an uploaded input file.
 */
export type BatchKind = 'messages' | 'background_response' | 'openai_batch';

/**
 * What a request of a batch of this kind costs, as a percent of the same call made directly: a background Response
 * is one call answered later, priced as made directly; the others at the batch price.
 */
export const pricePercentOf = (kind: BatchKind, batchPricePercent: number): number =>
  kind === 'background_response' ? 100 : batchPricePercent;

/** What an OpenAI batch was made from, kept with it and returned as given. */
export interface BatchSource {
  /** UUID of the uploaded input file. */
  inputFileId: string;
  /** The public endpoint every request names (`/v1/chat/completions`, `/v1/responses` or `/v1/completions`). */
  endpoint: string;
  /** The batch's own OpenAI metadata. */
  metadata: Record<string, string>;
  /** What was wrong with the input file: a batch with errors holds no requests and has failed. */
  errors?: BatchInputError[];
}

/** A problem of an OpenAI batch's input file (`line` 0 and `param` '' when none applies). */
export interface BatchInputError {
  code: string;
  message: string;
  line: number;
  param: string;
}

/** Whether a batch was refused for its input file: it holds no requests and answers `failed`. */
export const failedValidation = (source: BatchSource | null): boolean => (source?.errors?.length ?? 0) > 0;

export interface BatchCounts {
  /** Requests still pending. */
  processing: number;
  succeeded: number;
  errored: number;
  canceled: number;
  expired: number;
}

export interface ChatBatch {
  id: string;
  teamId: string;
  kind: BatchKind;
  createdAt: Date;
  expiresAt: Date;
  cancelInitiatedAt: Date | null;
  /** When the last request got its result; null while any is pending. */
  endedAt: Date | null;
  counts: BatchCounts;
  /** What an OpenAI batch was made from; null for other kinds. */
  source: BatchSource | null;
}

/**
 * Requests per batch: OpenAI's Batch API allows 50,000 lines (Anthropic's Message Batches 100,000; the gateway takes
 * 10,000 there, a message batch coming as one JSON body).
 */
export const MAX_BATCH_REQUESTS = 50_000;
/** How long a batch may take: requests not run by then end as expired (Anthropic: 24 hours). */
export const BATCH_LIFETIME_MS = 24 * 60 * 60 * 1000;

export const EMPTY_COUNTS: BatchCounts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };

export function batchStatusOf(batch: Pick<ChatBatch, 'counts' | 'cancelInitiatedAt'>): BatchStatus {
  if (batch.counts.processing === 0) return 'ended';
  return batch.cancelInitiatedAt ? 'canceling' : 'in_progress';
}

/** Milliseconds before a retryable failure is tried again: 2, 4, 8 … seconds, up to a minute. */
export const retryDelayMs = (attempts: number): number => Math.min(60_000, 1000 * 2 ** Math.max(1, attempts));

/** The batch errors' reasons (public codes in lower case). */
export const BatchReasons = {
  NOT_FOUND: 'BATCH_NOT_FOUND',
  /** Results and deletion wait for the batch to end. */
  NOT_ENDED: 'BATCH_NOT_ENDED',
  /** No batched request was minted that response id (for the caller's team). */
  CALL_NOT_FOUND: 'BATCHED_CALL_NOT_FOUND',
  /** Workers died during every attempt of the request (their leases ran out). */
  ABANDONED: 'BATCH_REQUEST_ABANDONED',
} as const;
