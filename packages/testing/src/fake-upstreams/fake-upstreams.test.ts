import { startFakeAnthropicUpstream, startFakeOpenAIUpstream, type FakeUpstream } from './index';

type Body = Record<string, unknown>;
const json = async (res: Response) => (await res.json()) as Body;

async function events(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((e) =>
      e
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6),
    );
}

describe('fake OpenAI upstream', () => {
  let up: FakeUpstream;
  beforeAll(async () => (up = await startFakeOpenAIUpstream()));
  afterAll(() => up.close());
  beforeEach(() => up.reset());

  const call = (body: unknown, key = up.apiKey) =>
    fetch(`${up.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const convo = [
    { role: 'system', content: 'you are a helpful echo of four words' },
    { role: 'user', content: 'hello there' },
  ];

  it('when asked twice with the same prefix, then it echoes and reports the prefix as cached the second time', async () => {
    const first = await json(await call({ model: 'gpt-x', messages: convo }));
    expect(first.choices).toMatchObject([{ message: { content: 'Echo: HELLO THERE' } }]);
    expect(first.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 3,
      total_tokens: 13,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    const second = await json(await call({ model: 'gpt-x', messages: convo }));
    expect(second.usage).toMatchObject({ prompt_tokens_details: { cached_tokens: 8 } });
    expect(up.requests).toHaveLength(2);
  });

  it('when streaming with include_usage, then pieces, a finish chunk, a usage chunk and [DONE] arrive', async () => {
    const data = await events(
      await call({ model: 'gpt-x', messages: convo, stream: true, stream_options: { include_usage: true } }),
    );
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data
      .slice(0, -1)
      .map((d) => JSON.parse(d) as { choices: { delta: { content?: string } }[]; usage?: Body });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: HELLO THERE');
    expect(chunks[chunks.length - 1]?.usage).toMatchObject({ completion_tokens: 3 });
  });

  it('when told to fail, or given a wrong key, then it answers with the status and its error body', async () => {
    up.behave({ kind: 'status', status: 429, retryAfterSeconds: 7 }, 1);
    const limited = await call({ model: 'gpt-x', messages: convo });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
    expect((await call({ model: 'gpt-x', messages: convo })).status).toBe(200);
    expect((await call({ model: 'gpt-x', messages: convo }, 'wrong')).status).toBe(401);
  });
});

describe('fake Anthropic upstream', () => {
  let up: FakeUpstream;
  beforeAll(async () => (up = await startFakeAnthropicUpstream()));
  afterAll(() => up.close());

  const call = (body: unknown) =>
    fetch(`${up.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': up.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const body = {
    model: 'claude-x',
    max_tokens: 100,
    system: [{ type: 'text', text: 'a long and stable system prompt here', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'hi you' }],
  };

  it('when a marked prefix is sent twice, then it is written, then read, and input_tokens excludes both', async () => {
    const first = await json(await call(body));
    expect(first.content).toEqual([{ type: 'text', text: 'Echo: HI YOU' }]);
    expect(first.usage).toEqual({
      input_tokens: 2,
      cache_creation_input_tokens: 7,
      cache_read_input_tokens: 0,
      output_tokens: 3,
    });
    const data = (await events(await call({ ...body, stream: true }))).map((d) => JSON.parse(d) as Body);
    expect(data.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(data[0]).toMatchObject({
      message: { usage: { cache_read_input_tokens: 7, cache_creation_input_tokens: 0 } },
    });
  });

  it('when max_tokens is missing, then it is 400; when tools are given, then it calls the first one', async () => {
    expect((await call({ ...body, max_tokens: undefined })).status).toBe(400);
    const tool = await json(await call({ ...body, tools: [{ name: 'lookup', input_schema: { type: 'object' } }] }));
    expect(tool).toMatchObject({ stop_reason: 'tool_use', content: [{ name: 'lookup', input: { text: 'hi you' } }] });
  });
});
