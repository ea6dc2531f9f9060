import type { Response } from 'express';
import type { z } from 'zod';
import { AppError, isUuid, toHttpError, type FieldError } from '@whetstone/errors';
import type {
  BatchCall,
  BatchInputError,
  BatchRequestInput,
  ChatBatches,
  ChatBatchResultView,
  ChatBatchView,
  Principal,
} from '../../../../application/ports';
import { ToolCallAssembler } from './chat-run';
import { completionOfReply } from './chat-completions.routes';
import { ChatCompletionsBody, chatInputOf } from './chat-completions.schema';
import { CompletionsBody, completionsInputOf, textCompletionOfReply } from './completions.routes';
import { responseOfReply } from './responses.routes';
import { ResponsesBody, responsesInputOf } from './responses.schema';
import { EmbeddingsBody, embeddingsObject, textsOf } from './embeddings.routes';
import { fileObject } from './files.routes';

/**
 * OpenAI's Batch API over an uploaded input file: each JSON line `{custom_id, method: "POST", url, body}` is a
 * chat completions, Responses, completions or embeddings request, checked when the batch is made and then run by the
 * router's batch worker (the one that runs Anthropic's Message Batches), each billed and (when it asks to be stored)
 * recorded as the call it is. Once the batch has ended, its output file (answered requests) and error file (failed,
 * expired and cancelled ones) are rendered from its results as JSON Lines.
 */

export const BATCH_ID_PREFIX = 'batch_';
const OUTPUT_PREFIX = 'file-batch_output-';
const ERRORS_PREFIX = 'file-batch_errors-';
/** Requests per batch, as OpenAI allows (the router's limit). */
export const MAX_BATCH_LINES = 50_000;
/**
 * Texts an embeddings batch may hold across its lines, as OpenAI allows: it bounds what the batch stores (228
 * float32 values a text) and what one page of its results carries over gRPC.
 */
export const MAX_BATCH_EMBEDDING_INPUTS = 50_000;
/** Input file problems a failed batch lists (the first ones, by line). */
const MAX_LISTED_ERRORS = 100;

export const ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/completions', '/v1/embeddings'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

export const batchNotFound = (id: string) =>
  new AppError('NotFound', 'BATCH_NOT_FOUND', `Batch '${id.slice(0, 100)}' was not found.`);

/** An OpenAI batch of the team by its public `batch_…` id. */
export async function openAiBatch(batches: ChatBatches, principal: Principal, publicId: string) {
  const id = publicId.startsWith(BATCH_ID_PREFIX) ? publicId.slice(BATCH_ID_PREFIX.length) : '';
  if (!isUuid(id)) throw batchNotFound(publicId);
  const batch = await batches.get(principal, id);
  if (batch.kind !== 'openai_batch') throw batchNotFound(publicId);
  return batch;
}

const unix = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/** OpenAI's status of a batch: failed when its input file did not validate, cancelled or expired when it ended so, else completed. */
function statusOf(batch: ChatBatchView): string {
  if (batch.source?.errors?.length) return 'failed';
  if (batch.status === 'in_progress') return 'in_progress';
  if (batch.status === 'canceling') return 'cancelling';
  if (batch.cancelInitiatedAt) return 'cancelled';
  return batch.counts.expired > 0 ? 'expired' : 'completed';
}

const failedCount = (b: ChatBatchView) => b.counts.errored + b.counts.expired + b.counts.canceled;

