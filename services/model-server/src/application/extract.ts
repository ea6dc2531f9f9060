import { Reasons, errors } from '@whetstone/errors';
import {
  extractionTokens,
  SchemaError,
  type ExtractionModel,
  type ExtractionResult,
  type PredictOptions,
} from '@whetstone/ml';
import type { ExtractionModels } from './extraction-models';
import type { ModelRef } from './ports';

export interface ExtractOutput {
  results: ExtractionResult[];
  inputTokens: number;
}

/**
 * Runs texts through a ready model in one batch. The texts arrive validated
 * (the gateway checks the batch limit); the schema is normalised by the model
 * itself, and a schema it cannot read is the caller's error.
 */
export function runExtraction(
  model: ExtractionModel,
  texts: readonly string[],
  schema: unknown,
  options: PredictOptions,
): ExtractionResult[] {
  try {
    return model.extractMany(texts, schema as never, options);
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    throw errors.invalid(
      Reasons.VALIDATION_FAILED,
      `Invalid schema: ${err.message}`,
      err.issues.map((i) => ({ field: i.field, message: i.message })),
    );
  }
}

/** The schema as the call sent it: JSON text, empty for "use the trained schema". */
export function parseSchema(json: string): unknown {
  if (!json) return {};
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'Invalid schema: not valid JSON.', [
      { field: 'schema', message: 'must be a JSON object' },
    ]);
  }
}

/** Runs one call on its own, synchronously (warm-up at start). */
export function extract(
  models: ExtractionModels,
  ref: ModelRef,
  texts: string[],
  schema: unknown,
  options: PredictOptions,
): ExtractOutput {
  const results = runExtraction(models.ready(ref), texts, schema, options);
  return { results, inputTokens: texts.reduce((n, t) => n + extractionTokens(t), 0) };
}
