import { bestReplies, meanLogprob } from './best-of';
import type { ChatReply } from './chat-run';

const reply = (id: string, logprobs: number[]): ChatReply =>
  ({
    responseId: id,
    text: id,
    reasoning: '',
    toolCalls: [],
    logprobs: logprobs.map((logprob) => ({ token: 'x', logprob, bytes: [0x78], top_logprobs: [] })),
    done: {} as ChatReply['done'],
  }) as ChatReply;

describe("OpenAI's best_of", () => {
  it('when candidates are ranked, then the highest log probability per token wins, an empty one ranks last, ties keep order', () => {
    expect(meanLogprob(reply('a', [-1, -3]))).toBe(-2);
    expect(meanLogprob(reply('empty', []))).toBe(-Infinity);
    // Two prompts of three candidates each; n = 2.
    const replies = [
      reply('p0-a', [-2]),
      reply('p0-b', [-0.5, -0.5]),
      reply('p0-c', []),
      reply('p1-a', [-1]),
      reply('p1-b', [-1]),
      reply('p1-c', [-0.1, -5]),
    ];
    expect(bestReplies(replies, 3, 2).map((r) => r.responseId)).toEqual(['p0-b', 'p0-a', 'p1-a', 'p1-b']);
  });
});
