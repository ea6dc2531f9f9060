/**
 * Chat batches (Anthropic's Message Batches): a batch is stored at once and answered in the background, one Chat
 * call per request, each billed (and stored in history when it asks to be) as the call it is. The worker claims
 * due requests with a lease, so replicas share the work and a request whose worker died runs again after it; its
 * response id was minted with the batch, so a rerun is metered once. A retryable failure (a warming model, a
 * saturated upstream) is tried again with a growing delay, up to `maxAttempts`; any other failure is the request's
 * errored result. Cancelling ends the requests no worker holds; expiry (24 hours) ends those still waiting.
 */
import { AppError, Reasons, errors, isUuid } from '@whetstone/errors';
import type { Logger } from '@whetstone/telemetry';
import {
  BATCH_LIFETIME_MS,
  type BatchKind,
  type BatchSource,
  BatchReasons,
  batchStatusOf,
  type ChatBatch,
  EMPTY_COUNTS,
  failedValidation,
  MAX_BATCH_REQUESTS,
  retryDelayMs,
} from '../domain/batch';
import type { Caller } from '../domain/model';
import type {
  BatchCall,
  BatchPage,
  BatchResultRow,
  ChatBatchStore,
  ClaimedBatchRequest,
  Ids,
  NewBatchRequest,
} from './ports';

export interface BatchDeps {
  batches: ChatBatchStore;
  ids: Ids;
  now: () => Date;
}

/** A request's result, encoded by the transport; `retryable` failures may be tried again. */
export interface BatchAnswer {
  outcome: 'succeeded' | 'errored';
  result: Uint8Array;
  retryable: boolean;
}

/** Runs one claimed request as a Chat call (never throws: a failure is an errored answer). */
export interface BatchAnswers {
  answer(claimed: ClaimedBatchRequest): Promise<BatchAnswer>;
  /** The errored answer of a failure that happened outside a call. */
  errored(err: unknown): BatchAnswer;
}

export interface BatchWorkerDeps {
  batches: ChatBatchStore;
  answers: BatchAnswers;
  now: () => Date;
  logger: Logger;
  /** Requests claimed per pass, run concurrently. */
  concurrency: number;
  /** How long a claim holds a request unless its worker renews it (every third of it while the call runs). */
  leaseMs: number;
  /** Attempts per request before a retryable failure becomes its result. */
  maxAttempts: number;
}

const CUSTOM_ID = /^[\w-]{1,64}$/;

const notFound = (batchId: string): never => {
  throw errors.notFound(BatchReasons.NOT_FOUND, `Batch '${batchId.slice(0, 100)}' was not found.`);
};

const batchIdOf = (batchId: string) => {
  if (!isUuid(batchId)) notFound(batchId);
  return batchId.toLowerCase();
};

