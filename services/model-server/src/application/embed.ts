import { errors } from '@whetstone/errors';
import { extractionTokens } from '@whetstone/ml';
import type { ExtractionModels } from './extraction-models';
import type { ModelRef } from './ports';

export interface EmbedOutput {
  vectors: Float32Array[];
  dimensions: number;
  /** Word-and-punctuation tokens read, as extraction counts them (the unit embeddings are priced in). */
  inputTokens: number;
}

/**
 * Each text's embedding from a ready model's encoder (the texts arrive validated: 1 to 2,048). A model with no
 * encoder (a bundle of n-gram classifiers only) cannot embed: FailedPrecondition EMBEDDINGS_NOT_SUPPORTED.
 */
export function embed(models: ExtractionModels, ref: ModelRef, texts: string[]): EmbedOutput {
  const model = models.ready(ref);
  if (!model.embed)
    throw errors.precondition(
      'EMBEDDINGS_NOT_SUPPORTED',
      `Model '${ref.modelId}' has no encoder to embed with (it holds only n-gram classifiers).`,
    );
  const vectors = model.embed(texts);
  return {
    vectors,
    dimensions: vectors[0]?.length ?? 0,
    inputTokens: texts.reduce((n, t) => n + extractionTokens(t), 0),
  };
}
