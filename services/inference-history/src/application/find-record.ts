import { errors, isUuid, uuidTimeMs } from '@whetstone/errors';
import type { InferenceRecord } from '../domain/record';
import { mayBeInFlight } from '../domain/read-your-writes';
import type { HistoryDeps } from './deps';

const notFound = (id: string) => errors.notFound('INFERENCE_NOT_FOUND', `Inference '${id}' was not found.`);

/**
 * The team's record. An id that is not stored yet but was minted moments ago may
 * still be on its way from the router: wait for the consumer to store it (woken
 * by the ingest, bounded by readWaitMs). Anything else unknown, or deleted, is NotFound at once.
 */
export async function findRecord(deps: HistoryDeps, teamId: string, inferenceId: string): Promise<InferenceRecord> {
  const id = inferenceId.toLowerCase();
  if (!isUuid(id)) throw notFound(inferenceId);
  const inFlight = mayBeInFlight(uuidTimeMs(id), deps.now().getTime(), deps.inFlightWindowMs);
  const waiter = inFlight ? deps.signal.expect(id) : null;
  // Another team's record is NotFound, at once: it is not in flight for this caller.
  const ours = (r: InferenceRecord | null) => {
    if (r && r.teamId !== teamId) throw notFound(inferenceId);
    return r;
  };
  try {
    const held = ours(await deps.store.get(id));
    if (held) return held;
    // A deleted record will not arrive: no wait.
    if (!waiter || (await deps.store.wasDeleted(id))) throw notFound(inferenceId);
    await waiter.arrived(deps.readWaitMs);
    const late = ours(await deps.store.get(id));
    if (late) return late;
    throw notFound(inferenceId);
  } finally {
    waiter?.cancel();
  }
}
