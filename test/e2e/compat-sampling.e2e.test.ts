import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { ANTHROPIC_MODEL, OPENAI_MODEL, postAs, startWithUpstreams, type UpstreamSystem } from './compat-helpers';

/**
 * Sampling controls and token log probabilities with an operator's upstreams,
 * end to end: the official clients ask through Whetstone, the fake upstreams
 * receive the provider's own fields, and the fake OpenAI-compatible upstream's
 * log probabilities (see its `logprobs` note) come back as it sent them. The
 * built-in decoder's are in compat-trained.e2e.test.ts.
 */
describe('sampling controls and log probabilities with upstream models, end to end', () => {
  let running: UpstreamSystem;
  let openai: OpenAI;
  const user = (content: string) => [{ role: 'user' as const, content }];
  const post = postAs(() => running);

  beforeAll(async () => {
    running = await startWithUpstreams('logprobs');
    ({ openai } = running);
  }, 300_000);

  afterAll(async () => running?.stop(), 60_000);

  it('when penalties and top_k are sent, then the OpenAI-compatible upstream gets the penalties and the Messages-API upstream top_k; out of range is 422 by name', async () => {
    const { fakeOpenAI, fakeAnthropic } = running;
    await openai.chat.completions.create({
      model: OPENAI_MODEL,
      messages: user('hi'),
      frequency_penalty: 0.5,
      presence_penalty: -1,
    });
    expect(fakeOpenAI.requests.at(-1)!.body).toMatchObject({ frequency_penalty: 0.5, presence_penalty: -1 });
    await openai.completions.create({ model: OPENAI_MODEL, prompt: 'hi', frequency_penalty: 1 });
    expect(fakeOpenAI.requests.at(-1)!.body).toMatchObject({ frequency_penalty: 1 });
    const anthropic = new Anthropic({ apiKey: running.key, baseURL: running.system.baseUrl, maxRetries: 0 });
    const params = { model: ANTHROPIC_MODEL, max_tokens: 8, messages: user('hi'), top_k: 5 };
    // top_k is Anthropic's (this client's types do not list it): sent as given.
    await anthropic.messages.create(params as Anthropic.MessageCreateParamsNonStreaming);
    expect(fakeAnthropic.requests.at(-1)!.body).toMatchObject({ top_k: 5 });
    const refused = await post('/v1/chat/completions', {
      model: OPENAI_MODEL,
      messages: user('x'),
      presence_penalty: 3,
    });
    const { error } = (await refused.json()) as { error: { param: string } };
    expect([refused.status, error.param]).toEqual([422, 'presence_penalty']);
  });

  it('when logit_bias is sent, then the OpenAI-compatible upstream gets it as sent; a Messages-API or extraction model, a bad key and a bias past 100 are 422 naming logit_bias', async () => {
    const { fakeOpenAI } = running;
    await openai.chat.completions.create({ model: OPENAI_MODEL, messages: user('hi'), logit_bias: { 50256: -100 } });
    expect(fakeOpenAI.requests.at(-1)!.body).toMatchObject({ logit_bias: { 50256: -100 } });
    await openai.chat.completions.create({ model: OPENAI_MODEL, messages: user('hi'), logit_bias: {} });
    expect(fakeOpenAI.requests.at(-1)!.body).not.toHaveProperty('logit_bias');
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ model: ANTHROPIC_MODEL }, /Messages-API provider, which takes no logit_bias/],
      [{ model: 'whetstone-extract-base', schema: { entities: ['person'] } }, /extraction model: it has no tokens/],
      [{ model: OPENAI_MODEL, logit_bias: { a: 1 } }, /token ids/],
      [{ model: OPENAI_MODEL, logit_bias: { 7: 101 } }, /from -100 to 100/],
    ];
    for (const [extra, message] of refusals) {
      const refused = await post('/v1/chat/completions', { messages: user('Ada'), logit_bias: { 7: 1 }, ...extra });
      const { error } = (await refused.json()) as { error: { param: string; message: string } };
      // A bad entry is named by its key (`logit_bias.a`), as other nested fields are.
      expect([refused.status, error.param.split('.')[0]]).toEqual([422, 'logit_bias']);
      expect(error.message).toMatch(message);
    }
  });

  it('when an upstream completion echoes its prompt, then the prompt comes first; its log probabilities and max_tokens 0 are 422 by name', async () => {
    const echoed = await openai.completions.create({ model: OPENAI_MODEL, prompt: 'hello there', echo: true });
    expect(echoed.choices[0]!.text).toMatch(/^hello there/);
    expect(echoed.choices[0]!.text.length).toBeGreaterThan('hello there'.length);
    for (const [extra, param] of [
      [{ logprobs: 1 }, 'echo'],
      [{ max_tokens: 0 }, 'max_tokens'],
    ] as const) {
      const refused = await post('/v1/completions', { model: OPENAI_MODEL, prompt: 'x', echo: true, ...extra });
      const { error } = (await refused.json()) as { error: { param: string } };
      expect([refused.status, error.param]).toEqual([422, param]);
    }
  });

  it('when a tool call is required or named, then each upstream gets it in its own fields, across surfaces; an unknown tool or no tools is 422 naming tool_choice', async () => {
    const { fakeOpenAI, fakeAnthropic } = running;
    const fn = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } };
    await openai.chat.completions.create({
      model: OPENAI_MODEL,
      messages: user('weather?'),
      tools: [{ type: 'function', function: fn }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    expect(fakeOpenAI.requests.at(-1)!.body).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    await openai.chat.completions.create({
      model: ANTHROPIC_MODEL,
      messages: user('weather?'),
      tools: [{ type: 'function', function: fn }],
      tool_choice: 'required',
    });
    expect(fakeAnthropic.requests.at(-1)!.body).toMatchObject({ tool_choice: { type: 'any' } });
    const anthropic = new Anthropic({ apiKey: running.key, baseURL: running.system.baseUrl, maxRetries: 0 });
    const tool = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object' as const } };
    await anthropic.messages.create({
      model: OPENAI_MODEL,
      max_tokens: 16,
      messages: user('weather?'),
      tools: [tool],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    });
    expect(fakeOpenAI.requests.at(-1)!.body).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    await openai.responses.create({
      model: ANTHROPIC_MODEL,
      input: 'weather?',
      tools: [{ type: 'function', name: 'get_weather', parameters: {}, strict: false }],
      tool_choice: { type: 'function', name: 'get_weather' },
    });
    expect(fakeAnthropic.requests.at(-1)!.body).toMatchObject({ tool_choice: { type: 'tool', name: 'get_weather' } });
    for (const body of [
      { tools: [{ type: 'function', function: fn }], tool_choice: { type: 'function', function: { name: 'nope' } } },
      { tool_choice: 'required' },
    ]) {
      const refused = await post('/v1/chat/completions', { model: OPENAI_MODEL, messages: user('x'), ...body });
      const { error } = (await refused.json()) as { error: { param: string; message: string } };
      expect([refused.status, error.param]).toEqual([422, 'tool_choice']);
    }
  });

  it('when a stop sequence ends a Messages-API upstream reply, then stop_reason and stop_sequence say so, JSON and stream alike', async () => {
    const anthropic = new Anthropic({ apiKey: running.key, baseURL: running.system.baseUrl, maxRetries: 0 });
    const params = { model: ANTHROPIC_MODEL, max_tokens: 16, messages: user('hello there'), stop_sequences: ['THERE'] };
    const json = await anthropic.messages.create(params);
    expect(json).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'THERE' });
    expect(json.content).toEqual([{ type: 'text', text: 'Echo: HELLO ' }]);
    const streamed = await anthropic.messages.stream(params).finalMessage();
    expect(streamed).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'THERE' });
    const plain = await anthropic.messages.create({ ...params, stop_sequences: ['NOWHERE'] });
    expect(plain).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
  });

  it('when token log probabilities are asked of an OpenAI-compatible upstream, then its logprobs come back, JSON and stream alike; models that have none refuse by name', async () => {
    const asked = { model: OPENAI_MODEL, messages: user('hello there'), logprobs: true, top_logprobs: 2 };
    const json = await openai.chat.completions.create(asked);
    const content = json.choices[0]!.logprobs!.content!;
    expect(content.map((t) => t.token).join('')).toBe(json.choices[0]!.message.content);
    expect(content[1]).toEqual({
      token: ' HELLO',
      logprob: -0.25,
      bytes: [...Buffer.from(' HELLO')],
      top_logprobs: [
        { token: ' HELLO', logprob: -0.25, bytes: [...Buffer.from(' HELLO')] },
        { token: 'alt1', logprob: -1.25, bytes: [...Buffer.from('alt1')] },
      ],
    });
    const streamed = [];
    for await (const chunk of await openai.chat.completions.create({ ...asked, stream: true }))
      streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    expect(streamed).toEqual(content);
    const plain = await openai.chat.completions.create({ model: OPENAI_MODEL, messages: user('hello there') });
    expect(plain.choices[0]!.logprobs).toBeNull();
    for (const [model, extra] of [
      [ANTHROPIC_MODEL, {}],
      ['whetstone-extract-base', { schema: { entities: ['person'] } }],
    ] as const) {
      const refused = await post('/v1/chat/completions', { model, messages: user('Ada'), logprobs: true, ...extra });
      const { error } = (await refused.json()) as { error: { param: string } };
      expect([refused.status, error.param]).toEqual([422, 'logprobs']);
    }
  });
});
