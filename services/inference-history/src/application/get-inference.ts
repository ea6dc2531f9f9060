import type { InferenceRecord } from '../domain/record';
import type { HistoryDeps } from './deps';
import { findRecord } from './find-record';

/** One record of the caller's team, read-your-writes for ids just returned by an inference. */
export function getInference(deps: HistoryDeps, teamId: string, inferenceId: string): Promise<InferenceRecord> {
  return findRecord(deps, teamId, inferenceId);
}
