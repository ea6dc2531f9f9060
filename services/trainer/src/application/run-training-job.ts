import { AppError } from '@whetstone/errors';
import { bundleKey, checkpointKey, manifestKey, shortKey } from '../domain/artifacts';
import { classifyFailure } from '../domain/failure';
import { PROGRESS_LOG_EVERY_MS, progressLine, shouldReport, stepMetricsOf, type Progress } from '../domain/progress';
import type { UseCaseDeps } from './deps';
import { JobSession } from './job-session';
import type { Row, TrainHooks, TrainingWork } from './ports';

/** The checkpoint to resume from, or undefined (start over, said in the job's log) when it cannot be read. */
async function readCheckpoint(deps: UseCaseDeps, job: TrainingWork, session: JobSession) {
  try {
    return await deps.artifacts.readBytes(job.artifactBucket, job.resumeKey);
  } catch (err) {
    deps.logger.warn({ jobId: job.jobId, err }, 'resume checkpoint unreadable');
    session.log('warn', `checkpoint ${shortKey(job.resumeKey)} could not be read; training starts over`);
    return undefined;
  }
}

/** The rows `times` times over (at least once): a dataset weighted up is seen that many times per epoch. */
const repeated = (rows: Row[], times: number): Row[] =>
  Array.from({ length: Math.max(1, Math.floor(times)) }, () => rows).flat();

async function loadData(deps: UseCaseDeps, job: TrainingWork, session: JobSession) {
  const { artifacts } = deps;
  session.log('info', `loading ${job.trainKeys.length} dataset(s)`);
  const read = (keys: string[]) => Promise.all(keys.map((k) => artifacts.readRows(job.datasetBucket, k)));
  const perDataset = await read(job.trainKeys);
  const train: Row[] = perDataset.flatMap((rows, i) => repeated(rows, job.trainRepeats?.[i] ?? 1));
  const heldout: Row[] = (await read(job.heldoutKeys)).flat();
  const resumeFrom = job.resumeKey ? await readCheckpoint(deps, job, session) : undefined;
  const resuming = resumeFrom ? `; resuming from ${shortKey(job.resumeKey)}` : '';
  const weighted = perDataset.some((_, i) => (job.trainRepeats?.[i] ?? 1) > 1)
    ? ` (${perDataset.map((rows, i) => `${rows.length} × ${Math.max(1, job.trainRepeats?.[i] ?? 1)}`).join(' + ')})`
    : '';
  session.log('info', `${train.length} training rows${weighted}, ${heldout.length} held-out rows${resuming}`);
  return { train, heldout, resumeFrom };
}

function hooksFor(deps: UseCaseDeps, job: TrainingWork, session: JobSession): Omit<TrainHooks, 'resumeFrom'> {
  let lastReport = 0;
  let lastLogged = 0;
  let trainingCheckpoints = 0;
  let totalSteps = Infinity;
  return {
    signal: session.signal,
    onLog: (level, message) => session.log(level, message),
    onProgress: (p: Progress) => {
      totalSteps = p.totalSteps;
      if (trainingCheckpoints > 0 && p.step < p.totalSteps) deps.failpoints?.hit('mid-epoch');
      const now = Date.now();
      if (!shouldReport(p, now, lastReport)) return;
      lastReport = now;
      if (shouldReport(p, now, lastLogged, PROGRESS_LOG_EVERY_MS)) {
        lastLogged = now;
        session.log('info', progressLine(p), stepMetricsOf(p));
      }
      void deps.orchestrator.reportProgress(session.lease, p).then(
        (goOn) => session.obey(goOn),
        () => undefined,
      );
    },
    onCheckpoint: async (c) => {
      const key = checkpointKey(job.artifactPrefix, c.id);
      const storing = deps.artifacts.put(job.artifactBucket, key, c.bytes);
      if (c.type === 'training' && ++trainingCheckpoints === 2) deps.failpoints?.hit('checkpoint-write');
      const sizeBytes = await storing;
      const goOn = await deps.orchestrator.putCheckpoint(session.lease, {
        checkpointId: c.id,
        type: c.type,
        step: c.step,
        key,
        sizeBytes,
      });
      session.obey(goOn);
      // The last sampler checkpoint is followed by the final evaluation and the bundle.
      if (c.type === 'sampler' && c.step >= totalSteps) deps.failpoints?.hit('final-evaluation');
    },
  };
}

/** A checkpoint the engine cannot resume from (damaged, or of another kind) is skipped: training starts over. */
const unusableCheckpoint = (err: unknown) => err instanceof AppError && err.reason === 'CHECKPOINT_INVALID';

async function train(deps: UseCaseDeps, job: TrainingWork, session: JobSession): Promise<void> {
  const { train: rows, heldout, resumeFrom } = await loadData(deps, job, session);
  const input = {
    baseModel: job.baseModel,
    trainingType: job.trainingType,
    train: rows,
    heldout,
    hyperparameters: { nrEpochs: job.nrEpochs, learningRate: job.learningRate, seed: job.seed },
    ...(job.outOfScopeLabel ? { outOfScope: { label: job.outOfScopeLabel } } : {}),
  };
  const hooks = hooksFor(deps, job, session);
  const result = await deps.engine.train(input, { ...hooks, ...(resumeFrom ? { resumeFrom } : {}) }).catch((err) => {
    if (!resumeFrom || !unusableCheckpoint(err)) throw err;
    session.log('warn', `checkpoint ${shortKey(job.resumeKey)} cannot be resumed from; training starts over`);
    return deps.engine.train(input, hooks);
  });
  await session.flush();
  const artifactKey = bundleKey(job.artifactPrefix);
  const manifest = manifestKey(job.artifactPrefix);
  const artifactSize = await deps.artifacts.put(job.artifactBucket, artifactKey, result.bundle);
  await deps.artifacts.put(job.artifactBucket, manifest, Buffer.from(JSON.stringify(result.manifest, null, 2)));
  await deps.orchestrator.completeJob(session.lease, {
    artifactKey,
    artifactSize,
    manifestKey: manifest,
    metrics: result.metrics,
    exampleEpochs: rows.length * job.nrEpochs,
  });
  deps.logger.info({ jobId: job.jobId, metrics: result.metrics }, 'training job complete');
}

/**
 * Trains one leased job with the engine, streaming progress, logs and
 * checkpoints back, and stops within a second when told. A failure is
 * reported with a safe reason and a retryable flag decided by its type; its
 * cause goes to this service's log only.
 */
export async function runTrainingJob(deps: UseCaseDeps, job: TrainingWork, stop: AbortSignal): Promise<void> {
  const session = new JobSession(deps, { jobId: job.jobId, leaseToken: job.leaseToken }, job.leaseMs);
  const onStop = () => session.controller.abort();
  stop.addEventListener('abort', onStop, { once: true });
  deps.logger.info({ jobId: job.jobId, attempt: job.attempt }, 'training job leased');
  try {
    await train(deps, job, session);
  } catch (err) {
    if (session.signal.aborted) {
      deps.logger.info({ jobId: job.jobId }, 'training job stopped');
      return;
    }
    const failure = classifyFailure(err);
    deps.logger.warn({ jobId: job.jobId, err, code: failure.code }, 'training job failed');
    session.log('error', `training failed: ${failure.message}`);
    await session.flush();
    await deps.orchestrator.failJob(session.lease, failure).catch(() => undefined);
  } finally {
    stop.removeEventListener('abort', onStop);
    session.close();
  }
}
