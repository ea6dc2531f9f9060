import { randomUUID } from 'node:crypto';
import { Reasons, errors, isUuid } from '@whetstone/errors';
import { MIN_TRAINING_EXAMPLES, nameProblem } from '../domain/dataset';
import type { DatasetContext } from './context';
import { invalidName } from './errors';
import type { DatasetDeps, GenerationRequest, GenerationRow } from './ports';
import { runGeneration } from './run-generation';

/** Most examples one generation job may ask for. */
const MAX_GENERATED = 10_000;

/** Stores a queued generation job, starts it in the background and returns its id. */
export async function startGeneration(
  ctx: DatasetContext,
  teamId: string,
  name: string,
  request: GenerationRequest,
): Promise<string> {
  const datasetName = name || `generated-${new Date().toISOString().slice(0, 10)}-${randomUUID().slice(0, 6)}`;
  const problem = nameProblem(datasetName);
  if (problem) throw invalidName(problem);
  if (!request.entityTypes.length && !request.classifications.length) {
    throw errors.invalid(
      Reasons.VALIDATION_FAILED,
      'Give entity types or classification tasks to generate examples for.',
      [{ field: 'schema', message: 'needs entities or classifications' }],
    );
  }
  if (request.count < MIN_TRAINING_EXAMPLES || request.count > MAX_GENERATED) {
    throw errors.invalid(Reasons.VALIDATION_FAILED, `count must be ${MIN_TRAINING_EXAMPLES} to 10,000.`, [
      { field: 'count', message: `must be ${MIN_TRAINING_EXAMPLES} to ${MAX_GENERATED}` },
    ]);
  }
  const row: GenerationRow = {
    id: randomUUID(),
    teamId,
    datasetName,
    request,
    status: 'queued',
    generated: 0,
    requested: request.count,
    versionNumber: null,
    error: null,
  };
  await ctx.store.createGeneration(row);
  void runGeneration(ctx, row);
  return row.id;
}

/** NotFound for an unknown id, a string that is no UUID (it can name no job) and another team's job alike. */
export async function getGeneration(deps: DatasetDeps, teamId: string, id: string): Promise<GenerationRow> {
  const row = isUuid(id) ? await deps.store.getGeneration(teamId, id) : null;
  if (!row) throw errors.notFound('GENERATION_JOB_NOT_FOUND', `Generation job '${id}' was not found.`);
  return row;
}
