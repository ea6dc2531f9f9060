import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { eventually, fixtureDataset } from '@whetstone/testing';
import { apiClient, type Job } from './training-helpers';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/** A small classification set written here: two intents, enough rows to pass validation and train in seconds. */
const INTENTS = Array.from({ length: 16 }, (_, i) => [
  { text: `please refund order ${i}, it arrived broken`, label: 'refund', task: 'intent' },
  { text: `where is my parcel number ${i}, it has not arrived`, label: 'delivery', task: 'intent' },
]).flat();

/**
 * Trained models through the compatible surfaces, end to end: a LoRA decoder
 * job answers chat completions, completions, responses and messages, and a
 * trained extraction job is 425 while it loads, which the openai client
 * retries to success.
 */
describe('trained models through the compatible surfaces, end to end', () => {
  let system: RunningSystem;
  let key = '';
  const api = apiClient(
    () => system.baseUrl,
    () => key,
  );
  let decoder = '';
  let classifier = '';

  async function upload(name: string, type: string, body: string | Buffer): Promise<void> {
    const res = await api.post('/core/datasets/upload/url', {
      dataset_name: name,
      dataset_type: type,
      format: 'jsonl',
      filename: `${name}.jsonl`,
    });
    const { upload_url } = (await res.json()) as { upload_url: string };
    expect((await fetch(upload_url, { method: 'PUT', body })).status).toBe(200);
    expect((await api.post('/core/datasets/upload/process', { dataset_name: name })).status).toBe(202);
    await eventually(
      async () => ((await (await api.get(`/core/datasets/${name}/1`)).json()) as { status: string }).status === 'ready',
      60_000,
    );
  }

  async function train(body: Record<string, unknown>): Promise<string> {
    const res = await api.post('/core/training-jobs', { training_type: 'lora', nr_epochs: 2, ...body });
    expect(res.status).toBe(200);
    return ((await res.json()) as Job).id;
  }

  beforeAll(async () => {
    system = await startSystem();
    ({ key } = await signUpWithKey(system.baseUrl, 'compat-trained'));
    await upload('greetings', 'generation', readFileSync(fixtureDataset('chat/greetings.jsonl')));
    await upload('intents', 'classification', INTENTS.map((r) => JSON.stringify(r)).join('\n'));
    decoder = await train({
      base_model: 'whetstone-decoder-base',
      datasets: [{ name: 'greetings' }],
      learning_rate: 0.01,
    });
    classifier = await train({ base_model: 'whetstone-extract-base', datasets: [{ name: 'intents' }] });
    await api.until(decoder, ['complete'], 240_000);
    await api.until(classifier, ['complete'], 240_000);
  }, 600_000);

  afterAll(async () => {
    await system?.stop();
  }, 60_000);

  it('when a trained extraction job is still loading, then the openai client retries the 425 and gets the JSON result', async () => {
    const statuses: number[] = [];
    const client = new OpenAI({
      apiKey: key,
      baseURL: `${system.baseUrl}/v1`,
      maxRetries: 5,
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        statuses.push(res.status);
        return res;
      },
    });
    const json = await client.chat.completions.create({
      model: classifier,
      messages: [{ role: 'user', content: 'please refund order 99, it arrived broken' }],
      // @ts-expect-error Whetstone's extension field
      schema: { classifications: [{ task: 'intent', labels: ['refund', 'delivery'] }] },
    });
    expect(statuses[0]).toBe(425);
    expect(statuses.at(-1)).toBe(200);
    expect(JSON.parse(json.choices[0]!.message.content!)).toEqual({ intent: 'refund' });
  });

  it('when the decoder job is called through each surface, then each answers with text, a finish reason and usage', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    const messages = [{ role: 'user' as const, content: 'hi, I am Ada' }];
    const chat = await openai.chat.completions.create({ model: decoder, messages, max_tokens: 16, seed: 1 });
    expect(chat.choices[0]!.message.content).toEqual(expect.any(String));
    expect(['stop', 'length']).toContain(chat.choices[0]!.finish_reason);
    expect(chat.usage).toMatchObject({ completion_tokens: expect.any(Number), prompt_tokens: expect.any(Number) });
    const streamed = await openai.chat.completions
      .stream({ model: decoder, messages, max_tokens: 16, seed: 1 })
      .finalChatCompletion();
    expect(streamed.choices[0]!.message.content).toBe(chat.choices[0]!.message.content);
    expect(streamed.usage).toEqual(chat.usage);

    const completion = await openai.completions.create({
      model: decoder,
      prompt: 'hi, I am Ada',
      max_tokens: 16,
      seed: 1,
    });
    expect(completion.choices[0]!.text).toBe(chat.choices[0]!.message.content);
    const response = await openai.responses.create({
      model: decoder,
      input: 'hi, I am Ada',
      max_output_tokens: 16,
      seed: 1,
    } as never);
    expect(response.output_text).toBe(chat.choices[0]!.message.content);

    const anthropic = new Anthropic({ apiKey: key, baseURL: system.baseUrl });
    const message = await anthropic.messages.create({ model: decoder, max_tokens: 16, messages, seed: 1 } as never);
    expect(message.content).toEqual([{ type: 'text', text: chat.choices[0]!.message.content }]);
    expect(message.usage.output_tokens).toBe(chat.usage!.completion_tokens);
  });
  it('when the decoder job gets a frequency penalty, then its greedy reply changes, and top_k 1 samples the greedy reply', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    const base = { model: decoder, messages: [{ role: 'user' as const, content: 'hi, I am Ada' }], max_tokens: 24 };
    const greedy = await openai.chat.completions.create({ ...base, temperature: 0 });
    const penalized = await openai.chat.completions.create({ ...base, temperature: 0, frequency_penalty: 2 });
    expect(penalized.choices[0]!.message.content).not.toBe(greedy.choices[0]!.message.content);
    const anthropic = new Anthropic({ apiKey: key, baseURL: system.baseUrl });
    const topK = await anthropic.messages.create({
      model: decoder,
      max_tokens: 24,
      messages: base.messages,
      temperature: 1,
      top_k: 1,
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(topK.content).toEqual([{ type: 'text', text: greedy.choices[0]!.message.content }]);
    // A stop sequence from inside the greedy reply ends it there, and Anthropic's fields name it.
    const text = greedy.choices[0]!.message.content!;
    const stop = text.slice(3, 5);
    const stopped = await anthropic.messages.create({
      model: decoder,
      max_tokens: 24,
      messages: base.messages,
      temperature: 0,
      stop_sequences: [stop],
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: stop });
    expect(stopped.content).toEqual([{ type: 'text', text: text.slice(0, text.indexOf(stop)) }]);
  });

  it('when the decoder job gets logit_bias, then a banned byte never starts the reply, a favoured byte is all it says, and an id past its 260 tokens is 422 naming logit_bias', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    const base = { model: decoder, messages: [{ role: 'user' as const, content: 'hi, I am Ada' }], temperature: 0 };
    const greedy = (await openai.chat.completions.create({ ...base, max_tokens: 8 })).choices[0]!.message.content!;
    const first = greedy.charCodeAt(0);
    const banned = await openai.chat.completions.create({ ...base, max_tokens: 8, logit_bias: { [first]: -100 } });
    expect(banned.choices[0]!.message.content!.charCodeAt(0)).not.toBe(first);
    const favoured = await openai.completions.create({
      model: decoder,
      prompt: 'hi',
      max_tokens: 4,
      logit_bias: { 120: 100 },
    });
    expect(favoured.choices[0]).toMatchObject({ text: 'xxxx', finish_reason: 'length' });
    const refused = await openai.chat.completions
      .create({ ...base, max_tokens: 4, logit_bias: { 50256: -100 } })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused).toMatchObject({ status: 422, param: 'logit_bias' });
    expect((refused as Error).message).toMatch(/Invalid key in 'logit_bias': 50256\. Maximum value is 259/);
  });

  it('when a completion echoes its prompt, then the prompt comes first, scored token by token with logprobs (none for its first), alike in JSON and stream; max_tokens 0 scores the prompt alone', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    const prompt = 'hi, I am Ada';
    const scored = await openai.completions.create({ model: decoder, prompt, max_tokens: 0, echo: true, logprobs: 1 });
    const only = scored.choices[0]!;
    expect(only).toMatchObject({ text: prompt, finish_reason: 'length' });
    expect(only.logprobs!.tokens!.join('')).toBe(prompt);
    expect(only.logprobs!.text_offset).toEqual([...prompt].map((_, i) => i));
    expect(only.logprobs!.token_logprobs![0]).toBeNull();
    expect(only.logprobs!.top_logprobs![0]).toBeNull();
    expect(only.logprobs!.token_logprobs!.slice(1).every((l) => typeof l === 'number' && l <= 0)).toBe(true);
    expect(scored.usage).toMatchObject({ prompt_tokens: prompt.length, completion_tokens: 0 });

    const asked = { model: decoder, prompt, max_tokens: 6, temperature: 0, logprobs: 1 } as const;
    const plain = (await openai.completions.create(asked)).choices[0]!;
    const echoed = (await openai.completions.create({ ...asked, echo: true })).choices[0]!;
    expect(echoed.text).toBe(prompt + plain.text);
    expect(echoed.logprobs!.tokens).toEqual([...only.logprobs!.tokens!, ...plain.logprobs!.tokens!]);
    expect(echoed.logprobs!.token_logprobs!.slice(0, prompt.length)).toEqual(only.logprobs!.token_logprobs);
    expect(echoed.logprobs!.text_offset!.slice(prompt.length)).toEqual(plain.logprobs!.text_offset);
    let streamed = '';
    const streamedTokens: string[] = [];
    for await (const chunk of await openai.completions.create({ ...asked, echo: true, stream: true })) {
      streamed += chunk.choices[0]?.text ?? '';
      streamedTokens.push(...(chunk.choices[0]?.logprobs?.tokens ?? []));
    }
    expect(streamed).toBe(echoed.text);
    expect(streamedTokens).toEqual(echoed.logprobs!.tokens);
    const noEcho = await openai.completions.create({ model: decoder, prompt, max_tokens: 0 }).catch((e: unknown) => e);
    expect(noEcho).toMatchObject({ status: 422, param: 'max_tokens' });
  });

  it('when best_of is above n, then the n candidates with the highest log probability per token answer, every candidate billed; misuse is 422 by name', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    const asked = { model: decoder, prompt: 'hi, I am Ada', max_tokens: 8, temperature: 1, seed: 5 } as const;
    // The four candidates are the n: 4 choices of the same seeds; rank them by mean log probability here.
    const all = await openai.completions.create({ ...asked, n: 4, logprobs: 0 });
    const mean = (c: (typeof all.choices)[number]) => {
      const l = c.logprobs!.token_logprobs as number[];
      return l.length ? l.reduce((a, b) => a + b, 0) / l.length : -Infinity;
    };
    const ranked = [...all.choices].sort((a, b) => mean(b) - mean(a) || a.index - b.index);
    const best = await openai.completions.create({ ...asked, n: 2, best_of: 4 });
    expect(best.choices.map((c) => c.text)).toEqual(ranked.slice(0, 2).map((c) => c.text));
    expect(best.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(best.choices[0]!.logprobs).toBeNull();
    expect(best.usage).toEqual(all.usage);
    for (const [extra, param] of [
      [{ n: 3, best_of: 2 }, 'best_of'],
      [{ best_of: 2, stream: true }, 'best_of'],
      [{ suffix: ' the end' }, 'suffix'],
    ] as const) {
      const refused = await openai.completions.create({ ...asked, ...extra } as never).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 422, param });
    }
  });

  it('when the decoder job is asked for token log probabilities, then every byte of its reply has one, the same in JSON and stream, and completions and responses give them in their own shapes', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    const asked = {
      model: decoder,
      messages: [{ role: 'user' as const, content: 'hi, I am Ada' }],
      max_tokens: 16,
      seed: 1,
      logprobs: true,
      top_logprobs: 3,
    };
    const chat = await openai.chat.completions.create(asked);
    const text = chat.choices[0]!.message.content!;
    const content = chat.choices[0]!.logprobs!.content!;
    // The tokens are the reply's bytes: decoded (a byte sequence that is not UTF-8 as U+FFFD) they are its text.
    expect(new TextDecoder().decode(Uint8Array.from(content.flatMap((t) => t.bytes ?? [])))).toBe(text);
    for (const t of content) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top_logprobs).toHaveLength(3);
      expect(t.top_logprobs[0]!.logprob).toBeGreaterThanOrEqual(t.logprob);
    }
    const streamed = [];
    for await (const chunk of await openai.chat.completions.create({ ...asked, stream: true }))
      streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    expect(streamed).toEqual(content);

    const prompt = 'hi, I am Ada';
    const completion = await openai.completions.create({
      model: decoder,
      prompt,
      max_tokens: 16,
      seed: 1,
      logprobs: 2,
    });
    const legacy = completion.choices[0]!.logprobs!;
    expect(legacy.tokens).toEqual(content.map((t) => t.token));
    expect(legacy.token_logprobs).toEqual(content.map((t) => t.logprob));
    expect(legacy.top_logprobs!.map((o) => Object.keys(o).length)).toEqual(content.map(() => 2));
    expect(legacy.text_offset![0]).toBe(prompt.length);

    const response = await openai.responses.create({
      model: decoder,
      input: prompt,
      max_output_tokens: 16,
      seed: 1,
      include: ['message.output_text.logprobs'],
      top_logprobs: 3,
    } as never);
    const part = (response.output[0] as { content: { logprobs: unknown[] }[] }).content[0]!;
    expect(part.logprobs).toEqual(content);
  });

  it('when n choices are asked of the decoder job, then choice i is the reply of seed + i, usage adds them up, the stream carries each by index, several prompts answer each in turn, and n with store or above 8 is 422', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    const asked = { model: decoder, messages: [{ role: 'user' as const, content: 'hi, I am Ada' }], max_tokens: 16 };
    const one = (seed: number) => openai.chat.completions.create({ ...asked, seed });
    const singles = [await one(1), await one(2), await one(3)];
    const three = await openai.chat.completions.create({ ...asked, seed: 1, n: 3 });
    const texts = singles.map((c) => c.choices[0]!.message.content);
    expect(three.choices.map((c) => [c.index, c.message.content])).toEqual(texts.map((t, i) => [i, t]));
    const sum = (pick: (u: OpenAI.CompletionUsage) => number) => singles.reduce((n, c) => n + pick(c.usage!), 0);
    expect(three.usage).toMatchObject({
      prompt_tokens: sum((u) => u.prompt_tokens),
      completion_tokens: sum((u) => u.completion_tokens),
    });
    const streamed = await openai.chat.completions.stream({ ...asked, seed: 1, n: 3 }).finalChatCompletion();
    expect(streamed.choices.map((c) => c.message.content)).toEqual(texts);
    expect(streamed.usage).toEqual(three.usage);
    // Several prompts: each prompt's n choices in turn, with offsets from each one's own prompt.
    const prompts = ['hi, I am Ada', 'hello'];
    const ask = { model: decoder, max_tokens: 16, seed: 1, logprobs: 0 };
    const completions = await openai.completions.create({ ...ask, prompt: prompts, n: 2 });
    const hello = await openai.completions.create({ ...ask, prompt: 'hello', n: 2 });
    expect(completions.choices.map((c) => [c.index, c.text])).toEqual(
      [...texts.slice(0, 2), ...hello.choices.map((c) => c.text)].map((t, i) => [i, t]),
    );
    expect(completions.choices.map((c) => c.logprobs!.text_offset![0])).toEqual([12, 12, 5, 5]);
    const many = await fetch(`${system.baseUrl}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ ...ask, prompt: [...prompts, 'x'], n: 6 }),
    });
    expect([many.status, ((await many.json()) as { error: { param: string } }).error.param]).toEqual([422, 'n']);

    for (const extra of [{ n: 2, store: true }, { n: 9 }]) {
      const res = await fetch(`${system.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ ...asked, ...extra }),
      });
      const { error } = (await res.json()) as { error: { param: string } };
      expect([res.status, error.param]).toEqual([422, 'n']);
    }
  });

  it('when the decoder job gets the same cached prompt twice, then usage shows a write then a read, alike in stream and JSON', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 5 });
    // The built-in decoder reads at most its last 63 prompt bytes and caches prefixes of 16 or more: a short prompt
    // (names of one length, so the stream's prompt is as long as the JSON's).
    const request = (tag: string) =>
      ({
        model: decoder,
        max_tokens: 8,
        seed: 1,
        messages: [
          {
            role: 'system',
            content: [{ type: 'text', text: `Greet ${tag} warmly.`, cache_control: { type: 'ephemeral' } }],
          },
          { role: 'user', content: 'hi, I am Ada' },
        ],
      }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const written = await openai.chat.completions.create(request('Ann'));
    const read = await openai.chat.completions.create(request('Ann'));
    expect(written.usage!.prompt_tokens_details).toMatchObject({
      cached_tokens: 0,
      cache_write_tokens: expect.any(Number),
    });
    expect(written.usage!.prompt_tokens_details!.cache_write_tokens).toBeGreaterThan(0);
    expect(read.usage!.prompt_tokens_details).toEqual({
      cached_tokens: written.usage!.prompt_tokens_details!.cache_write_tokens,
      cache_write_tokens: 0,
    });
    expect(read.choices[0]!.message.content).toBe(written.choices[0]!.message.content);

    const stream = (tag: string) =>
      openai.chat.completions.stream({ ...request(tag), stream: true }).finalChatCompletion();
    const input = (u: OpenAI.CompletionUsage | undefined) => ({
      prompt_tokens: u?.prompt_tokens,
      details: u?.prompt_tokens_details,
    });
    expect(input((await stream('Bob')).usage)).toEqual(input(written.usage));
    expect(input((await stream('Bob')).usage)).toEqual(input(read.usage));
  });
});
