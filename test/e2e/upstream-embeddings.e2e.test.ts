import OpenAI from 'openai';
import { fakeEmbedding } from '@whetstone/testing';
import { EMBEDDING_MODEL, OPENAI_MODEL, postAs, startWithUpstreams, type UpstreamSystem } from './compat-helpers';

/**
 * An operator's upstream embedding model (CATALOG_UPSTREAMS `task: "embedding"`) through `/v1/embeddings`, end to
 * end: the official client asks Whetstone, the fake OpenAI-compatible provider receives OpenAI's embeddings body
 * under the provider's model name, and its vectors, in input order, and its token count come back.
 */
describe('upstream embedding models, end to end', () => {
  let running: UpstreamSystem;
  let openai: OpenAI;
  const post = postAs(() => running);

  beforeAll(async () => {
    running = await startWithUpstreams('upstream-embeddings');
    ({ openai } = running);
  }, 300_000);

  afterAll(async () => running?.stop(), 60_000);

  it('when texts are embedded with the upstream model, then the provider gets them as sent and its vectors come back in order, with its token count', async () => {
    const texts = ['hello there', 'general kenobi!'];
    const answer = await openai.embeddings.create({ model: EMBEDDING_MODEL, input: texts });
    const sent = running.fakeOpenAI.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.body).toEqual({ model: 'e2e-embedder', input: texts, encoding_format: 'float' });
    expect(answer.model).toBe(EMBEDDING_MODEL);
    expect(answer.data.map((d) => d.index)).toEqual([0, 1]);
    answer.data.forEach((d, i) => {
      const expected = fakeEmbedding(texts[i]!);
      expect(d.embedding).toHaveLength(expected.length);
      d.embedding.forEach((v, k) => expect(v).toBeCloseTo(expected[k]!, 6));
    });
    // The fake counts a token per word: 2 + 2.
    expect(answer.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
  });

  it('when dimensions are asked for, then the provider gets them and the vectors have that length', async () => {
    const answer = await openai.embeddings.create({ model: EMBEDDING_MODEL, input: 'hello', dimensions: 4 });
    expect(running.fakeOpenAI.requests.at(-1)!.body).toMatchObject({ dimensions: 4 });
    expect(answer.data[0]!.embedding).toHaveLength(4);
  });

  it('when the embedding model is listed, chatted with, or its provider fails, then /v1/models shows it, chat is 409, and the failure keeps its meaning', async () => {
    const models = (await openai.models.list()).data.map((m) => m.id);
    expect(models).toEqual(expect.arrayContaining([EMBEDDING_MODEL, OPENAI_MODEL]));
    const chat = await post('/v1/chat/completions', {
      model: EMBEDDING_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { error } = (await chat.json()) as { error: { message: string } };
    expect(chat.status).toBe(409);
    expect(error.message).toMatch(/is an embedding model: call it through POST \/v1\/embeddings/);
    running.fakeOpenAI.behave({ kind: 'status', status: 429, retryAfterSeconds: 3 }, 1);
    const limited = await post('/v1/embeddings', { model: EMBEDDING_MODEL, input: 'x' });
    expect(limited.status).toBe(429);
    running.fakeOpenAI.behave({ kind: 'status', status: 400, message: 'input too long for e2e-embedder' }, 1);
    const rejected = await post('/v1/embeddings', { model: EMBEDDING_MODEL, input: 'x' });
    expect(rejected.status).toBe(422);
    expect(((await rejected.json()) as { error: { message: string } }).error.message).toMatch(/input too long/);
  });

  it('when a client calls an OpenAI API that is not served, then it gets a 404 in OpenAI’s envelope it can read', async () => {
    const moderation = await openai.moderations.create({ input: 'hello' }).catch((e: unknown) => e);
    expect(moderation).toBeInstanceOf(OpenAI.NotFoundError);
    expect((moderation as Error).message).toMatch(/No route for POST \/v1\/moderations/);
    const webhooks = await post('/v1/webhook_endpoints', { name: 'x', url: 'https://example.com', event_types: [] });
    expect(webhooks.status).toBe(404);
    const { error } = (await webhooks.json()) as { error: { message: string } };
    expect(error.message).toBe('No route for POST /v1/webhook_endpoints');
  });
});
