import OpenAI from 'openai';
import { eventually } from '@whetstone/testing';
import { apiClient, type Job } from './training-helpers';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/** A small classification set: two intents, enough rows to train in seconds. */
const INTENTS = Array.from({ length: 16 }, (_, i) => [
  { text: `please refund order ${i}, it arrived broken`, label: 'refund', task: 'intent' },
  { text: `where is my parcel number ${i}, it has not arrived`, label: 'delivery', task: 'intent' },
]).flat();

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

/**
 * OpenAI's embeddings endpoint through the `openai` client against the whole system: the base encoder and a
 * trained classification job embed (float and base64 alike), training moves same-intent texts together, the usage
 * is billed, and the client's mistakes are 4xx in OpenAI's envelope.
 */
describe('embeddings (openai client), end to end', () => {
  let system: RunningSystem;
  let openai: OpenAI;
  let key = '';
  const api = apiClient(
    () => system.baseUrl,
    () => key,
  );
  let classifier = '';

  beforeAll(async () => {
    system = await startSystem();
    ({ key } = await signUpWithKey(system.baseUrl, 'embeddings'));
    openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    await api.uploadReady(
      { name: 'intents', type: 'classification', format: 'jsonl', filename: 'intents.jsonl' },
      Buffer.from(INTENTS.map((r) => JSON.stringify(r)).join('\n')),
    );
    const res = await api.post('/core/training-jobs', {
      base_model: 'whetstone-extract-base',
      datasets: [{ name: 'intents' }],
      training_type: 'lora',
      nr_epochs: 4,
    });
    classifier = ((await res.json()) as Job).id;
    await api.until(classifier, ['complete'], 240_000);
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
  }, 60_000);

  it('when the base encoder embeds texts, then each is a unit vector in order, the same as floats or base64', async () => {
    const input = [
      'Ada Lovelace wrote the first program.',
      'My card has not arrived.',
      'Ada Lovelace wrote the first program.',
    ];
    const viaBase64 = await openai.embeddings.create({ model: 'whetstone-extract-base', input });
    const viaFloat = await openai.embeddings.create({
      model: 'whetstone-extract-base',
      input,
      encoding_format: 'float',
    });
    expect(viaBase64).toMatchObject({ object: 'list', model: 'whetstone-extract-base' });
    expect(viaBase64.data.map((d) => [d.object, d.index])).toEqual([
      ['embedding', 0],
      ['embedding', 1],
      ['embedding', 2],
    ]);
    const [a, b, again] = viaBase64.data.map((d) => d.embedding);
    expect(a).toHaveLength(228);
    expect(dot(a!, a!)).toBeCloseTo(1, 4);
    expect(again).toEqual(a);
    expect(dot(a!, b!)).toBeLessThan(0.999);
    viaFloat.data.forEach((d, i) => expect(dot(d.embedding, viaBase64.data[i]!.embedding)).toBeCloseTo(1, 5));
    expect(viaBase64.usage.prompt_tokens).toBeGreaterThan(10);
    expect(viaBase64.usage.total_tokens).toBe(viaBase64.usage.prompt_tokens);
  });

  it('when a trained classification job embeds, then its own encoder answers, in 228 unit-length dimensions', async () => {
    const input = ['please refund my order, the lamp arrived broken', 'where is my parcel, it has not arrived yet'];
    const trained = await openai.embeddings.create({ model: classifier, input });
    const base = await openai.embeddings.create({ model: 'whetstone-extract-base', input });
    expect(trained.model).toBe(classifier);
    for (const [i, d] of trained.data.entries()) {
      expect(d.embedding).toHaveLength(228);
      expect(dot(d.embedding, d.embedding)).toBeCloseTo(1, 4);
      // The adapter changed the encoder, so the same text lands elsewhere than with the base.
      expect(dot(d.embedding, base.data[i]!.embedding)).toBeLessThan(0.99999);
    }
  });

  it('when embeddings are made, then their usage is billed', async () => {
    const balance = async () =>
      ((await (await api.get('/billing/usage')).json()) as { balance_credits: number }).balance_credits;
    const before = await balance();
    await openai.embeddings.create({ model: 'whetstone-extract-base', input: 'a few words to bill '.repeat(50) });
    await eventually(async () => (await balance()) < before, 30_000);
  });

  it('when the request is wrong, then the 4xx names it in OpenAI’s envelope', async () => {
    const failure = async (body: Record<string, unknown>) => {
      const request = { model: 'whetstone-extract-base', input: 'hello', ...body } as OpenAI.EmbeddingCreateParams;
      const err = (await openai.embeddings.create(request).catch((e: unknown) => e)) as InstanceType<
        typeof OpenAI.APIError
      >;
      expect(err).toBeInstanceOf(OpenAI.APIError);
      return { body, status: err.status, param: err.param };
    };
    const cases: [Record<string, unknown>, number, string | null][] = [
      [{ input: '' }, 422, 'input'],
      [{ input: ['ok', ''] }, 422, 'input.1'],
      [{ input: [1, 2, 3] }, 422, 'input'],
      [{ input: Array.from({ length: 2049 }, () => 'x') }, 422, 'input'],
      [{ dimensions: 64 }, 422, 'dimensions'],
      [{ model: 'no-such-model' }, 404, null],
      [{ model: 'whetstone-decoder-base' }, 409, null],
    ];
    for (const [body, status, param] of cases) expect(await failure(body)).toEqual({ body, status, param });
  });
});
