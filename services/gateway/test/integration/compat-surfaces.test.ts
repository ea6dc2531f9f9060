import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { frames, startCompatHarness, type CompatHarness } from './compat-harness';
import type { FakeChat } from './fake-chat';
import type { Gateway } from './harness';

describe('the four compatible surfaces through the official clients (scripted router)', () => {
  let h: CompatHarness;
  let gw: Gateway;
  let fake: FakeChat;
  let key: string;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => h.post(path, body, headers);

  beforeAll(async () => {
    h = await startCompatHarness();
    ({ gw, fake, key, openai, anthropic } = h);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('when the OpenAPI document is read, then the four surfaces are in it with key or bearer security', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, { post?: { security: unknown[]; requestBody?: unknown } }>;
    };
    for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/responses', '/v1/messages']) {
      expect(doc.paths[path]?.post?.security).toEqual([{ ApiKey: [] }, { Bearer: [] }]);
      expect(doc.paths[path]?.post?.requestBody).toBeDefined();
    }
  });

  describe('chat completions', () => {
    it('when called for JSON, then the chat.completion carries the text, the four-class usage and x_service', async () => {
      const plain = await openai.chat.completions.create({
        model: 'fake-text',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(plain).toMatchObject({
        object: 'chat.completion',
        model: 'fake-text',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 12,
          completion_tokens: 5,
          total_tokens: 17,
          prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        },
      });
      expect((plain as unknown as { x_service: unknown }).x_service).toBeNull();
      const stored = await openai.chat.completions.create({
        model: 'fake-text',
        messages: [{ role: 'user', content: 'hi' }],
        store: true,
      });
      expect((stored as unknown as { x_service: unknown }).x_service).toEqual({
        inference_id: '0190f0aa-0000-7000-8000-000000000001',
        routed_model: null,
        savings: null,
      });
    });

    it('when streamed, then chunks follow the table: usage and x_service only on the terminal chunk, then [DONE]', async () => {
      const stream = openai.chat.completions.stream({
        model: 'fake-text',
        messages: [{ role: 'user', content: 'hi' }],
        stream_options: { include_usage: true },
      });
      const final = await stream.finalChatCompletion();
      expect(final.choices[0]!.message.content).toBe('Hello');
      expect(final.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });

      const res = await post('/v1/chat/completions', {
        model: 'fake-text',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        store: true,
      });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const all = await frames(res);
      expect(all.at(-1)).toEqual([null, '[DONE]']);
      const chunks = all.slice(0, -1).map(([, d]) => JSON.parse(d));
      for (const c of chunks.slice(0, -1)) {
        expect(c).toMatchObject({ object: 'chat.completion.chunk', usage: null, x_service: null });
        expect(c.choices[0].finish_reason).toBeNull();
        expect(c.choices[0].delta).not.toHaveProperty('reasoning_content');
      }
      expect(chunks.at(-1)).toMatchObject({
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 5 },
        x_service: { inference_id: expect.any(String) },
      });
    });

    it('when reasoning is opted in, then reasoning_content is sent; otherwise no reasoning field is sent', async () => {
      const body = { model: 'fake-reasoning', messages: [{ role: 'user', content: 'q' }], stream: true };
      const hidden = (await frames(await post('/v1/chat/completions', body))).slice(0, -1);
      expect(hidden.some(([, d]) => d.includes('reasoning_content'))).toBe(false);
      const shown = (await frames(await post('/v1/chat/completions', { ...body, reasoning: { exclude: false } })))
        .slice(0, -1)
        .map(([, d]) => JSON.parse(d));
      expect(shown.map((c) => c.choices[0].delta.reasoning_content).filter(Boolean)).toEqual(['thinking…']);
      expect(fake.inputs.at(-1)!.includeReasoning).toBe(true);
      const json = (await (
        await post('/v1/chat/completions', { ...body, stream: false, reasoning: { display: 'summarized' } })
      ).json()) as { choices: { message: unknown }[]; usage: { completion_tokens_details: unknown } };
      expect(json.choices[0]!.message).toMatchObject({ content: '42', reasoning_content: 'thinking…' });
      expect(json.usage.completion_tokens_details).toEqual({ reasoning_tokens: 3 });
    });

    it('when the model calls a tool, then tool_calls deltas pass through and the JSON joins them', async () => {
      const request = {
        model: 'fake-tools',
        messages: [{ role: 'user' as const, content: 'look it up' }],
        tools: [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } }],
      };
      const json = await openai.chat.completions.create(request);
      expect(json.choices[0]).toMatchObject({
        finish_reason: 'tool_calls',
        message: {
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
        },
      });
      expect(fake.inputs.at(-1)!.tools).toEqual([{ name: 'lookup', description: '', parameters: { type: 'object' } }]);
      const streamed = await openai.chat.completions.stream(request).finalChatCompletion();
      expect(streamed.choices[0]!.message.tool_calls).toEqual([
        { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
      ]);
    });

    it('when cache markers are sent, then system and user markers count, assistant ones are dropped, at most 4 are kept', async () => {
      const cc = { type: 'ephemeral', ttl: '1h' };
      const blocks = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ type: 'text', text: `b${i}`, cache_control: cc }));
      const res = await post('/v1/chat/completions', {
        model: 'fake-text',
        messages: [
          { role: 'system', content: blocks(2) },
          { role: 'assistant', content: blocks(1) },
          { role: 'user', content: blocks(3) },
        ],
      });
      expect(res.status).toBe(200);
      const input = fake.inputs.at(-1)!;
      expect(input.system).toEqual([
        { text: 'b0', cacheTtlSeconds: 3600 },
        { text: 'b1', cacheTtlSeconds: 3600 },
      ]);
      expect(input.messages.map((m) => m.content)).toEqual([
        [{ text: 'b0' }],
        [{ text: 'b0', cacheTtlSeconds: 3600 }, { text: 'b1', cacheTtlSeconds: 3600 }, { text: 'b2' }],
      ]);
    });
  });

  describe('completions and responses', () => {
    it('when a legacy completion is asked for, then text_completion comes back as JSON and as a stream', async () => {
      const json = await openai.completions.create({ model: 'fake-text', prompt: 'Say hello' });
      expect(json).toMatchObject({
        object: 'text_completion',
        choices: [{ index: 0, text: 'Hello', finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
      });
      expect(fake.inputs.at(-1)!.messages).toEqual([
        { role: 'user', content: [{ text: 'Say hello' }], toolCalls: [], toolCallId: '' },
      ]);
      const stream = await openai.completions.create({ model: 'fake-text', prompt: 'Say hello', stream: true });
      let text = '';
      let last: OpenAI.Completion | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.text ?? '';
        last = chunk;
      }
      expect(text).toBe('Hello');
      expect(last).toMatchObject({ choices: [{ finish_reason: 'stop' }], usage: { total_tokens: 17 } });
    });

    it('when a response is created, then output_text and the responses usage come back, plain and streamed', async () => {
      const plain = await openai.responses.create({ model: 'fake-text', input: 'hi', instructions: 'be brief' });
      expect(plain.output_text).toBe('Hello');
      expect(plain).toMatchObject({
        object: 'response',
        status: 'completed',
        usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, total_tokens: 17 },
      });
      expect(fake.inputs.at(-1)!.system).toEqual([{ text: 'be brief' }]);

      const stream = openai.responses.stream({ model: 'fake-text', input: [{ role: 'user', content: 'hi' }] });
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
      const final = await stream.finalResponse();
      expect(deltas).toEqual(['Hel', 'lo']);
      expect(final.output_text).toBe('Hello');
      expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 5 });
    });

    it('when a responses stream is read raw, then it runs created, deltas, text done, completed', async () => {
      const types = (await frames(await post('/v1/responses', { model: 'fake-text', input: 'hi', stream: true }))).map(
        ([e]) => e,
      );
      expect(types[0]).toBe('response.created');
      expect(types).toContain('response.output_text.delta');
      expect(types.indexOf('response.output_text.done')).toBeLessThan(types.indexOf('response.completed'));
      expect(types.at(-1)).toBe('response.completed');
    });

    it('when markers ride on responses input, then only system and developer blocks keep them', async () => {
      const cc = { type: 'ephemeral' };
      await post('/v1/responses', {
        model: 'fake-text',
        input: [
          { role: 'developer', content: [{ type: 'input_text', text: 'rules', cache_control: cc }] },
          { role: 'user', content: [{ type: 'input_text', text: 'q', cache_control: cc }] },
        ],
      });
      const input = fake.inputs.at(-1)!;
      expect(input.system).toEqual([{ text: 'rules', cacheTtlSeconds: 0 }]);
      expect(input.messages[0]!.content).toEqual([{ text: 'q' }]);
    });
  });

  describe('messages', () => {
    it('when called with x-api-key and with a bearer token, then the message and the messages usage come back', async () => {
      const json = await anthropic.messages.create({
        model: 'fake-text',
        max_tokens: 64,
        system: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(json).toMatchObject({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'Hello' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 12, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 5 },
      });
      expect(fake.inputs.at(-1)).toMatchObject({ system: [{ text: 'rules', cacheTtlSeconds: 0 }], maxTokens: 64 });
      const bearer = new Anthropic({ authToken: key, apiKey: null, baseURL: gw.url });
      const final = await bearer.messages
        .stream({ model: 'fake-text', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
        .finalMessage();
      expect(final.content).toEqual([{ type: 'text', text: 'Hello' }]);
      expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 5 });
    });

    it('when the same cached request runs twice, then usage shows a write then a read, identical in stream and JSON', async () => {
      const request = {
        model: 'fake-cache',
        max_tokens: 16,
        system: [{ type: 'text' as const, text: 'long prefix', cache_control: { type: 'ephemeral' as const } }],
        messages: [{ role: 'user' as const, content: 'q' }],
      };
      const first = await anthropic.messages.stream(request).finalMessage();
      expect(first.usage).toMatchObject({ cache_creation_input_tokens: 2048, cache_read_input_tokens: 0 });
      const second = await anthropic.messages.create(request);
      expect(second.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 2048 });
      fake.calls.delete('fake-cache');
      const again = await anthropic.messages.create(request);
      expect(again.usage).toEqual(first.usage);
    });

    it('when tools and tool results are sent, then they become tool definitions, calls and tool turns', async () => {
      const final = await anthropic.messages
        .stream({
          model: 'fake-tools',
          max_tokens: 64,
          tools: [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }],
          messages: [
            { role: 'user', content: 'find x' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 't0', name: 'lookup', input: { q: 'y' } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't0', content: 'nothing' }] },
          ],
        })
        .finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'x' } }]);
      const input = fake.inputs.at(-1)!;
      expect(input.toolsCacheTtlSeconds).toBe(0);
      expect(input.messages.map((m) => [m.role, m.toolCalls, m.toolCallId])).toEqual([
        ['user', [], ''],
        ['assistant', [{ id: 't0', name: 'lookup', arguments: '{"q":"y"}' }], ''],
        ['tool', [], 't0'],
      ]);
    });
  });
});