/** OpenAI's Batch object. */
export function batchObject(batch: ChatBatchView) {
  const status = statusOf(batch);
  const ended = batch.status === 'ended';
  const c = batch.counts;
  const total = c.processing + c.succeeded + failedCount(batch);
  return {
    id: `${BATCH_ID_PREFIX}${batch.id}`,
    object: 'batch',
    endpoint: batch.source?.endpoint ?? '',
    errors: status === 'failed' ? { object: 'list', data: (batch.source?.errors ?? []).map(errorObject) } : null,
    input_file_id: `file-${batch.source?.inputFileId ?? ''}`,
    completion_window: '24h',
    status,
    output_file_id: ended && c.succeeded > 0 ? `${OUTPUT_PREFIX}${batch.id}` : null,
    error_file_id: ended && failedCount(batch) > 0 ? `${ERRORS_PREFIX}${batch.id}` : null,
    created_at: unix(batch.createdAt),
    in_progress_at: status === 'failed' ? null : unix(batch.createdAt),
    expires_at: unix(batch.expiresAt),
    finalizing_at: ended && status !== 'failed' ? unix(batch.endedAt) : null,
    completed_at: status === 'completed' ? unix(batch.endedAt) : null,
    failed_at: status === 'failed' ? unix(batch.endedAt) : null,
    expired_at: status === 'expired' ? unix(batch.endedAt) : null,
    cancelling_at: unix(batch.cancelInitiatedAt),
    cancelled_at: status === 'cancelled' ? unix(batch.endedAt) : null,
    request_counts: { total, completed: c.succeeded, failed: failedCount(batch) },
    metadata: batch.source?.metadata ?? {},
  };
}

/** An input file problem as OpenAI's batch error (`line` and `param` null when none applies). */
const errorObject = (e: BatchInputError) => ({
  code: e.code,
  message: e.message,
  param: e.param || null,
  line: e.line || null,
});

/** A line's problem before it is placed: its code, and the field of the line at fault ('' for the whole line). */
type LineProblem = { code: string; param: string; message: string };

const problem = (code: string, param: string, message: string): LineProblem => ({ code, param, message });

/** A line's body problems (the endpoint's own field errors) as `invalid_request`s whose message names the field. */
const bodyProblems = (issues: FieldError[]): LineProblem[] =>
  issues.map((f) => problem('invalid_request', f.field, `${f.field}: ${f.message}`));

const zodErrors = (error: z.ZodError, at: string): FieldError[] =>
  error.issues.map((i) => ({ field: [at, ...i.path.map(String)].join('.'), message: i.message }));

/** An embeddings line's body: its texts, checked as the endpoint checks them, and its encoding kept for the output. */
function embedOfBody(body: unknown): Extract<BatchCall, { embed: unknown }> | FieldError[] {
  const parsed = EmbeddingsBody.safeParse(body);
  if (!parsed.success) return zodErrors(parsed.error, 'body');
  const { model, input, dimensions, encoding_format: encoding } = parsed.data;
  const embed = { modelId: model, texts: textsOf(input), dimensions: dimensions ?? 0 };
  return { embed, metadata: { encoding_format: encoding ?? 'float' } };
}

/** One line's body as the chat core's input (or an embeddings call), by the endpoint's own schema and conversion. */
function inputOfBody(endpoint: Endpoint, body: unknown): BatchCall | FieldError[] {
  try {
    if (endpoint === '/v1/embeddings') return embedOfBody(body);
    if (endpoint === '/v1/completions') {
      const parsed = CompletionsBody.safeParse(body);
      if (!parsed.success) return zodErrors(parsed.error, 'body');
      if (parsed.data.stream) return [{ field: 'body.stream', message: 'a batch request cannot stream' }];
      if ((parsed.data.n ?? 1) > 1) return [{ field: 'body.n', message: 'must be 1 in a batch request' }];
      return { input: completionsInputOf(parsed.data) };
    }
    if (endpoint === '/v1/chat/completions') {
      const parsed = ChatCompletionsBody.safeParse(body);
      if (!parsed.success) return zodErrors(parsed.error, 'body');
      if (parsed.data.stream) return [{ field: 'body.stream', message: 'a batch request cannot stream' }];
      if ((parsed.data.n ?? 1) > 1) return [{ field: 'body.n', message: 'must be 1 in a batch request' }];
      return { input: chatInputOf(parsed.data) };
    }
    const parsed = ResponsesBody.safeParse(body);
    if (!parsed.success) return zodErrors(parsed.error, 'body');
    const unsupported = (['stream', 'background', 'previous_response_id'] as const).find((k) => parsed.data[k]);
    if (unsupported)
      return [{ field: `body.${unsupported}`, message: 'is not supported in a batch request; leave it out' }];
    return { input: responsesInputOf(parsed.data) };
  } catch (err) {
    if (err instanceof AppError && err.fieldErrors.length)
      return err.fieldErrors.map((f) => ({ field: `body.${f.field}`, message: f.message }));
    throw err;
  }
}

