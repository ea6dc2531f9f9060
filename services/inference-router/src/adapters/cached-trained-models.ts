import type { TrainedModels } from '../application/ports';
import { isNewer, type TrainedModel } from '../domain/trained-model';

/**
 * An in-memory cache in front of the read model, so a warm /inference on a
 * trained job costs no database round trip. Only servable jobs are cached: a
 * bundle never changes once complete, and anything else may change at the next
 * event. Writes through this replica update the cache at once; the TTL bounds
 * how long another replica (which did not see the JobDeleted event) keeps
 * serving a deleted job.
 */
export function cachedTrainedModels(
  inner: TrainedModels,
  ttlMs: number,
  now: () => number = Date.now,
  maxEntries = 50_000,
): TrainedModels {
  const cache = new Map<string, { model: TrainedModel; until: number }>();
  // Jobs this replica saw deleted: a read that began before the deletion committed must not cache the job again (a
  // deleted job never comes back, so the tombstone is permanent; bounded like the cache).
  const deleted = new Set<string>();
  const remember = (m: TrainedModel) => {
    if (!m.servable || ttlMs <= 0 || deleted.has(m.jobId)) return void cache.delete(m.jobId);
    if (cache.size >= maxEntries) cache.clear();
    cache.set(m.jobId, { model: m, until: now() + ttlMs });
  };
  return {
    async get(teamId, jobId) {
      const hit = cache.get(jobId);
      if (hit && hit.until > now()) return hit.model.teamId === teamId ? hit.model : null;
      const model = await inner.get(teamId, jobId);
      if (model) remember(model);
      return model;
    },
    listServable: (teamId) => inner.listServable(teamId),
    async upsert(model) {
      const applied = await inner.upsert(model);
      // Two events applied concurrently: keep the newer in memory too.
      if (applied && isNewer(cache.get(model.jobId)?.model ?? null, model.updatedAt)) remember(model);
      else if (!applied) cache.delete(model.jobId);
      return applied;
    },
    async markDeleted(jobId, teamId, at) {
      if (deleted.size >= maxEntries) deleted.clear();
      deleted.add(jobId);
      cache.delete(jobId);
      await inner.markDeleted(jobId, teamId, at);
    },
  };
}
