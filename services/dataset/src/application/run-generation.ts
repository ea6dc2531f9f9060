import { PassThrough } from 'node:stream';
import { failureOf } from '@whetstone/errors';
import { generateExamples } from '@whetstone/ml';
import { DATASETS_BUCKET, uploadKey, type DatasetType } from '../domain/dataset';
import type { DatasetContext } from './context';
import type { GenerationRow } from './ports';
import { startProcessing } from './process-version';

/** Progress is stored, and the event loop let go, every this many examples. */
const PROGRESS_EVERY = 500;

/** Generates a job's rows into a new version's upload, then processes it like an upload; never rejects. */
export async function runGeneration(ctx: DatasetContext, job: GenerationRow): Promise<void> {
  const { store, logger } = ctx;
  try {
    await store.updateGeneration(job.id, { status: 'running', generated: 0 });
    const versionId = await generateUpload(ctx, job);
    await store.transition(versionId, ['uploading'], 'converting');
    startProcessing(ctx, versionId);
    await ctx.work.settled(versionId);
    const done = await store.getVersionById(versionId);
    if (done?.status === 'ready') await store.updateGeneration(job.id, { status: 'ready' });
    else
      await store.updateGeneration(job.id, {
        status: 'failed',
        error: done?.failureReason ?? 'the generated dataset did not validate',
      });
  } catch (err) {
    // The cause is logged; the job keeps a stable message a team may read.
    logger.warn({ err, jobId: job.id }, 'generation failed');
    await store.updateGeneration(job.id, { status: 'failed', error: failureOf(err).message }).catch(() => undefined);
  }
}

/** Writes the generated rows as the upload of a new version; returns the version's id. */
async function generateUpload(ctx: DatasetContext, job: GenerationRow): Promise<string> {
  const { store, blobs } = ctx;
  const type: DatasetType = job.request.entityTypes.length ? 'extraction' : 'classification';
  const version = await store.createVersion({
    teamId: job.teamId,
    name: job.datasetName,
    type,
    format: 'jsonl',
    filename: 'generated.jsonl',
    keyFor: (datasetId, n) => uploadKey(job.teamId, datasetId, n, 'jsonl'),
  });
  const body = new PassThrough();
  const upload = blobs.put(DATASETS_BUCKET, version.uploadKey, body, { contentType: 'application/x-ndjson' });
  let generated = 0;
  for (const row of generateExamples({
    entityTypes: job.request.entityTypes,
    classifications: job.request.classifications,
    domain: job.request.domain,
    count: job.request.count,
    seed: job.request.seed,
  })) {
    if (!body.write(`${JSON.stringify(row)}\n`)) await new Promise((resolve) => body.once('drain', resolve));
    generated++;
    if (generated % PROGRESS_EVERY === 0) {
      await store.updateGeneration(job.id, { generated });
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  body.end();
  await upload;
  await store.updateGeneration(job.id, { generated, versionNumber: version.versionNumber });
  return version.id;
}
