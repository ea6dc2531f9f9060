import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import Anthropic from '@anthropic-ai/sdk';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { eventually, type FakeUpstream } from '@whetstone/testing';
import {
  ANTHROPIC_MODEL,
  frames,
  LONG_SYSTEM,
  OPENAI_MODEL,
  startWithUpstreams,
  type UpstreamSystem,
} from './compat-helpers';
import type { RunningSystem } from './system';

/**
 * The four compatible surfaces end to end: the official clients (openai,
 * Anthropic, Vercel AI SDK, LangChain) against the whole system started as
 * `pnpm start` does, with fake OpenAI- and Anthropic-compatible upstreams on
 * loopback as its providers, and the built-in zero-shot extraction base.
 */
describe('compatible surfaces through the official clients, end to end', () => {
  let running: UpstreamSystem;
  let system: RunningSystem;
  let fakeOpenAI: FakeUpstream;
  let fakeAnthropic: FakeUpstream;
  let key: string;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const user = (content: string) => [{ role: 'user' as const, content }];
  const post = (path: string, body: unknown) =>
    fetch(`${system.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    running = await startWithUpstreams('compat');
    ({ system, fakeOpenAI, fakeAnthropic, key, openai } = running);
    anthropic = new Anthropic({ apiKey: key, baseURL: system.baseUrl, maxRetries: 3 });
  }, 300_000);

  afterAll(async () => running?.stop(), 60_000);

  describe('openai', () => {
    it('when a chat completion is asked for, then JSON and the stream carry the upstream reply and usage', async () => {
      const json = await openai.chat.completions.create({ model: OPENAI_MODEL, messages: user('hello there') });
      expect(json.choices[0]).toMatchObject({ message: { content: 'Echo: HELLO THERE' }, finish_reason: 'stop' });
      expect(json.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 3 });
      const stream = openai.chat.completions.stream({ model: OPENAI_MODEL, messages: user('hello there') });
      const deltas: string[] = [];
      stream.on('content', (delta) => deltas.push(delta));
      const final = await stream.finalChatCompletion();
      expect(deltas.join('')).toBe('Echo: HELLO THERE');
      expect(final.usage).toEqual(json.usage);
    });

    it('when completions and responses are called, then each answers in its own shape', async () => {
      const completion = await openai.completions.create({ model: OPENAI_MODEL, prompt: 'say this' });
      expect(completion).toMatchObject({ object: 'text_completion', choices: [{ text: 'Echo: SAY THIS' }] });
      const response = await openai.responses.create({ model: OPENAI_MODEL, input: 'say that' });
      expect(response.output_text).toBe('Echo: SAY THAT');
      const streamed = await openai.responses.stream({ model: OPENAI_MODEL, input: 'say that' }).finalResponse();
      expect(streamed.output_text).toBe('Echo: SAY THAT');
      expect(streamed.usage).toEqual(response.usage);
    });

    it('when the same long prompt runs twice on an auto-caching upstream, then the second reads the cache, alike in stream and JSON', async () => {
      const messages = (tag: string) => [
        { role: 'system' as const, content: `${LONG_SYSTEM} ${tag}` },
        { role: 'user' as const, content: 'cached question' },
      ];
      const first = await openai.chat.completions.create({ model: OPENAI_MODEL, messages: messages('json') });
      expect(first.usage!.prompt_tokens_details).toMatchObject({ cached_tokens: 0, cache_write_tokens: 0 });
      const second = await openai.chat.completions.create({ model: OPENAI_MODEL, messages: messages('json') });
      expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(0);
      expect(second.usage!.prompt_tokens).toBe(first.usage!.prompt_tokens);

      const stream = (tag: string) =>
        openai.chat.completions.stream({ model: OPENAI_MODEL, messages: messages(tag) }).finalChatCompletion();
      expect((await stream('stream')).usage).toEqual(first.usage);
      expect((await stream('stream')).usage).toEqual(second.usage);
    });

    it('when models are listed, then the upstream catalog models are there', async () => {
      const ids: string[] = [];
      for await (const model of openai.models.list()) ids.push(model.id);
      expect(ids).toEqual(expect.arrayContaining([OPENAI_MODEL, ANTHROPIC_MODEL, 'whetstone-extract-base']));
      expect(await openai.models.retrieve(OPENAI_MODEL)).toMatchObject({ id: OPENAI_MODEL, object: 'model' });
      await expect(openai.models.retrieve('no-such-model')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it('when JSON output is asked for, then an OpenAI-compatible upstream gets it, and a Messages-API model refuses it by name', async () => {
      const schema = { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] };
      const before = fakeOpenAI.requests.length;
      await openai.chat.completions.create({
        model: OPENAI_MODEL,
        messages: user('json please'),
        response_format: { type: 'json_schema', json_schema: { name: 'echo', schema, strict: true } },
      });
      await openai.responses.create({
        model: OPENAI_MODEL,
        input: 'json please',
        text: { format: { type: 'json_schema', name: 'echo', schema, strict: true } },
      });
      await openai.chat.completions.create({
        model: OPENAI_MODEL,
        messages: user('text'),
        response_format: { type: 'text' },
      });
      const sent = fakeOpenAI.requests.slice(before).map((r) => r.body.response_format);
      const asked = { type: 'json_schema', json_schema: { name: 'echo', schema, strict: true } };
      expect(sent).toEqual([asked, asked, undefined]);

      const refused = await openai.chat.completions
        .create({ model: ANTHROPIC_MODEL, messages: user('json please'), response_format: { type: 'json_object' } })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.UnprocessableEntityError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ param: 'response_format' });
      const extraction = await openai.chat.completions.create({
        model: 'whetstone-extract-base',
        messages: user('Ada Lovelace met Charles Babbage in London.'),
        response_format: { type: 'json_object' },
        // @ts-expect-error Whetstone's extension field
        schema: { entities: ['person'] },
      });
      expect(JSON.parse(extraction.choices[0]!.message.content!)).toHaveProperty('entities');
    });

    it('when the key is a placeholder or the body invalid, then AuthenticationError and UnprocessableEntityError', async () => {
      const placeholder = new OpenAI({ apiKey: 'sk-placeholder', baseURL: `${system.baseUrl}/v1`, maxRetries: 0 });
      await expect(placeholder.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      const invalid = await openai.chat.completions
        .create({ model: OPENAI_MODEL, messages: user('x'), temperature: 7 })
        .catch((e: unknown) => e);
      expect(invalid).toBeInstanceOf(OpenAI.UnprocessableEntityError);
      expect((invalid as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ param: 'temperature' });
    });

    it("when a reply's message or output is sent back with the next turn, with explicit nulls, then it is taken", async () => {
      // The usual loop: append the reply as it came (its message has refusal: null; OpenAI's may have tool_calls: null).
      const first = await openai.chat.completions.create({ model: OPENAI_MODEL, messages: user('one') });
      const next = await post('/v1/chat/completions', {
        model: OPENAI_MODEL,
        messages: [
          { role: 'user', content: 'one', name: null },
          { ...first.choices[0]!.message, tool_calls: null, name: null, audio: null, function_call: null },
          { role: 'user', content: 'two' },
        ],
        tools: null,
        tool_choice: null,
        schema: null,
        stream_options: { include_usage: null },
      });
      expect(next.status).toBe(200);
      expect(((await next.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe(
        'Echo: TWO',
      );
      // Responses: the earlier output goes back as input, a reasoning model's reasoning items included (left out).
      const earlier = await openai.responses.create({ model: OPENAI_MODEL, input: 'three' });
      const again = await openai.responses.create({
        model: OPENAI_MODEL,
        input: [
          { role: 'user', content: 'three' },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'thinking' }] },
          ...(earlier.output as never[]),
          { role: 'user', content: 'four' },
        ],
        tools: null,
        tool_choice: null,
      } as never);
      expect(again.output_text).toBe('Echo: FOUR');
      // What is not computed (an upstream prompt's scores), out of range or not known (an item reference): by name.
      for (const [path, body, param] of [
        ['/v1/chat/completions', { model: OPENAI_MODEL, messages: user('x'), top_logprobs: 2 }, 'top_logprobs'],
        [
          '/v1/chat/completions',
          { model: OPENAI_MODEL, messages: user('x'), logprobs: true, top_logprobs: 21 },
          'top_logprobs',
        ],
        ['/v1/completions', { model: OPENAI_MODEL, prompt: 'x', logprobs: 6 }, 'logprobs'],
        ['/v1/completions', { model: OPENAI_MODEL, prompt: 'x', echo: true, logprobs: 1 }, 'echo'],
        ['/v1/responses', { model: OPENAI_MODEL, input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input'],
      ] as const) {
        const refused = await post(path, body);
        const { error } = (await refused.json()) as { error: { param: string; message: string } };
        expect([refused.status, error.param]).toEqual([422, param]);
        if (param === 'input') expect(error.message).toContain('function_call_output or reasoning items');
      }
    });

    it('when the zero-shot extraction base gets the schema extension, then the assistant content is the JSON result', async () => {
      const json = await openai.chat.completions.create({
        model: 'whetstone-extract-base',
        messages: user('Ada Lovelace met Charles Babbage in London.'),
        // @ts-expect-error Whetstone's extension field
        schema: { entities: ['person', 'city'] },
      });
      const result = JSON.parse(json.choices[0]!.message.content!) as { entities: Record<string, string[]> };
      expect(result.entities.person).toEqual(expect.arrayContaining(['Ada Lovelace', 'Charles Babbage']));
    });
  });

  describe('anthropic', () => {
    it("when models are listed and retrieved, then they come in Anthropic's model shape", async () => {
      const models: Anthropic.ModelInfo[] = [];
      for await (const model of anthropic.models.list()) models.push(model);
      expect(models.map((m) => m.id)).toEqual(expect.arrayContaining([ANTHROPIC_MODEL, 'whetstone-extract-base']));
      const one = await anthropic.models.retrieve(ANTHROPIC_MODEL);
      expect(one).toMatchObject({ type: 'model', id: ANTHROPIC_MODEL, display_name: ANTHROPIC_MODEL });
      expect(Number.isNaN(Date.parse(one.created_at))).toBe(false);
      const missing = await anthropic.models.retrieve('no-such-model').catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
      expect((missing as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'not_found_error' },
      });
    });

    it('when tokens are counted, then a built-in model counts what it bills, an upstream model is estimated, and an unknown one is not found', async () => {
      const text = 'Ada Lovelace met Charles Babbage in London.';
      const extraction = await anthropic.messages.countTokens({
        model: 'whetstone-extract-base',
        messages: user(text),
        // @ts-expect-error Whetstone's extension field
        schema: { entities: ['person'] },
      });
      const called = await post('/v1/messages', {
        model: 'whetstone-extract-base',
        max_tokens: 64,
        messages: user(text),
        schema: { entities: ['person'] },
      });
      const usage = ((await called.json()) as { usage: { input_tokens: number } }).usage;
      expect(extraction).toEqual({ input_tokens: usage.input_tokens });
      const system = 'You are terse.';
      const upstream = await anthropic.messages.countTokens({ model: ANTHROPIC_MODEL, system, messages: user(text) });
      expect(upstream.input_tokens).toBe(Math.ceil((system + text).length / 4));
      const tool = {
        name: 'lookup_person',
        description: 'Looks a person up in the staff directory by full name.',
        input_schema: { type: 'object' as const, properties: { name: { type: 'string' } }, required: ['name'] },
      };
      const withTools = await anthropic.messages.countTokens({
        model: ANTHROPIC_MODEL,
        system,
        messages: user(text),
        tools: [tool],
      });
      // The definitions are input too: at least their name and description (4 characters a token) are counted.
      expect(withTools.input_tokens - upstream.input_tokens).toBeGreaterThanOrEqual(
        Math.floor((tool.name + tool.description).length / 4),
      );
      const missing = await anthropic.messages
        .countTokens({ model: 'no-such-model', messages: user(text) })
        .catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
      const invalid = await anthropic.messages.countTokens({ model: ANTHROPIC_MODEL, messages: [] }).catch((e) => e);
      expect(invalid).toBeInstanceOf(Anthropic.UnprocessableEntityError);
      expect((invalid as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error' });
    });

    it('when messages are sent with x-api-key and with a bearer token, then JSON and stream agree', async () => {
      const request = { model: ANTHROPIC_MODEL, max_tokens: 64, messages: user('good day') };
      const json = await anthropic.messages.create(request);
      expect(json).toMatchObject({ content: [{ type: 'text', text: 'Echo: GOOD DAY' }], stop_reason: 'end_turn' });
      const bearer = new Anthropic({ authToken: key, apiKey: null, baseURL: system.baseUrl });
      const streamed = await bearer.messages.stream(request).finalMessage();
      expect(streamed.content).toEqual(json.content);
      expect(streamed.usage).toMatchObject({
        input_tokens: json.usage.input_tokens,
        output_tokens: json.usage.output_tokens,
      });
    });

    it('when the same cached request runs twice, then usage shows a write then a read, the same in stream and JSON', async () => {
      const request = {
        model: ANTHROPIC_MODEL,
        max_tokens: 64,
        system: [
          { type: 'text' as const, text: `${LONG_SYSTEM} stream`, cache_control: { type: 'ephemeral' as const } },
        ],
        messages: user('cached question'),
      };
      const written = await anthropic.messages.stream(request).finalMessage();
      expect(written.usage.cache_creation_input_tokens).toBeGreaterThan(0);
      expect(written.usage.cache_read_input_tokens).toBe(0);
      const read = await anthropic.messages.stream(request).finalMessage();
      expect(read.usage.cache_read_input_tokens).toBe(written.usage.cache_creation_input_tokens);
      expect(read.usage.cache_creation_input_tokens).toBe(0);

      const jsonRequest = { ...request, system: [{ ...request.system[0]!, text: `${LONG_SYSTEM} json` }] };
      const jsonWritten = await anthropic.messages.create(jsonRequest);
      const jsonRead = await anthropic.messages.create(jsonRequest);
      expect(jsonWritten.usage).toMatchObject({
        cache_creation_input_tokens: written.usage.cache_creation_input_tokens,
        cache_read_input_tokens: 0,
        input_tokens: written.usage.input_tokens,
      });
      expect(jsonRead.usage).toMatchObject({
        cache_read_input_tokens: read.usage.cache_read_input_tokens,
        cache_creation_input_tokens: 0,
      });
    });

    it('when the upstream answers 529 once, then the Anthropic client retries to success', async () => {
      fakeAnthropic.behave({ kind: 'status', status: 529, message: 'Overloaded' }, 1);
      const before = fakeAnthropic.requests.length;
      const json = await anthropic.messages.create({
        model: ANTHROPIC_MODEL,
        max_tokens: 16,
        messages: user('retry me'),
      });
      expect(json.content).toEqual([{ type: 'text', text: 'Echo: RETRY ME' }]);
      expect(fakeAnthropic.requests.length - before).toBe(2);
    });

    it('when a request is invalid or unauthenticated, then the Anthropic error classes and types come back', async () => {
      const bad = await anthropic.messages
        .create({ model: ANTHROPIC_MODEL, max_tokens: 0, messages: user('x') })
        .catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(Anthropic.UnprocessableEntityError);
      expect((bad as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error' },
      });
      const anon = new Anthropic({ apiKey: 'placeholder', baseURL: system.baseUrl, maxRetries: 0 });
      await expect(
        anon.messages.create({ model: ANTHROPIC_MODEL, max_tokens: 8, messages: user('x') }),
      ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    });
  });

  describe('other clients', () => {
    it('when the Vercel AI SDK calls through its OpenAI-compatible provider, then one call and one stream work', async () => {
      const provider = createOpenAICompatible({ name: 'whetstone', baseURL: `${system.baseUrl}/v1`, apiKey: key });
      const one = await generateText({ model: provider(OPENAI_MODEL), prompt: 'vercel call' });
      expect(one.text).toBe('Echo: VERCEL CALL');
      const streamed = streamText({ model: provider(OPENAI_MODEL), prompt: 'vercel stream' });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toBe('Echo: VERCEL STREAM');
    });

    it("when LangChain's ChatOpenAI calls Whetstone, then invoke and stream work", async () => {
      const chat = new ChatOpenAI({
        model: OPENAI_MODEL,
        apiKey: key,
        configuration: { baseURL: `${system.baseUrl}/v1` },
      });
      const reply = await chat.invoke('langchain call');
      expect(reply.content).toBe('Echo: LANGCHAIN CALL');
      let text = '';
      for await (const chunk of await chat.stream('langchain stream')) text += String(chunk.content);
      expect(text).toBe('Echo: LANGCHAIN STREAM');
    });
  });

  it('when a chat stream is read raw, then usage and x_service are null until the terminal chunk, then [DONE]', async () => {
    const all = await frames(
      await post('/v1/chat/completions', { model: OPENAI_MODEL, messages: user('raw'), stream: true, store: true }),
    );
    expect(all.at(-1)).toEqual([null, '[DONE]']);
    const chunks = all.slice(0, -1).map(([, d]) => JSON.parse(d) as Record<string, unknown>);
    expect(chunks.slice(0, -1).every((c) => c.usage === null && c.x_service === null)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({
      x_service: { inference_id: expect.any(String) },
      usage: { total_tokens: expect.any(Number) },
    });
  });
  it('when the client disconnects mid-stream, then the upstream request is cancelled too', async () => {
    fakeOpenAI.behave({ kind: 'stall-after-first-piece' }, 1);
    const before = fakeOpenAI.requests.length;
    const controller = new AbortController();
    const res = await fetch(`${system.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: OPENAI_MODEL, messages: user('hang on'), stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('chat.completion.chunk');
    controller.abort();
    const upstream = fakeOpenAI.requests[before]!;
    await eventually(async () => upstream.closedEarly || null, 30_000);
    expect(upstream.finished).toBe(false);
  });

  it('when a stored chat completion answers, then its x_service.inference_id is readable in history', async () => {
    const json = (await (
      await post('/v1/chat/completions', { model: OPENAI_MODEL, messages: user('remember me'), store: true })
    ).json()) as { x_service: { inference_id: string } };
    const record = await fetch(`${system.baseUrl}/inferences/${json.x_service.inference_id}`, {
      headers: { 'x-api-key': key },
    });
    expect(record.status).toBe(200);
  });
});
