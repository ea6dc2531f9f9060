import type { SamplingOptions } from '@whetstone/proto/common/v1';
import {
  ChatRole,
  FinishReason,
  ModelState,
  type CacheBreakpoint as PbCacheBreakpoint,
  type ChatTurn as PbChatTurn,
} from '@whetstone/proto/inference/v1';
import { type GenerateChunk, MAX_TOP_LOGPROBS, type TokenLogprob } from '@whetstone/ml';
import type { ChatTurn, GenerateEnd, GenerateOptions } from '../../application/generate';
import type { ModelRef } from '../../application/ports';
import type { ModelStatus } from '../../domain/model-cache';

/** Proto ⇄ the model-server's plain shapes; no rules live here. */

const STATE: Record<ModelStatus | 'absent', ModelState> = {
  absent: ModelState.UNSPECIFIED,
  warming: ModelState.WARMING,
  ready: ModelState.READY,
  failed: ModelState.FAILED,
};

export const stateToPb = (s: { status: ModelStatus | 'absent'; reason?: string }) => ({
  state: STATE[s.status],
  reason: s.reason ?? '',
});

export const refOf = (m: { modelId: string; bucket: string; key: string } | undefined): ModelRef => ({
  modelId: m?.modelId ?? '',
  bucket: m?.bucket ?? '',
  key: m?.key ?? '',
});

/** UNSPECIFIED is read as a user turn. */
export const chatTurnsOf = (turns: PbChatTurn[]): ChatTurn[] =>
  turns.map((m) => ({
    role: m.role === ChatRole.SYSTEM ? 'system' : m.role === ChatRole.ASSISTANT ? 'assistant' : 'user',
    content: m.content,
  }));

export const generateOptionsOf = (
  s: SamplingOptions | undefined,
  breakpoints: PbCacheBreakpoint[],
  signal: AbortSignal,
): GenerateOptions => ({
  temperature: s?.temperature ?? 0,
  top_p: s?.topP ?? 0,
  max_tokens: s?.maxTokens ?? 0,
  stop: s?.stop ?? [],
  seed: Number(s?.seed ?? 0n),
  top_k: Math.max(0, s?.topK ?? 0),
  frequency_penalty: s?.frequencyPenalty ?? 0,
  presence_penalty: s?.presencePenalty ?? 0,
  logit_bias: s?.logitBias ?? {},
  prompt_logprobs: s?.promptLogprobs ?? false,
  // Nothing generated: the prompt's log probabilities alone (echo with max_tokens 0).
  ...(s?.promptOnly ? { prompt_only: true } : {}),
  cache_breakpoints: breakpoints.map((b) => ({ turn: b.turn, chars: b.chars, ttl_seconds: b.ttlSeconds })),
  ...(s?.logprobs === undefined ? {} : { logprobs: Math.min(Math.max(s.logprobs, 0), MAX_TOP_LOGPROBS) }),
  signal,
});

/** A piece of a reply, with its tokens' log probabilities when they were asked for. */
const tokenLogprobToPb = (t: TokenLogprob) => ({
  token: t.token,
  bytes: Uint8Array.from(t.bytes),
  logprob: t.logprob,
  topLogprobs: t.top.map((o) => ({ token: o.token, bytes: Uint8Array.from(o.bytes), logprob: o.logprob })),
});

export const chunkToPb = (chunk: GenerateChunk) => ({
  text: chunk.text,
  logprobs: (chunk.logprobs ?? []).map(tokenLogprobToPb),
  promptLogprobs: (chunk.prompt_logprobs ?? []).map(tokenLogprobToPb),
});

export const finishToPb = (end: GenerateEnd) => ({
  text: '',
  finishReason: end.reason === 'stop' ? FinishReason.STOP : FinishReason.LENGTH,
  inputTokens: BigInt(end.inputTokens),
  outputTokens: BigInt(end.outputTokens),
  cacheReadTokens: BigInt(end.cacheReadTokens),
  cacheWriteTokens: BigInt(end.cacheWriteTokens),
  stopSequence: end.stopSequence,
});

/** The schema's JSON text; empty bytes stay empty ("use the trained schema"). */
export const schemaTextOf = (bytes: Uint8Array): string =>
  bytes.length ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8') : '';

/** One JSON array of the call's results, as the router passes it on. */
export const resultsToPb = (results: Record<string, unknown>[]): Uint8Array => Buffer.from(JSON.stringify(results));
