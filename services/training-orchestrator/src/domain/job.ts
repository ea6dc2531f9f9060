/** Training-job domain: states, bounds, pricing, lease rules. */
import { BUILTIN_MODELS, TRAINING_PRICE_PER_EXAMPLE_EPOCH, type CatalogEntry } from '@whetstone/catalog';

export type JobStatus = 'requested' | 'running' | 'complete' | 'failed' | 'deployed' | 'cancelled';
export const ACTIVE: JobStatus[] = ['requested', 'running'];
export const TERMINAL: JobStatus[] = ['complete', 'failed', 'deployed', 'cancelled'];

export const ARTIFACTS_BUCKET = 'artifacts';
/** A lease not renewed for this long is taken back and the job retried. */
export const LEASE_MS = 30_000;
/** Attempts before a job whose trainers keep dying is failed. */
export const MAX_ATTEMPTS = 3;

export function trainableBase(id: string): CatalogEntry | undefined {
  return BUILTIN_MODELS.find((m) => m.id === id && m.supportsTraining);
}

export function trainingCost(exampleEpochs: number): bigint {
  return BigInt(Math.max(0, Math.round(exampleEpochs))) * TRAINING_PRICE_PER_EXAMPLE_EPOCH;
}

export function artifactPrefix(jobId: string): string {
  return `jobs/${jobId}/`;
}

export function defaultModelName(baseModel: string, now: Date): string {
  return `${baseModel.replace(/^whetstone-/, '')}-${now.toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
}