/** Stores a batch; its requests run in the background. Custom ids are checked here, the calls when they run. */
export async function createBatch(
  deps: BatchDeps,
  caller: Caller,
  requests: { customId: string; call: BatchCall; request: Uint8Array; store: boolean }[],
  kind: BatchKind = 'messages',
  source: BatchSource | null = null,
): Promise<{ batch: ChatBatch; responseIds: string[] }> {
  if (kind === 'openai_batch' && failedValidation(source)) {
    if (requests.length)
      throw errors.invalid(Reasons.VALIDATION_FAILED, 'A batch whose input file failed validation holds no requests.', [
        { field: 'requests', message: 'must be empty when source.errors lists problems' },
      ]);
  } else if (!requests.length || requests.length > MAX_BATCH_REQUESTS)
    throw errors.invalid(Reasons.VALIDATION_FAILED, `A batch holds 1 to ${MAX_BATCH_REQUESTS} requests.`, [
      { field: 'requests', message: `must hold 1 to ${MAX_BATCH_REQUESTS} requests` },
    ]);
  const seen = new Set<string>();
  for (const [i, r] of requests.entries()) {
    const field = `requests[${i}].custom_id`;
    if (!CUSTOM_ID.test(r.customId))
      throw errors.invalid(Reasons.VALIDATION_FAILED, `${field} must be 1–64 letters, digits, _ or -.`, [
        { field, message: 'must be 1–64 letters, digits, _ or -' },
      ]);
    if (seen.has(r.customId))
      throw errors.invalid(Reasons.VALIDATION_FAILED, `${field} '${r.customId}' is used twice in this batch.`, [
        { field, message: 'must be unique in the batch' },
      ]);
    seen.add(r.customId);
  }
  const createdAt = deps.now();
  const batch = {
    id: deps.ids.uuid(),
    kind,
    caller,
    createdAt,
    expiresAt: new Date(createdAt.getTime() + BATCH_LIFETIME_MS),
    source: kind === 'openai_batch' ? source : null,
  };
  const rows: NewBatchRequest[] = requests.map((r) => ({
    customId: r.customId,
    call: r.call,
    // As Chat mints them: a stored call's id is time-ordered, an unstored one's is random.
    responseId: r.store ? deps.ids.uuid() : deps.ids.ephemeral(),
    request: r.request,
  }));
  await deps.batches.create(batch, rows);
  return {
    batch: {
      id: batch.id,
      teamId: caller.teamId,
      kind,
      createdAt,
      expiresAt: batch.expiresAt,
      cancelInitiatedAt: null,
      endedAt: rows.length ? null : createdAt,
      counts: { ...EMPTY_COUNTS, processing: rows.length },
      source: batch.source,
    },
    responseIds: rows.map((r) => r.responseId),
  };
}

/** The request a response id was minted for (a background Response): its batch, whether it started, its result. */
export async function getBatchedCall(deps: BatchDeps, caller: Caller, responseId: string) {
  const found = isUuid(responseId) ? await deps.batches.findCall(caller.teamId, responseId.toLowerCase()) : null;
  if (!found)
    throw errors.notFound(BatchReasons.CALL_NOT_FOUND, `No batched call has the id '${responseId.slice(0, 100)}'.`);
  const { batch, attempts, call, request, result } = found;
  return { batch, started: attempts > 0, call, request, result };
}

export async function getBatch(deps: BatchDeps, caller: Caller, batchId: string): Promise<ChatBatch> {
  return (await deps.batches.get(caller.teamId, batchIdOf(batchId))) ?? notFound(batchId);
}

export async function listBatches(
  deps: BatchDeps,
  caller: Caller,
  page: BatchPage,
): Promise<{ batches: ChatBatch[]; hasMore: boolean }> {
  if (page.afterId && page.beforeId)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'Give after_id or before_id, not both.', [
      { field: 'before_id', message: 'cannot be given with after_id' },
    ]);
  for (const [field, id] of [
    ['after_id', page.afterId],
    ['before_id', page.beforeId],
  ] as const)
    if (id !== undefined && !isUuid(id))
      throw errors.invalid(Reasons.VALIDATION_FAILED, `${field} names no message batch of this team.`, [
        { field, message: 'names no message batch of this team' },
      ]);
  const found = await deps.batches.list(caller.teamId, page);
  if (!found)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'The cursor names no message batch of this team.', [
      { field: page.afterId ? 'after_id' : 'before_id', message: 'names no message batch of this team' },
    ]);
  return found;
}

export async function cancelBatch(deps: BatchDeps, caller: Caller, batchId: string): Promise<ChatBatch> {
  return (await deps.batches.cancel(caller.teamId, batchIdOf(batchId), deps.now())) ?? notFound(batchId);
}

export async function deleteBatch(deps: BatchDeps, caller: Caller, batchId: string): Promise<string> {
  const batch = await getBatch(deps, caller, batchId);
  if (batchStatusOf(batch) !== 'ended')
    throw errors.precondition(
      BatchReasons.NOT_ENDED,
      `Batch '${batch.id}' is still ${batchStatusOf(batch).replace('_', ' ')}: cancel it and wait for it to end before deleting it.`,
    );
  if (!(await deps.batches.delete(caller.teamId, batch.id))) notFound(batchId);
  return batch.id;
}