const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 32);

/** One JSON line of the input file: its custom id and input, or what is wrong with it. */
function parseLine(text: string, endpoint: Endpoint): BatchRequestInput | LineProblem[] {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    return [problem('invalid_json_line', '', 'This line is not valid JSON.')];
  }
  if (line === null || typeof line !== 'object' || Array.isArray(line))
    return [problem('invalid_json_line', '', 'This line must be a JSON object {custom_id, method, url, body}.')];
  const { custom_id: customId, method, url, body } = line as Record<string, unknown>;
  if (typeof customId !== 'string' || customId.length < 1 || customId.length > 512 || hasControl(customId))
    return [problem('invalid_custom_id', 'custom_id', 'custom_id must be a string of 1–512 characters.')];
  if (method !== 'POST') return [problem('invalid_method', 'method', 'method must be POST.')];
  if (url !== endpoint)
    return [problem('mismatched_endpoint', 'url', `url must be the batch's endpoint, ${endpoint}.`)];
  const request = inputOfBody(endpoint, body);
  return Array.isArray(request) ? bodyProblems(request) : { customId, ...request };
}

/** The whole file's problems once its lines are fine: how many requests, and embedding texts, it holds. */
function fileProblems(requests: BatchRequestInput[]): BatchInputError[] {
  const whole = (code: string, message: string): BatchInputError[] => [{ code, message, line: 0, param: '' }];
  if (!requests.length) return whole('empty_file', 'The input file holds no request lines.');
  if (requests.length > MAX_BATCH_LINES)
    return whole(
      'too_many_requests',
      `The input file holds ${requests.length} request lines; a batch takes at most ${MAX_BATCH_LINES}.`,
    );
  const texts = requests.reduce((n, r) => n + ('embed' in r ? r.embed.texts.length : 0), 0);
  if (texts > MAX_BATCH_EMBEDDING_INPUTS)
    return whole(
      'too_many_inputs',
      `The input file holds ${texts} embedding inputs; a batch takes at most ${MAX_BATCH_EMBEDDING_INPUTS} across its lines.`,
    );
  return [];
}

/** Lines checked between two yields to the event loop, so a large file does not hold up the gateway's other calls. */
const LINES_PER_TURN = 250;

/**
 * The requests of an input file, every line checked, with custom ids unique in the file; or, when anything is
 * wrong, no requests and the first problems by line (the batch is then made as `failed`, as OpenAI's are).
 */
export async function requestsOfFile(
  content: Uint8Array,
  endpoint: Endpoint,
): Promise<{ requests: BatchRequestInput[]; errors: BatchInputError[] }> {
  const lines = Buffer.from(content).toString('utf8').split(/\r?\n/);
  const requests: BatchRequestInput[] = [];
  const errors: BatchInputError[] = [];
  const seen = new Set<string>();
  for (const [i, text] of lines.entries()) {
    if (i % LINES_PER_TURN === LINES_PER_TURN - 1) await new Promise((resolve) => setImmediate(resolve));
    if (!text.trim()) continue;
    const parsed = parseLine(text, endpoint);
    const place = (p: LineProblem) => ({ ...p, line: i + 1 });
    if (Array.isArray(parsed)) errors.push(...parsed.map(place));
    else if (seen.has(parsed.customId))
      errors.push(
        place(
          problem('duplicate_custom_id', 'custom_id', `custom_id '${parsed.customId}' is used by an earlier line.`),
        ),
      );
    else {
      seen.add(parsed.customId);
      requests.push(parsed);
    }
  }
  if (!errors.length) errors.push(...fileProblems(requests));
  return errors.length ? { requests: [], errors: errors.slice(0, MAX_LISTED_ERRORS) } : { requests, errors: [] };
}

