import { z } from 'zod';
import { AppError, isUuid } from '@whetstone/errors';
import { SURFACES, type HistoryPort, type InferenceFilter } from '../../../application/history-ports';
import type { Api } from '../api';
import { authOf } from '../auth';
import { INT32_MAX, parseParams } from '../validate';
import { metadataOfQuery } from './compat/blocks';

/** A number in a query string; anything that is not one is a malformed parameter (400). */
const num = z
  .string()
  .trim()
  .regex(/^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/, 'must be a number')
  .transform(Number)
  .optional();
/** An integer that fits the int32 it travels as; the history service applies the real bounds. */
const int = z
  .string()
  .trim()
  .regex(/^-?\d+$/, 'must be an integer')
  .transform(Number)
  .refine((n) => Math.abs(n) <= INT32_MAX, 'is out of range')
  .optional();
/** ISO 8601: a date, or a date-time with Z or an offset (UTC is meant when none is given). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;
const instant = z
  .string()
  .trim()
  .regex(ISO_8601, 'must be an ISO 8601 date-time, e.g. 2026-11-25T12:00:00Z')
  .transform((s) => new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(s) || s.length === 10 ? s : `${s}Z`))
  .refine((d) => !Number.isNaN(d.getTime()), 'is not a valid date-time')
  .optional();
const text = z.string().trim().max(200).optional();

const ListQuery = z.object({
  limit: int,
  offset: int,
  model_id: text,
  task: text,
  project_id: text,
  training_job_id: text,
  latency_min: num,
  latency_max: num,
  llmaj_score_min: num,
  llmaj_score_max: num,
  since: instant,
  until: instant,
  surface: z.enum(SURFACES).optional(),
});
/** The list's query: the filters above, and `metadata[key]=value` pairs, which `ListQuery` lets through. */
const listQueryOf = (query: unknown) => ({
  ...parseParams(ListQuery, query, 'query'),
  metadata: metadataOfQuery((query ?? {}) as Record<string, unknown>),
});

const FeedbackBody = z
  .object({
    verdict: z.enum(['correct', 'incorrect'], { error: "must be 'correct' or 'incorrect'" }),
    corrected_output: z
      .union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.null()], {
        error: 'must be an object or a list in the shape of the original output (null or left out when correct)',
      })
      .optional(),
    notes: z.string().max(5000, 'must be at most 5000 characters').optional(),
  })
  .openapi('InferenceFeedbackRequest');

/** The list's default page: records carry their inputs and outputs, so pages are kept modest. */
export const DEFAULT_PAGE = 50;

const inferenceId = (value: unknown): string => {
  if (typeof value !== 'string' || !isUuid(value))
    throw new AppError('NotFound', 'INFERENCE_NOT_FOUND', `Inference '${String(value)}' was not found.`);
  return value.toLowerCase();
};

function filterOf(query: unknown): InferenceFilter {
  const q = listQueryOf(query);
  return {
    limit: q.limit ?? DEFAULT_PAGE,
    offset: q.offset ?? 0,
    modelId: q.model_id || undefined,
    task: q.task || undefined,
    projectId: q.project_id || undefined,
    trainingJobId: q.training_job_id || undefined,
    latencyMin: q.latency_min,
    latencyMax: q.latency_max,
    llmajScoreMin: q.llmaj_score_min,
    llmajScoreMax: q.llmaj_score_max,
    since: q.since,
    until: q.until,
    surface: q.surface,
    metadata: q.metadata,
  };
}

/** Inference history and feedback, as the spec's "Inference history and feedback" table. */
export function registerHistoryRoutes(api: Api, history: HistoryPort): void {
  api.route(
    {
      method: 'get',
      path: '/inferences',
      summary:
        'List stored inferences, newest first: {object: "list", data, total, total_capped, limit, offset, has_more}. Filters: model_id, task, project_id, training_job_id, surface, metadata[key]=value (every pair given must match), latency_min/max, llmaj_score_min/max, since (inclusive), until (exclusive); limit 1–200 (default 50)',
      tag: 'Inference history',
      auth: 'key-or-session',
    },
    async ({ req, res }) => {
      const filter = filterOf(req.query);
      const page = await history.list(authOf(res).principal, filter);
      return {
        object: 'list',
        data: page.records,
        total: page.total,
        total_capped: page.totalCapped,
        limit: filter.limit,
        offset: filter.offset,
        has_more: page.totalCapped || filter.offset + page.records.length < page.total,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/inferences/:id',
      summary: 'The full record of one inference (read-your-writes: an inference_id just returned is readable at once)',
      tag: 'Inference history',
      auth: 'key-or-session',
    },
    ({ req, res }) => history.get(authOf(res).principal, inferenceId(req.params.id)),
  );

  api.route(
    {
      method: 'delete',
      path: '/inferences/:id',
      summary: `Delete one stored inference for good (content, feedback, judge score; the ledger keeps its usage): {inference_id, deleted: true}`,
      tag: 'Inference history',
      auth: 'key-or-session',
    },
    async ({ req, res }) => ({
      inference_id: await history.delete(authOf(res).principal, inferenceId(req.params.id)),
      deleted: true,
    }),
  );

  registerFeedbackRoutes(api, history);
}

/** A verdict on one inference, and reading it back. */
function registerFeedbackRoutes(api: Api, history: HistoryPort): void {
  api.route(
    {
      method: 'post',
      path: '/inferences/:id/feedback',
      summary:
        'Give a verdict: correct, or incorrect with corrected_output in the shape of the original output; notes ≤ 5000 characters',
      tag: 'Inference history',
      auth: 'key-or-session',
      body: FeedbackBody,
    },
    async ({ req, res, body }) => {
      const id = inferenceId(req.params.id);
      return history.submitFeedback(authOf(res).principal, id, {
        verdict: body.verdict,
        correctedOutput: body.corrected_output ?? null,
        notes: body.notes ?? '',
      });
    },
  );

  api.route(
    {
      method: 'get',
      path: '/inferences/:id/feedback',
      summary: 'The verdict on one inference: {inference_id, human_verdict, human_feedback_at}; 404 before any',
      tag: 'Inference history',
      auth: 'key-or-session',
    },
    ({ req, res }) => history.getFeedback(authOf(res).principal, inferenceId(req.params.id)),
  );
}
