import type { ChatDone, ChatUsageView } from '../../../../application/ports';

/** The one usage record of a call, rendered in each surface's shape (docs/api.md, "Usage on the four surfaces"). */

const promptTokens = (u: ChatUsageView) => u.input_tokens + u.cache_read_tokens + u.cache_write_tokens;

/** Chat completions and completions: prompt_tokens counts every input class; details are subsets of it. */
export function openAiUsage(u: ChatUsageView) {
  const prompt = promptTokens(u);
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output_tokens,
    total_tokens: prompt + u.output_tokens,
    prompt_tokens_details: { cached_tokens: u.cache_read_tokens, cache_write_tokens: u.cache_write_tokens },
    completion_tokens_details: { reasoning_tokens: u.reasoning_tokens },
  };
}

/** Responses: input_tokens counts every input class, like prompt_tokens. */
export function responsesUsage(u: ChatUsageView) {
  const input = promptTokens(u);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cache_read_tokens, cache_write_tokens: u.cache_write_tokens },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens },
    total_tokens: input + u.output_tokens,
  };
}

/** Messages: input_tokens is the non-cached input only; the cache classes are reported beside it. */
export function messagesUsage(u: ChatUsageView) {
  return {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_write_tokens,
    cache_read_input_tokens: u.cache_read_tokens,
    output_tokens: u.output_tokens,
  };
}

/** The service extension: set only when persistence ran (the inference has an id), else null. */
export function xService(done: ChatDone) {
  if (!done.inferenceId) return null;
  return { inference_id: done.inferenceId, routed_model: done.routedModel, savings: done.savings };
}

/** The usage of several calls answered as one (OpenAI's `n` choices): each class added up. */
export function totalUsage(views: ChatUsageView[]): ChatUsageView {
  const sum = (pick: (u: ChatUsageView) => number) => views.reduce((n, u) => n + pick(u), 0);
  return {
    input_tokens: sum((u) => u.input_tokens),
    cache_read_tokens: sum((u) => u.cache_read_tokens),
    cache_write_tokens: sum((u) => u.cache_write_tokens),
    output_tokens: sum((u) => u.output_tokens),
    reasoning_tokens: sum((u) => u.reasoning_tokens),
    // Credits are kept to the micro-credit; the sum of floats is rounded back to it.
    cost_credits: Math.round(sum((u) => u.cost_credits) * 1e6) / 1e6,
  };
}
