import { AppError, failureOf } from '@whetstone/errors';
import { startPollingWorker, type PollingWorker } from '@whetstone/events';
import type { Logger } from '@whetstone/telemetry';
import { afterFailure, isScore, type JudgeKind } from '../domain/judge';
import type { ClaimedRecord, Judge, JudgeStore } from './ports';

/** What the judge worker needs: the queue, one judge per kind it can run, and its bounds. */
export interface JudgeWorkerDeps {
  store: JudgeStore;
  judges: Partial<Record<JudgeKind, Judge>>;
  now: () => Date;
  logger: Logger;
  /** Attempts per record before judge_status becomes failed. */
  maxAttempts: number;
  /** How long a claim lasts; a record whose worker died is claimable again after it. */
  leaseMs: number;
  /** Records claimed per pass, judged concurrently. */
  batch: number;
}

/** One pass of the judge worker: claims due records and judges them; resolves with how many it claimed. */
export async function judgePending(deps: JudgeWorkerDeps): Promise<number> {
  const claimed = await deps.store.claim(deps.batch, deps.leaseMs);
  await Promise.all(claimed.map((c) => judgeOne(deps, c)));
  return claimed.length;
}

async function judgeOne(deps: JudgeWorkerDeps, { record, attempts, settings }: ClaimedRecord): Promise<void> {
  const id = record.inferenceId;
  try {
    // A claim past the last attempt means a worker died during that attempt: its lease ran out.
    if (attempts > deps.maxAttempts)
      throw new AppError('FailedPrecondition', 'JUDGE_ATTEMPTS_EXHAUSTED', 'The judge did not finish in time.', {
        retryable: false,
      });
    const judge = deps.judges[settings.kind];
    if (!judge)
      throw new AppError('FailedPrecondition', 'JUDGE_UNAVAILABLE', `No ${settings.kind} judge runs here.`, {
        retryable: false,
      });
    const verdict = await judge.judge(record, settings);
    if (!isScore(verdict.score))
      throw new AppError('Unavailable', 'JUDGE_BAD_ANSWER', 'The judge answered without a score from 0 to 1.');
    await deps.store.saveVerdict(id, verdict, deps.now());
  } catch (err) {
    const failure = failureOf(err);
    const error = `${failure.code}: ${failure.message}`;
    const next = afterFailure(attempts, deps.maxAttempts, failure.retryable);
    deps.logger.warn({ err, inferenceId: id, attempts, code: failure.code }, 'judge attempt failed');
    if ('giveUp' in next) await deps.store.fail(id, error, deps.now());
    else await deps.store.retryLater(id, error, new Date(deps.now().getTime() + next.retryInMs));
  }
}

/** The judge worker: judge passes until stopped, woken early when new records were just stored. */
export function startJudgeWorker(deps: JudgeWorkerDeps, idleMs: number): PollingWorker {
  return startPollingWorker({ name: 'judge', pass: () => judgePending(deps), idleMs, logger: deps.logger });
}