/** One line of the output or error file, as OpenAI's batch request output. */
function outputLine(r: ChatBatchResultView, batch: ChatBatchView): object {
  const endpoint = batch.source?.endpoint;
  if (r.outcome === 'succeeded' && 'embeddings' in r) {
    const body = embeddingsObject(r.embeddings, r.requestMetadata.encoding_format === 'base64');
    const id = r.responseId;
    return {
      id: `batch_req_${id}`,
      custom_id: r.customId,
      response: { status_code: 200, request_id: id, body },
      error: null,
    };
  }
  if (r.outcome === 'succeeded') {
    const tools = new ToolCallAssembler();
    tools.add(r.reply.toolCalls);
    const reply = { ...r.reply, toolCalls: tools.all(), done: r.reply.done! };
    const created = unix(batch.createdAt)!;
    const reasoning = reply.reasoning !== '';
    const body =
      endpoint === '/v1/responses'
        ? responseOfReply(reply, { created, metadata: r.requestMetadata }, r.requestedModel, reasoning)
        : endpoint === '/v1/completions'
          ? // The prompt is not kept with the result: a batch's text_offset counts from the completion's start.
            textCompletionOfReply(reply, created, r.requestedModel, {
              logprobs: reply.logprobs.length > 0,
              promptLengths: [0],
            })
          : completionOfReply(reply, created, r.requestedModel, { reasoning, logprobs: reply.logprobs.length > 0 });
    const id = r.reply.responseId;
    return {
      id: `batch_req_${id}`,
      custom_id: r.customId,
      response: { status_code: 200, request_id: id, body },
      error: null,
    };
  }
  if (r.outcome === 'errored') {
    const { status, body } = toHttpError(r.error, 'openai');
    return { id: null, custom_id: r.customId, response: { status_code: status, request_id: null, body }, error: null };
  }
  const error =
    r.outcome === 'expired'
      ? { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' }
      : { code: 'batch_cancelled', message: 'This request was not executed because the batch was cancelled.' };
  return { id: null, custom_id: r.customId, response: null, error };
}

/** The batch whose output or error file a public file id names; null when it names none. */
async function derived(batches: ChatBatches, principal: Principal, fileId: string) {
  const kind: 'output' | 'errors' | null = fileId.startsWith(OUTPUT_PREFIX)
    ? 'output'
    : fileId.startsWith(ERRORS_PREFIX)
      ? 'errors'
      : null;
  if (!kind) return null;
  const id = fileId.slice((kind === 'output' ? OUTPUT_PREFIX : ERRORS_PREFIX).length);
  if (!isUuid(id)) return null;
  try {
    const batch = await batches.get(principal, id);
    const object = batchObject(batch);
    const listed = kind === 'output' ? object.output_file_id : object.error_file_id;
    return batch.kind === 'openai_batch' && listed === fileId ? { batch, kind } : null;
  } catch (err) {
    if (err instanceof AppError && err.kind === 'NotFound') return null;
    throw err;
  }
}

/** Each line of a derived file, in request order. */
async function* linesOf(batches: ChatBatches, principal: Principal, batch: ChatBatchView, kind: 'output' | 'errors') {
  let offset = 0;
  do {
    const page = await batches.results(principal, batch.id, offset);
    for (const r of page.results)
      if ((r.outcome === 'succeeded') === (kind === 'output')) yield `${JSON.stringify(outputLine(r, batch))}\n`;
    offset = page.nextOffset;
  } while (offset);
}

/** The File object of a batch's output or error file; null when the id names neither. */
export async function batchFile(batches: ChatBatches, principal: Principal, fileId: string) {
  const found = await derived(batches, principal, fileId);
  if (!found) return null;
  let bytes = 0;
  for await (const line of linesOf(batches, principal, found.batch, found.kind)) bytes += Buffer.byteLength(line);
  return fileObject({
    id: fileId,
    filename: `batch_${found.batch.id}_${found.kind === 'output' ? 'output' : 'error'}.jsonl`,
    purpose: 'batch_output',
    bytes,
    createdAt: found.batch.endedAt ?? found.batch.createdAt,
    expiresAt: null,
  });
}

/** Writes a batch's output or error file as JSON Lines; false when the id names neither. */
export async function renderBatchFile(batches: ChatBatches, principal: Principal, fileId: string, res: Response) {
  const found = await derived(batches, principal, fileId);
  if (!found) return false;
  res.status(200).type('application/jsonl; charset=utf-8');
  for await (const line of linesOf(batches, principal, found.batch, found.kind)) {
    if (res.destroyed) break;
    res.write(line);
  }
  res.end();
  return true;
}
