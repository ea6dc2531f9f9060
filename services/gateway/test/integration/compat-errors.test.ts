import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { frames, startCompatHarness, type CompatHarness } from './compat-harness';
import type { FakeChat } from './fake-chat';
import { startGateway, type Gateway } from './harness';

describe("the compatible surfaces' errors, retries and cancellation through the official clients (scripted router)", () => {
  let h: CompatHarness;
  let kb: CompatHarness['kb'];
  let gw: Gateway;
  let fake: FakeChat;
  let key: string;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => h.post(path, body, headers);

  beforeAll(async () => {
    h = await startCompatHarness();
    ({ kb, gw, fake, key, openai, anthropic } = h);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  describe('errors and retries', () => {
    it('when the key is wrong or the body invalid, then the clients raise their 401 and 422 classes', async () => {
      const bad = new OpenAI({ apiKey: 'wst_sk_' + 'x'.repeat(40), baseURL: `${gw.url}/v1`, maxRetries: 0 });
      await expect(bad.chat.completions.create({ model: 'fake-text', messages: [] })).rejects.toBeInstanceOf(
        OpenAI.AuthenticationError,
      );
      const invalid = await openai.chat.completions
        .create({ model: 'fake-text', messages: [] })
        .catch((e: unknown) => e);
      expect(invalid).toBeInstanceOf(OpenAI.UnprocessableEntityError);
      expect((invalid as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
        code: 'validation_failed',
        type: 'invalid_request_error',
        param: 'messages',
        message: expect.stringContaining('messages'),
      });
      const anthropicBad = new Anthropic({ apiKey: 'placeholder', baseURL: gw.url, maxRetries: 0 });
      const denied = await anthropicBad.messages
        .create({ model: 'fake-text', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((denied as InstanceType<typeof Anthropic.APIError>).error).toEqual({
        type: 'error',
        error: { type: 'authentication_error', message: expect.stringContaining('wst_sk_') },
      });
    });

    it('when /v1/messages is called without the version header, then the body is still Anthropic-shaped', async () => {
      const res = await post('/v1/messages', { model: 'fake-text', messages: [] });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') },
      });
      const completions = await post('/v1/completions', { model: 'fake-missing', prompt: 'x' });
      expect(completions.status).toBe(404);
      expect(await completions.json()).toMatchObject({ error: { code: 'model_not_found', type: 'not_found_error' } });
    });

    it('when a model is warming, then OpenAI clients retry the 425 to success and Messages clients are told not to', async () => {
      const ok = await openai.chat.completions.create({
        model: 'fake-warming',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(ok.choices[0]!.message.content).toBe('Hello');
      expect(fake.calls.get('fake-warming')).toBe(2);
      fake.calls.delete('fake-warming');
      const raw = await post('/v1/chat/completions', {
        model: 'fake-warming',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(raw.status).toBe(425);
      expect(raw.headers.get('x-should-retry')).toBe('true');
      expect(raw.headers.get('retry-after')).toBe('1');
      expect(await raw.json()).toMatchObject({ error: { code: 'model_warming' } });
      fake.calls.delete('fake-warming');
      const messages = await post(
        '/v1/messages',
        { model: 'fake-warming', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
        { 'anthropic-version': '2023-06-01' },
      );
      expect(messages.status).toBe(425);
      expect(messages.headers.get('x-should-retry')).toBe('false');
      const body = (await messages.json()) as { error: Record<string, unknown> };
      expect(body.error).not.toHaveProperty('code');
    });

    it('when an upstream is saturated once, then Messages gets 529 and its client retries to success; others get 503', async () => {
      const ok = await anthropic.messages.create({
        model: 'fake-overloaded',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(ok.content).toEqual([{ type: 'text', text: 'Hello' }]);
      expect(fake.calls.get('fake-overloaded')).toBe(2);
      fake.calls.delete('fake-overloaded');
      const raw = await post('/v1/messages', {
        model: 'fake-overloaded',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(raw.status).toBe(529);
      expect(await raw.json()).toEqual({
        type: 'error',
        error: { type: 'overloaded_error', message: 'Upstream is overloaded' },
      });
      fake.calls.delete('fake-overloaded');
      const chat = await post('/v1/chat/completions', {
        model: 'fake-overloaded',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(chat.status).toBe(503);
      fake.calls.delete('fake-overloaded');
    });

    it('when an OpenAI-surface call carries anthropic-version and the upstream is saturated, then it keeps its 503 and OpenAI envelope', async () => {
      const chat = await post(
        '/v1/chat/completions',
        { model: 'fake-overloaded', messages: [{ role: 'user', content: 'hi' }] },
        { 'anthropic-version': '2023-06-01' },
      );
      expect(chat.status).toBe(503);
      expect(await chat.json()).toEqual({
        error: { code: 'upstream_overloaded', type: 'server_error', param: null, message: 'Upstream is overloaded' },
      });
      fake.calls.delete('fake-overloaded');
      const responses = await post(
        '/v1/responses',
        { model: 'fake-overloaded', input: 'hi' },
        { 'anthropic-version': '2023-06-01' },
      );
      expect(responses.status).toBe(503);
      expect(await responses.json()).toMatchObject({ error: { code: 'upstream_overloaded', type: 'server_error' } });
      fake.calls.delete('fake-overloaded');
    });

    it('when the shared chat limit is spent across surfaces, then 429 comes in the surface envelope with Retry-After', async () => {
      const limited = await startGateway(kb, { inference: fake.port, rateLimits: { chatPerMinute: 3 } });
      try {
        const at = (path: string, body: unknown, headers: Record<string, string> = {}) =>
          fetch(`${limited.url}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
            body: JSON.stringify(body),
          });
        const ok = [
          await at('/v1/chat/completions', { model: 'fake-text', messages: [{ role: 'user', content: 'a' }] }),
          await at('/v1/completions', { model: 'fake-text', prompt: 'b' }),
          await at('/v1/responses', { model: 'fake-text', input: 'c' }),
        ];
        expect(ok.map((r) => r.status)).toEqual([200, 200, 200]);
        const messages = await at('/v1/messages', {
          model: 'fake-text',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'd' }],
        });
        expect(messages.status).toBe(429);
        expect(Number(messages.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(messages.headers.get('x-ratelimit-code')).toBe('chat_rate_limit');
        expect(await messages.json()).toEqual({
          type: 'error',
          error: { type: 'rate_limit_error', message: expect.stringContaining('Rate limit exceeded') },
        });
        const chat = await at('/v1/chat/completions', {
          model: 'fake-text',
          messages: [{ role: 'user', content: 'e' }],
        });
        expect(await chat.json()).toMatchObject({ error: { code: 'chat_rate_limit', type: 'rate_limit_error' } });
      } finally {
        await limited.close();
      }
    });

    it('when a stream fails after its first byte, then each surface ends with its own error event', async () => {
      const chat = openai.chat.completions.stream({ model: 'fake-broken', messages: [{ role: 'user', content: 'x' }] });
      await expect(chat.finalChatCompletion()).rejects.toMatchObject({ error: { code: 'upstream_overloaded' } });
      const messages = anthropic.messages.stream({
        model: 'fake-broken',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'x' }],
      });
      await expect(messages.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError);
      const raw = await frames(
        await post('/v1/messages', {
          model: 'fake-broken',
          max_tokens: 8,
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        }),
      );
      expect(raw.at(-1)).toEqual([
        'error',
        JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Upstream went away' } }),
      ]);
      const responses = await frames(await post('/v1/responses', { model: 'fake-broken', input: 'x', stream: true }));
      expect(responses.at(-1)![0]).toBe('error');
      expect(JSON.parse(responses.at(-1)![1])).toMatchObject({ type: 'error', code: 'upstream_overloaded' });
    });

    it('when a stream breaks on an unexpected error, then the error event is generic and the response ends', async () => {
      const all = await frames(
        await post('/v1/chat/completions', {
          model: 'fake-crash',
          messages: [{ role: 'user', content: 'x' }],
          stream: true,
        }),
      );
      const last = JSON.parse(all.at(-1)![1]) as { error: Record<string, unknown> };
      expect(last.error).toMatchObject({ code: 'internal_error', type: 'server_error' });
      expect(JSON.stringify(all)).not.toContain('hunter2');
      const after = await post('/v1/chat/completions', {
        model: 'fake-text',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(after.status).toBe(200);
    });

    it('when the client disconnects mid-stream, then the chat call is aborted', async () => {
      const res = await post('/v1/chat/completions', {
        model: 'fake-hang',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
      });
      const reader = res.body!.getReader();
      await reader.read();
      await reader.cancel();
      for (let i = 0; i < 50 && fake.aborted === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(fake.aborted).toBe(1);
    });
  });
});
