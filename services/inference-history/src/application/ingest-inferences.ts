import type { InferenceRecord } from '../domain/record';
import type { HistoryDeps } from './deps';

/**
 * Stores a batch of completed inferences, once per inference id, and wakes the
 * readers waiting for them. Duplicates inside the batch (a redelivered event)
 * are dropped before the write.
 */
export async function ingestInferences(deps: HistoryDeps, records: InferenceRecord[]): Promise<number> {
  const unique = [...new Map(records.map((r) => [r.inferenceId, r])).values()];
  if (!unique.length) return 0;
  const stored = await deps.store.ingest(unique);
  deps.signal.ingested(unique.map((r) => r.inferenceId));
  return stored;
}
