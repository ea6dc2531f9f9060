import { AppError } from '@whetstone/errors';
import type { UpstreamEmbedCall } from '../../application/ports';
import { embeddingsBody, embeddingsOf } from './embeddings';

const call = (over: Partial<UpstreamEmbedCall> = {}): UpstreamEmbedCall => ({
  modelId: 'embed-s',
  model: { provider: 'oai', model: 'text-embed-s', family: 'gpt-4', minCacheableTokens: 0, defaultMaxTokens: 0 },
  texts: ['a', 'bb'],
  dimensions: 0,
  ...over,
});

describe("OpenAI's embeddings dialect", () => {
  it('when texts are sent, then the body names the provider model, asks for floats, and carries dimensions only when asked', () => {
    expect(embeddingsBody(call())).toEqual({ model: 'text-embed-s', input: ['a', 'bb'], encoding_format: 'float' });
    expect(embeddingsBody(call({ dimensions: 64 }))).toMatchObject({ dimensions: 64 });
  });

  it('when the provider lists vectors out of order, then they come back in the texts’ order with its token count', () => {
    const reply = {
      data: [
        { index: 1, embedding: [0, 1] },
        { index: 0, embedding: [1, 0] },
      ],
      usage: { prompt_tokens: 3 },
    };
    expect(embeddingsOf(reply, call())).toEqual({
      vectors: [
        [1, 0],
        [0, 1],
      ],
      inputTokens: 3,
    });
    const { usage: _, ...uncounted } = reply;
    expect(embeddingsOf(uncounted, call()).inputTokens).toBe(2);
  });

  it('when a reply misses a vector, repeats an index, mixes lengths or is not numbers, then it is the provider’s fault (Unavailable)', () => {
    const replies = [
      { data: [{ index: 0, embedding: [1] }] },
      {
        data: [
          { index: 0, embedding: [1] },
          { index: 0, embedding: [2] },
        ],
      },
      {
        data: [
          { index: 0, embedding: [1] },
          { index: 1, embedding: [1, 2] },
        ],
      },
      {
        data: [
          { index: 0, embedding: ['x'] },
          { index: 1, embedding: [1] },
        ],
      },
      { error: 'nope' },
      null,
    ];
    for (const reply of replies) {
      const err = (() => {
        try {
          embeddingsOf(reply, call());
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).kind).toBe('Unavailable');
    }
  });
});