/** One page of an ended batch's results, in request order. */
export async function batchResults(
  deps: BatchDeps,
  caller: Caller,
  batchId: string,
  offset: number,
  limit: number,
): Promise<{ results: BatchResultRow[]; nextOffset: number }> {
  const batch = await getBatch(deps, caller, batchId);
  if (batchStatusOf(batch) !== 'ended')
    throw errors.precondition(
      BatchReasons.NOT_ENDED,
      `Batch '${batch.id}' has not ended: its results can be read once it has.`,
    );
  const size = Math.min(Math.max(limit || 100, 1), 1000);
  const results = await deps.batches.results(caller.teamId, batch.id, Math.max(offset, 0), size);
  return { results, nextOffset: results.length === size ? Math.max(offset, 0) + size : 0 };
}

/**
 * The batch worker's slots: each pass ends what no longer may run, then claims as many due requests as there are
 * free slots and starts them without waiting for them, so a slow call holds its own slot only. With every slot busy
 * a pass waits for one to free; with nothing due while calls run, it waits for one to end (or `idleMs`, so new work
 * still fills free slots). `drain` waits for the calls under way (a stopping worker leaves none half done).
 */
export function batchSlots(deps: BatchWorkerDeps, idleMs: number) {
  const running = new Set<Promise<void>>();
  const start = (claimed: ClaimedBatchRequest) => {
    const call: Promise<void> = runOne(deps, claimed)
      .catch((err: unknown) => deps.logger.error({ err, batchId: claimed.batchId }, 'batch request failed'))
      .finally(() => running.delete(call));
    running.add(call);
  };
  const sleep = () => new Promise<void>((resolve) => setTimeout(resolve, idleMs).unref());
  return {
    /** One pass; resolves with how much it did (0: nothing due and nothing running, the worker may idle). */
    async pass(): Promise<number> {
      if (running.size >= deps.concurrency) await Promise.race(running);
      const swept = await deps.batches.sweep(deps.now());
      const claimed = await deps.batches.claim(deps.concurrency - running.size, deps.leaseMs);
      claimed.forEach(start);
      if (claimed.length || swept) return claimed.length + swept;
      if (!running.size) return 0;
      await Promise.race([...running, sleep()]);
      return 1;
    },
    drain: () => Promise.all(running).then(() => undefined),
  };
}

/**
 * Renews a claimed request's lease every third of it while its call runs, so a live worker keeps the request however
 * long the call takes, and one that died loses it within a lease. Returns the stop.
 */
function holdLease(deps: BatchWorkerDeps, claimed: ClaimedBatchRequest): () => void {
  const { batchId, position, attempts } = claimed;
  const timer = setInterval(() => {
    deps.batches.renewLease(batchId, position, attempts, deps.leaseMs).then(
      (held) => {
        if (!held) clearInterval(timer);
      },
      (err: unknown) => deps.logger.warn({ err, batchId, position }, 'batch lease renewal failed; will retry'),
    );
  }, deps.leaseMs / 3);
  timer.unref();
  return () => clearInterval(timer);
}

async function runOne(deps: BatchWorkerDeps, claimed: ClaimedBatchRequest): Promise<void> {
  const release = holdLease(deps, claimed);
  try {
    await answerOne(deps, claimed);
  } finally {
    release();
  }
}

async function answerOne(deps: BatchWorkerDeps, claimed: ClaimedBatchRequest): Promise<void> {
  const { batchId, position } = claimed;
  // A claim past the last attempt means workers died during the attempts before it: their leases ran out.
  const answer =
    claimed.attempts > deps.maxAttempts + 1
      ? deps.answers.errored(
          new AppError('Unavailable', BatchReasons.ABANDONED, 'The request did not finish in time.', {
            retryable: false,
          }),
        )
      : await deps.answers.answer(claimed);
  if (answer.outcome === 'errored' && answer.retryable && claimed.attempts < deps.maxAttempts) {
    await deps.batches.retryLater(batchId, position, new Date(deps.now().getTime() + retryDelayMs(claimed.attempts)));
    return;
  }
  if (!(await deps.batches.finish(batchId, position, answer.outcome, answer.result, deps.now())))
    deps.logger.warn({ batchId, position }, 'batch request answered after it had ended; its result was dropped');
}
