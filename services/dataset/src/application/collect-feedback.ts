/** Feedback verdicts into per-project feedback datasets: stored per inference, and versioned once enough changed. */
import { DATASETS_BUCKET, uploadKey, type ReportIssue } from '../domain/dataset';
import { failureReport } from '../domain/report';
import {
  feedbackDatasetName,
  feedbackDatasetType,
  feedbackExamples,
  rowFor,
  type FeedbackChanges,
} from '../domain/feedback';
import type { DatasetContext } from './context';
import type { FeedbackStore, VersionRow } from './ports';
import { startProcessing } from './process-version';

/**
 * Changed verdicts (new, or replacing an earlier one) a project needs before a delivered batch cuts its next
 * version: as many as the smallest trainable dataset, so a trickle of feedback does not make a version per verdict.
 */
export const DEFAULT_FEEDBACK_VERSION_MIN_ROWS = 10;

/**
 * Stores a delivered batch of verdicts (a later verdict on an inference replaces its rows), then empties the
 * verdicts of deleted inferences, and, for every project whose changed verdicts reached the threshold, cuts one new
 * version of its feedback dataset holding all of its rows; the version is processed like an upload (ready or
 * failed, with a report). Returns the versions cut.
 */
export async function collectFeedback(
  ctx: DatasetContext,
  { verdicts, deletions }: FeedbackChanges,
): Promise<VersionRow[]> {
  const { feedback } = ctx;
  if (!feedback || (!verdicts.length && !deletions.length)) return [];
  const saved = verdicts.length
    ? await feedback.saveFeedback(verdicts.map((v) => ({ ...v, ...feedbackExamples(v) })))
    : [];
  const removed = deletions.length ? await feedback.removeFeedback(deletions) : [];
  // The later count of a project counts both.
  const changed = new Map([...saved, ...removed].map((p) => [`${p.teamId}/${p.projectId}`, p]));
  const min = ctx.feedbackVersionMinRows ?? DEFAULT_FEEDBACK_VERSION_MIN_ROWS;
  const cut: VersionRow[] = [];
  for (const project of changed.values())
    if (project.pending >= min) cut.push(await cutVersion(ctx, feedback, project.teamId, project.projectId));
  return cut;
}

/**
 * Cuts a version of the project's feedback now when any verdict is pending, whatever their number (adaptive
 * retraining asked for all feedback so far). Returns the version cut, else the newest one (null when none).
 */
export async function versionFeedbackNow(
  ctx: DatasetContext,
  teamId: string,
  projectId: string,
): Promise<{ version: VersionRow; cut: boolean } | null> {
  const { feedback } = ctx;
  if (feedback && (await feedback.pendingCount(teamId, projectId)) > 0)
    return { version: await cutVersion(ctx, feedback, teamId, projectId), cut: true };
  const [newest] = await ctx.store.listVersions(teamId, feedbackDatasetName(projectId));
  return newest ? { version: newest, cut: false } : null;
}

async function cutVersion(
  ctx: DatasetContext,
  feedback: FeedbackStore,
  teamId: string,
  projectId: string,
): Promise<VersionRow> {
  const examples = await feedback.snapshot(teamId, projectId);
  const rows = examples.flatMap((e) => e.rows);
  const type = feedbackDatasetType(rows);
  const notes: ReportIssue[] = examples.flatMap((e) =>
    e.issues.map((i) => ({ line: 0, field: `feedback.${e.inferenceId}.${i.field}`, reason: i.reason, fatal: false })),
  );
  const version = await ctx.store.createVersion({
    teamId,
    name: feedbackDatasetName(projectId),
    type,
    format: 'jsonl',
    filename: 'feedback.jsonl',
    keyFor: (datasetId, n) => uploadKey(teamId, datasetId, n, 'jsonl'),
    notes,
    corrections: examples.filter((e) => e.verdict === 'incorrect' && e.rows.length > 0).length,
  });
  const body = rows.map((r) => `${JSON.stringify(rowFor(type, r))}\n`).join('');
  try {
    await ctx.blobs.put(DATASETS_BUCKET, version.uploadKey, Buffer.from(body), { contentType: 'application/x-ndjson' });
  } catch (err) {
    // This version ends failed; its rows stay pending, so the redelivered batch cuts the next one.
    const report = failureReport([], 'the feedback file could not be written');
    await ctx.store
      .transition(version.id, ['uploading'], 'failed', { report, failureReason: report.failure_reason, size: 0 })
      .catch(() => undefined);
    throw err;
  }
  await ctx.store.transition(version.id, ['uploading'], 'converting');
  await feedback.markVersioned(teamId, projectId, examples);
  startProcessing(ctx, version.id);
  ctx.logger.info({ teamId, projectId, version: version.versionNumber, rows: rows.length }, 'feedback version cut');
  return version;
}
