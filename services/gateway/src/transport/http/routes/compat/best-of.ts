import type { ChatReply } from './chat-run';

/**
 * OpenAI's legacy `best_of`: each prompt's `best_of` candidates are generated (seeds seed … seed + best_of − 1,
 * like `n`'s choices) and the `n` with the highest log probability per token answer, best first. A candidate with
 * no tokens has no such mean and ranks last; equal means keep the candidates' order.
 */
export function meanLogprob(reply: ChatReply): number {
  if (!reply.logprobs.length) return -Infinity;
  return reply.logprobs.reduce((sum, t) => sum + t.logprob, 0) / reply.logprobs.length;
}

/** The `n` best of each prompt's `bestOf` candidates (the replies hold them prompt by prompt), prompt by prompt. */
export function bestReplies(replies: ChatReply[], bestOf: number, n: number): ChatReply[] {
  const out: ChatReply[] = [];
  for (let start = 0; start < replies.length; start += bestOf) {
    const candidates = replies.slice(start, start + bestOf).map((reply, i) => ({ reply, i, mean: meanLogprob(reply) }));
    candidates.sort((a, b) => b.mean - a.mean || a.i - b.i);
    out.push(...candidates.slice(0, n).map((c) => c.reply));
  }
  return out;
}
