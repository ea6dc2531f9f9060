/** Validating rows and streaming the valid ones to the train and held-out splits as they are checked. */
import { PassThrough } from 'node:stream';
import { JsonlValidator, isHeldOutJson, type RowError } from '@whetstone/ml';
import {
  DATASETS_BUCKET,
  MAX_REPORTED_ISSUES,
  MIN_TRAINING_EXAMPLES,
  splitKeys,
  validationKind,
} from '../domain/dataset';
import type { ValidationOutcome } from '../domain/report';
import type { DatasetDeps, VersionRow } from './ports';

const NDJSON = { contentType: 'application/x-ndjson' };

/** Checks every line; memory stays flat however long the file is. The split blobs are written even when rows fail. */
export async function validateAndSplit(
  deps: DatasetDeps,
  version: VersionRow,
  lines: AsyncIterable<string[]>,
): Promise<ValidationOutcome> {
  const validator = new JsonlValidator(validationKind(version.type), {
    minExamples: MIN_TRAINING_EXAMPLES,
    maxErrors: MAX_REPORTED_ISSUES,
  });
  const keys = splitKeys(version.teamId, version.datasetId, version.versionNumber);
  const train = new PassThrough();
  const heldout = new PassThrough();
  const uploads = Promise.all([
    deps.blobs.put(DATASETS_BUCKET, keys.train, train, NDJSON),
    deps.blobs.put(DATASETS_BUCKET, keys.heldout, heldout, NDJSON),
  ]);
  const counts = { train: 0, heldout: 0 };
  let line = 0;
  let badUtf8: RowError | null = null;
  for await (const batch of lines) {
    const out = { train: '', heldout: '' };
    for (const text of batch) {
      line++;
      const raw = text.endsWith('\r') ? text.slice(0, -1) : text;
      if (!badUtf8 && raw.includes('\uFFFD'))
        badUtf8 = { line, field: '(row)', reason: 'the file is not valid UTF-8 here' };
      const valid = validator.pushSerialized(raw, line);
      if (!valid) continue;
      // A row may pin its split (a team's own test set); the others go by a hash of their content.
      const split = valid.split ?? (isHeldOutJson(valid.json) ? 'heldout' : 'train');
      counts[split]++;
      out[split] += `${valid.json}\n`;
    }
    await write(train, out.train);
    await write(heldout, out.heldout);
  }
  train.end();
  heldout.end();
  await uploads;
  if (badUtf8) validator.errors.unshift(badUtf8);
  validator.finish();
  return {
    rows: validator.rows,
    valid: validator.valid,
    duplicates: validator.duplicates,
    errors: validator.errors,
    totalErrors: validator.totalErrors,
    labels: validator.labels,
    trainRows: counts.train,
    heldoutRows: counts.heldout,
  };
}

async function write(stream: PassThrough, text: string): Promise<void> {
  if (text && !stream.write(text)) await new Promise((resolve) => stream.once('drain', resolve));
}
