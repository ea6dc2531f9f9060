import { z } from 'zod';
import type { EmbeddingsView, Inference } from '../../../../application/ports';
import type { Api } from '../../api';
import { authOf } from '../../auth';
import { invalidBody } from '../../validate';
import { ModelId } from './blocks';

/** Inputs per call, as OpenAI's embeddings endpoint allows. */
export const MAX_EMBEDDING_INPUTS = 2048;
/** Characters per input (OpenAI's 8,192-token cap is about 32,000 characters of English). */
export const MAX_EMBEDDING_CHARS = 50_000;

export const EmbeddingsBody = z
  .object({
    model: ModelId,
    input: z.union([
      z.string(),
      z.array(z.string()).min(1, 'must hold at least one text'),
      z.array(z.number()),
      z.array(z.array(z.number())),
    ]),
    encoding_format: z.enum(['float', 'base64']).optional(),
    dimensions: z.number().int().min(1).max(4096).optional(),
    user: z.string().max(256).optional(),
  })
  .openapi('EmbeddingsRequest');

/** The texts to embed, checked: 1–2,048 non-empty strings of at most 50,000 characters; token arrays are refused. */
export function textsOf(input: z.infer<typeof EmbeddingsBody>['input']): string[] {
  const texts = typeof input === 'string' ? [input] : input;
  if (texts.some((t) => typeof t !== 'string'))
    throw invalidBody('input', 'token arrays are not accepted (the models have their own tokenizer): send text');
  if (texts.length > MAX_EMBEDDING_INPUTS)
    throw invalidBody('input', `must hold at most ${MAX_EMBEDDING_INPUTS} texts`);
  (texts as string[]).forEach((t, i) => {
    const field = typeof input === 'string' ? 'input' : `input.${i}`;
    if (!t.length) throw invalidBody(field, 'must not be empty');
    if (t.length > MAX_EMBEDDING_CHARS) throw invalidBody(field, `must be at most ${MAX_EMBEDDING_CHARS} characters`);
  });
  return texts as string[];
}

/** A vector as OpenAI's base64 encoding: its float32 values, little-endian. */
function base64Of(values: number[]): string {
  const floats = Float32Array.from(values);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

/** OpenAI's embeddings list: one `embedding` object per text, float arrays or base64. */
export function embeddingsObject(out: EmbeddingsView, base64: boolean) {
  return {
    object: 'list' as const,
    data: out.vectors.map((v, index) => ({
      object: 'embedding' as const,
      index,
      embedding: base64 ? base64Of(v) : v,
    })),
    model: out.model,
    usage: { prompt_tokens: out.inputTokens, total_tokens: out.inputTokens },
  };
}

/**
 * POST /v1/embeddings (the `openai` client's `embeddings.create`): embeddings from an extraction model's encoder,
 * `whetstone-extract-base` or a trained extraction job, metered as extraction and not stored.
 */
export function registerEmbeddingsRoute(api: Api, inference: Inference): void {
  api.route(
    {
      method: 'post',
      path: '/v1/embeddings',
      summary:
        "OpenAI-compatible embeddings from an extraction model's encoder (`whetstone-extract-base` or a trained extraction job): unit-length vectors, float or base64",
      tag: 'Compatible surfaces',
      auth: 'key',
      body: EmbeddingsBody,
      response: {
        status: 200,
        description: '`{object: "list", data: [{object: "embedding", index, embedding}], model, usage}`',
      },
    },
    async ({ res, body }) => {
      const texts = textsOf(body.input);
      const out = await inference.embed(authOf(res).principal, {
        modelId: body.model,
        texts,
        dimensions: body.dimensions ?? 0,
      });
      return embeddingsObject(out, body.encoding_format === 'base64');
    },
  );
}
