/** Validation of a job request against the base model's bounds: pure, every problem at once. */
import type { CatalogEntry } from '@whetstone/catalog';
import { Reasons, errors, type FieldError } from '@whetstone/errors';
import type { FineTuningSource, TrainingType } from './job';

export interface JobRequest {
  baseModel: string;
  datasets: string[];
  modelName: string;
  /** Absent means lora. */
  trainingType?: TrainingType | undefined;
  /** 0 means the base model's default. */
  nrEpochs: number;
  /** 0 means the base model's default. */
  learningRate: number;
  /** Multiplies the base model's default learning rate when learningRate is 0; 0 or absent means 1. */
  learningRateMultiplier?: number;
  projectId: string;
  /** The label classification tasks answer for out-of-scope inputs; empty (or absent) for none. */
  outOfScopeLabel?: string;
  /** Set by the OpenAI-compatible fine-tuning API; null or absent otherwise. */
  fineTuning?: FineTuningSource | null;
  /** 0 or absent picks one at random; otherwise 1 to 2^31 − 1. */
  seed?: bigint | number;
  /** Internal (adaptive retraining): times each dataset's rows are seen per epoch, parallel to datasets; absent means 1. */
  weights?: number[];
}

/** Largest seed a job takes (the trainer's seed is a 32-bit signed integer). */
export const MAX_SEED = 2 ** 31 - 1;

export const invalid = (message: string, fieldErrors: FieldError[]) =>
  errors.invalid(Reasons.VALIDATION_FAILED, message, fieldErrors);

/** Fields every request needs, whatever it trains from. */
export function assertRequestShape(input: JobRequest): void {
  const problems: FieldError[] = [];
  if (!input.baseModel)
    problems.push({
      field: 'base_model',
      message: 'is required: a base model id from GET /v1/base-models, or a job or checkpoint id to continue from',
    });
  if (!input.datasets.length)
    problems.push({ field: 'datasets', message: 'give at least one dataset: [{"name": "<a ready dataset>"}]' });
  const seed = Number(input.seed ?? 0);
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_SEED)
    problems.push({ field: 'seed', message: `must be an integer from 0 (pick one) to ${MAX_SEED}` });
  if (problems.length) throw invalid('Invalid training job', problems);
}

/** The hyperparameters after defaults, within the root model's bounds; InvalidArgument naming every bad field. */
export function resolveHyperparameters(
  root: CatalogEntry,
  input: Pick<JobRequest, 'trainingType' | 'nrEpochs' | 'learningRate' | 'learningRateMultiplier'>,
): { trainingType: TrainingType; nrEpochs: number; learningRate: number } {
  const trainingType = input.trainingType ?? 'lora';
  if (!root.trainingTypes.includes(trainingType))
    throw invalid(`${root.id} accepts training_type ${root.trainingTypes.join(' or ')}`, [
      {
        field: 'training_type',
        message: `must be ${root.trainingTypes.map((t) => `'${t}'`).join(' or ')} for ${root.id}`,
      },
    ]);
  const nrEpochs = input.nrEpochs || root.nrEpochs.default;
  const learningRate = input.learningRate || root.learningRate.default * (input.learningRateMultiplier || 1);
  const problems: FieldError[] = [];
  if (!Number.isInteger(nrEpochs) || nrEpochs < root.nrEpochs.min || nrEpochs > root.nrEpochs.max)
    problems.push({
      field: 'nr_epochs',
      message: `must be an integer from ${root.nrEpochs.min} to ${root.nrEpochs.max} for ${root.id}`,
    });
  if (!(learningRate >= root.learningRate.min && learningRate <= root.learningRate.max))
    problems.push({
      field: 'learning_rate',
      message: `must be from ${root.learningRate.min} to ${root.learningRate.max} for ${root.id}`,
    });
  if (problems.length) throw invalid('Invalid training job', problems);
  return { trainingType, nrEpochs, learningRate };
}

/** Longest out-of-scope label a job may name (a label, not a sentence). */
export const MAX_LABEL_LENGTH = 100;

/**
 * The out-of-scope label a job names, trimmed; null when none. It applies to single-label classification, so
 * at least one dataset must hold classification data; InvalidArgument otherwise.
 */
export function resolveOutOfScopeLabel(label: string | undefined, datasetKinds: readonly string[]): string | null {
  const trimmed = (label ?? '').trim();
  if (!trimmed) return null;
  const problem =
    trimmed.length > MAX_LABEL_LENGTH
      ? `must be at most ${MAX_LABEL_LENGTH} characters`
      : !datasetKinds.includes('classification')
        ? `applies to classification datasets; the datasets given hold ${[...new Set(datasetKinds)].join(' and ')} data`
        : null;
  if (problem) throw invalid('Invalid training job', [{ field: 'out_of_scope_label', message: problem }]);
  return trimmed;
}

/** Page bounds of a job listing. */
export function resolvePage(limit: number, offset: number): { limit: number; offset: number } {
  const resolved = limit || 200;
  if (resolved < 1 || resolved > 200)
    throw invalid('Invalid limit', [{ field: 'limit', message: 'must be from 1 to 200' }]);
  if (offset < 0) throw invalid('Invalid offset', [{ field: 'offset', message: 'must be at least 0' }]);
  return { limit: resolved, offset };
}
