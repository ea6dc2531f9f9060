import type { CatalogEntry } from '../domain/catalog';
import type { Caller } from '../domain/model';
import type { RouterDeps } from './deps';

export interface CallableModel {
  id: string;
  ownedBy: string;
  /** When a trained model completed; null for base models. */
  createdAt: Date | null;
}

/** The whole catalog, the same for every team. */
export function listBaseModels(deps: RouterDeps): CatalogEntry[] {
  return deps.catalog.entries;
}

/** Unrestricted on-demand base models (upstream ones owned by their provider's name), then the team's servable trained jobs (from the read model). */
export async function listModels(deps: RouterDeps, caller: Caller): Promise<CallableModel[]> {
  const base = deps.catalog.entries
    .filter((e) => e.supportsOnDemandInference && !deps.restrictions.restricted(caller.teamId, e.id))
    .map((e) => ({ id: e.id, ownedBy: e.upstream?.provider ?? 'whetstone', createdAt: null }));
  const trained = (await deps.trained.listServable(caller.teamId)).map((m) => ({
    id: m.jobId,
    ownedBy: 'whetstone',
    createdAt: m.completedAt,
  }));
  return [...base, ...trained];
}
