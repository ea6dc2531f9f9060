/**
 * OpenAI's embeddings dialect: an embeddings call as a `POST /v1/embeddings`
 * body (float vectors, the caller's `dimensions` when given), and the reply as
 * one vector per text in the texts' order, whatever order the provider lists them in.
 */
import type { UpstreamEmbedCall, UpstreamEmbeddings } from '../../application/ports';
import { approxTokens } from '../../domain/chat';
import { upstreamFailure } from './http';

export function embeddingsBody(call: UpstreamEmbedCall): Record<string, unknown> {
  return {
    model: call.model.model,
    input: call.texts,
    encoding_format: 'float',
    ...(call.dimensions ? { dimensions: call.dimensions } : {}),
  };
}

interface Reply {
  data?: { index?: unknown; embedding?: unknown }[];
  usage?: { prompt_tokens?: unknown } | null;
}

const isVector = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/**
 * The vectors of a reply, by `index`; a reply without exactly one vector of numbers per text, all of one length,
 * is the provider's fault (502). Tokens are the provider's `usage.prompt_tokens` (4 characters a token if absent).
 */
export function embeddingsOf(reply: unknown, call: UpstreamEmbedCall): UpstreamEmbeddings {
  const { data, usage } = (reply ?? {}) as Reply;
  // Not `new Array(n)`: `every` below skips the holes of a sparse array.
  const vectors = Array.from<number[] | undefined>({ length: call.texts.length });
  for (const item of Array.isArray(data) ? data : []) {
    const index = typeof item.index === 'number' ? item.index : -1;
    if (index >= 0 && index < vectors.length && isVector(item.embedding)) vectors[index] = item.embedding;
  }
  const complete = vectors.every((v) => v !== undefined && v.length === vectors[0]!.length);
  if (!complete || !Array.isArray(data) || data.length !== call.texts.length)
    throw upstreamFailure(502, new Headers(), 'malformed embeddings reply', call.modelId);
  const counted = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : undefined;
  const estimate = call.texts.reduce((n, t) => n + approxTokens(t), 0);
  return { vectors: vectors as number[][], inputTokens: Math.max(0, Math.round(counted ?? estimate)) };
}
