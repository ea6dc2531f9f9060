/** A generation dataset version made from Files API files (an OpenAI fine-tuning job's), processed before the answer. */
import { errors, Reasons } from '@whetstone/errors';
import { DATASETS_BUCKET, nameProblem, uploadKey } from '../domain/dataset';
import type { DatasetContext } from './context';
import { invalidName } from './errors';
import { getFileContent } from './files';
import type { VersionRow } from './ports';
import { startProcessing } from './process-version';

export interface ImportFilesInput {
  teamId: string;
  datasetName: string;
  trainingFileId: string;
  /** Empty: about one row in ten of the training file is held out, by the usual hash. */
  validationFileId: string;
}

/** The lines of a file as the validator numbers them: split on newlines, a trailing newline ending the last. */
function linesOf(content: Uint8Array): string[] {
  const text = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * A row pinned to a split; a line that is no JSON object is left as it is, for validation to report. Parsed trimmed,
 * as the validator parses it: trim drops a file's byte order mark, which JSON.parse refuses, so that row is pinned too.
 */
function pinned(line: string, split: 'train' | 'heldout'): string {
  let row: unknown;
  try {
    row = JSON.parse(line.trim());
  } catch {
    return line;
  }
  if (row === null || typeof row !== 'object' || Array.isArray(row)) return line;
  return JSON.stringify({ ...row, split });
}

/**
 * Writes the training file's lines, then the validation file's, as the upload of a new version of `datasetName`
 * (pinned to the train and held-out splits when there is a validation file), processes it like any upload and
 * answers once it is ready or failed. `trainingLines` tells a caller which file a reported line is in.
 */
export async function importFiles(
  ctx: DatasetContext,
  input: ImportFilesInput,
): Promise<{ version: VersionRow; trainingLines: number }> {
  const problem = nameProblem(input.datasetName);
  if (problem) throw invalidName(problem);
  const files = ctx.files;
  if (!files) throw errors.precondition('FILES_NOT_CONFIGURED', 'This dataset service keeps no Files API files.');
  const deps = { ...ctx, files };
  const training = await getFileContent(deps, input.teamId, input.trainingFileId);
  const validation = input.validationFileId ? await getFileContent(deps, input.teamId, input.validationFileId) : null;
  for (const [field, found] of [
    ['training_file_id', training],
    ['validation_file_id', validation],
  ] as const)
    if (found && found.file.purpose !== 'fine-tune')
      throw errors.invalid(Reasons.VALIDATION_FAILED, `${field} names a file uploaded for ${found.file.purpose}.`, [
        { field, message: `must name a file uploaded with purpose fine-tune, not ${found.file.purpose}` },
      ]);
  const trainingLines = linesOf(training.content);
  const lines = validation
    ? [...trainingLines.map((l) => pinned(l, 'train')), ...linesOf(validation.content).map((l) => pinned(l, 'heldout'))]
    : trainingLines;

  const created = await ctx.store.createVersion({
    teamId: input.teamId,
    name: input.datasetName,
    type: 'generation',
    format: 'jsonl',
    filename: training.file.filename,
    keyFor: (datasetId, n) => uploadKey(input.teamId, datasetId, n, 'jsonl'),
  });
  const body = Buffer.from(lines.length ? `${lines.join('\n')}\n` : '');
  await ctx.blobs.put(DATASETS_BUCKET, created.uploadKey, body, { contentType: 'application/x-ndjson' });
  await ctx.store.transition(created.id, ['uploading'], 'converting');
  startProcessing(ctx, created.id);
  await ctx.work.settled(created.id);
  const version = (await ctx.store.getVersionById(created.id)) ?? created;
  ctx.logger.info(
    { teamId: input.teamId, versionId: created.id, status: version.status, lines: lines.length },
    'files imported as a dataset version',
  );
  return { version, trainingLines: trainingLines.length };
}
