import { AppError, failureOf, type Failure } from '@whetstone/errors';

/** A dataset split that is not JSONL: the same data fails the same way on every attempt. */
export const rowsNotJson = (cause: unknown) =>
  new AppError(
    'InvalidArgument',
    'DATASET_ROWS_INVALID',
    'A dataset row is not valid JSON; fix the dataset and train again.',
    {
      cause,
      retryable: false,
    },
  );

/**
 * What the orchestrator is told about a failed job or evaluation, decided by
 * the error's type, never by its text: typed errors keep their reason, message
 * and retryable flag; a SyntaxError is malformed data (not retryable);
 * anything else is INTERNAL with a generic message and may pass on another
 * attempt (a lost connection, a full disk). The caller logs the cause.
 */
export function classifyFailure(err: unknown): Failure {
  if (err instanceof SyntaxError) return failureOf(rowsNotJson(err));
  return failureOf(err);
}
