/** The processing pipeline of one version: converting → validating → ready | failed. */
import { publicMessage } from '@whetstone/errors';
import { DATASETS_BUCKET, splitKeys } from '../domain/dataset';
import { failureReport, validationReport, type RowProblem, type ValidationOutcome } from '../domain/report';
import type { DatasetContext } from './context';
import type { DatasetDeps, VersionRow } from './ports';
import { readUpload } from './read-upload';
import { validateAndSplit } from './split-rows';

/** How long a processing claim lasts unless renewed; it is renewed every third of that. */
const LEASE_MS = 60_000;

/** Processes `versionId` in the background unless this process already does. */
export function startProcessing(ctx: DatasetContext, versionId: string): void {
  ctx.work.start(
    versionId,
    () => processVersion(ctx, versionId),
    (err) => ctx.logger.error({ err, versionId }, 'processing crashed'),
  );
}

/**
 * Claims the version, reads it (JSONL streamed, CSV and CoNLL converted in memory), validates every row into the
 * two splits, and ends ready or failed with a report. A claim held by another live process is left alone.
 */
export async function processVersion(ctx: DatasetContext, versionId: string): Promise<void> {
  const { store, logger } = ctx;
  if (!(await store.claim(versionId, ctx.instance, LEASE_MS))) return;
  const version = await store.getVersionById(versionId);
  if (!version) return;
  const renew = setInterval(
    () => void store.renew(versionId, ctx.instance, LEASE_MS).catch(() => undefined),
    LEASE_MS / 3,
  );
  const started = Date.now();
  try {
    const source = await readUpload(ctx, version);
    if ('failure' in source) return await fail(ctx, version, source.failure.problems, source.failure.reason);
    await store.transition(versionId, ['converting'], 'validating');
    const outcome = await validateAndSplit(ctx, version, source.lines);
    await settle(ctx, version, outcome);
    if (!outcome.totalErrors)
      logger.info({ versionId, size: outcome.valid, ms: Date.now() - started }, 'dataset version ready');
  } catch (err) {
    // The cause is logged; the stored reason says only what a team may read.
    logger.warn({ err, versionId }, 'dataset processing failed');
    await fail(ctx, version, [], `processing failed: ${publicMessage(err)}`).catch(() => undefined);
  } finally {
    clearInterval(renew);
  }
}

/** Ready with its report, or failed with its report and no split files left behind. */
async function settle(deps: DatasetDeps, version: VersionRow, outcome: ValidationOutcome): Promise<void> {
  const report = validationReport(outcome, version.notes);
  if (!outcome.totalErrors) {
    await deps.store.transition(version.id, ['validating'], 'ready', { report, size: outcome.valid });
    return;
  }
  const keys = splitKeys(version.teamId, version.datasetId, version.versionNumber);
  await deps.blobs.delete(DATASETS_BUCKET, keys.train).catch(() => undefined);
  await deps.blobs.delete(DATASETS_BUCKET, keys.heldout).catch(() => undefined);
  await deps.store.transition(version.id, ['validating'], 'failed', {
    report,
    failureReason: report.failure_reason,
    size: 0,
  });
  deps.logger.info({ versionId: version.id, errors: outcome.totalErrors }, 'dataset version failed validation');
}

async function fail(deps: DatasetDeps, version: VersionRow, problems: RowProblem[], reason: string): Promise<void> {
  const report = failureReport(problems, reason);
  await deps.store.transition(version.id, ['converting', 'validating'], 'failed', {
    report,
    failureReason: report.failure_reason,
    size: 0,
  });
}
