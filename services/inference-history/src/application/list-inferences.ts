import { errors, Reasons, type FieldError } from '@whetstone/errors';
import type { ListFilter } from '../domain/record';
import type { HistoryDeps } from './deps';
import type { Page } from './ports';

export const MAX_PAGE = 200;

/** Every problem with a filter at once: page bounds, negative latencies, scores outside 0–1, a min above its max. */
export function filterProblems(f: ListFilter): FieldError[] {
  const issues: FieldError[] = [];
  const bad = (field: string, message: string) => issues.push({ field, message, code: 'out_of_range' });
  if (!Number.isInteger(f.limit) || f.limit < 1 || f.limit > MAX_PAGE)
    bad('limit', `must be an integer from 1 to ${MAX_PAGE}`);
  if (!Number.isInteger(f.offset) || f.offset < 0) bad('offset', 'must be an integer of at least 0');
  for (const [field, v] of [
    ['latency_min', f.latencyMin],
    ['latency_max', f.latencyMax],
  ] as const)
    if (v !== undefined && !(v >= 0)) bad(field, 'must be at least 0');
  for (const [field, v] of [
    ['llmaj_score_min', f.llmajScoreMin],
    ['llmaj_score_max', f.llmajScoreMax],
  ] as const)
    if (v !== undefined && !(v >= 0 && v <= 1)) bad(field, 'must be from 0.0 to 1.0');
  const above = (min: number | undefined, max: number | undefined) =>
    min !== undefined && max !== undefined && min > max;
  if (above(f.latencyMin, f.latencyMax)) bad('latency_max', 'must not be below latency_min');
  if (above(f.llmajScoreMin, f.llmajScoreMax)) bad('llmaj_score_max', 'must not be below llmaj_score_min');
  if (f.since && f.until && f.since.getTime() > f.until.getTime()) bad('until', 'must not be before since');
  if (f.afterId && f.offset > 0) bad('offset', 'must be 0 with a cursor (after_id)');
  return issues;
}

/**
 * A page of the caller's team's records, newest first (or oldest first); InvalidArgument (422) naming every bad
 * filter, and naming after_id when the cursor is not one of the records the filter matches.
 */
export async function listInferences(deps: HistoryDeps, teamId: string, filter: ListFilter): Promise<Page> {
  const issues = filterProblems(filter);
  if (issues.length) throw errors.invalid(Reasons.VALIDATION_FAILED, 'Invalid inference filters', issues);
  const page = await deps.store.list(teamId, filter);
  if (page) return page;
  throw errors.invalid(Reasons.VALIDATION_FAILED, 'Invalid inference filters', [
    { field: 'after_id', message: `names no record of this list: '${String(filter.afterId).slice(0, 100)}'` },
  ]);
}
