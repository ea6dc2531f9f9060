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

/** Texts embedded between two turns of the event loop, so a large call does not hold up the server's other calls. */
const TEXTS_PER_TURN = 32;

/**
 * Each text's embedding from a ready model's encoder (the texts arrive validated: 1 to 2,048, at most 1 MiB in all).
 * A model with no encoder (a bundle of n-gram classifiers only) cannot embed: FailedPrecondition
 * EMBEDDINGS_NOT_SUPPORTED.
 */
export async function embed(models: ExtractionModels, ref: ModelRef, texts: string[]): Promise<EmbedOutput> {
  const model = models.ready(ref);
  if (!model.embed)
    throw errors.precondition(
      'EMBEDDINGS_NOT_SUPPORTED',
      `Model '${ref.modelId}' has no encoder to embed with (it holds only n-gram classifiers).`,
    );
  const vectors: Float32Array[] = [];
  for (let from = 0; from < texts.length; from += TEXTS_PER_TURN) {
    if (from) await new Promise((resolve) => setImmediate(resolve));
    vectors.push(...model.embed(texts.slice(from, from + TEXTS_PER_TURN)));
  }
  return {
    vectors,
    dimensions: vectors[0]?.length ?? 0,
    inputTokens: texts.reduce((n, t) => n + extractionTokens(t), 0),
  };
}
