import { Reasons, errors } from '@whetstone/errors';
import { SchemaError, type ExtractionResult, type PredictOptions } from '@whetstone/ml';
import { countTokens } from '../domain/tokens';
import type { ExtractionModels } from './extraction-models';
import type { ModelRef } from './ports';

/**
 * Runs extraction on a ready model. The texts arrive validated (the gateway
 * checks the batch limit); the schema is normalised by the model itself, and a
 * schema it cannot read is the caller's error.
 */
export function extract(
  models: ExtractionModels,
  ref: ModelRef,
  texts: string[],
  schema: unknown,
  options: PredictOptions,
): { results: ExtractionResult[]; inputTokens: number } {
  const model = models.ready(ref);
  try {
    const results = texts.map((t) => model.extract(t, schema as never, options));
    return { results, inputTokens: texts.reduce((n, t) => n + countTokens(t), 0) };
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    throw errors.invalid(
      Reasons.VALIDATION_FAILED,
      `Invalid schema: ${err.message}`,
      err.issues.map((i) => ({ field: i.field, message: i.message })),
    );
  }
}
