import type { UpstreamCall } from '../../application/ports';
import { anthropicBody, anthropicParser } from './anthropic';
import { upstreamFailure } from './http';
import { openaiBody, openaiEvents } from './openai';

const call = (over: Partial<UpstreamCall> = {}): UpstreamCall => ({
  modelId: 'm',
  model: { provider: 'p', model: 'up-1', minCacheableTokens: 1024, defaultMaxTokens: 4096, family: 'claude' },
  system: [{ text: 'Be brief. ', cache: { ttlSeconds: 0 } }, { text: 'Use English.' }],
  messages: [
    {
      role: 'user',
      content: [{ text: 'long doc', cache: { ttlSeconds: 3600 } }, { text: ' question' }],
      toolCalls: [],
      toolCallId: '',
    },
    { role: 'assistant', content: [], toolCalls: [{ id: 't1', name: 'f', arguments: '{"a":1}' }], toolCallId: '' },
    { role: 'tool', content: [{ text: 'ok' }], toolCalls: [], toolCallId: 't1' },
    { role: 'tool', content: [{ text: 'ok too' }], toolCalls: [], toolCallId: 't2' },
  ],
  tools: [{ name: 'f', description: 'does f', parameters: { type: 'object' } }],
  toolsCache: { ttlSeconds: 0 },
  options: { temperature: 0.5, topP: 0, maxTokens: 0, stop: ['END'], seed: 0 },
  ...over,
});

describe('Anthropic translation', () => {
  it('when a call has markers, tools and tool turns, then the body keeps markers, merges tool results into one user turn and defaults max_tokens', () => {
    expect(anthropicBody(call())).toEqual({
      model: 'up-1',
      max_tokens: 4096,
      stream: true,
      system: [
        { type: 'text', text: 'Be brief. ', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Use English.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'long doc', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: ' question' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'ok' }] },
            { type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: 'ok too' }] },
          ],
        },
      ],
      temperature: 0.5,
      stop_sequences: ['END'],
      tools: [
        { name: 'f', description: 'does f', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } },
      ],
    });
  });

  it('when the event stream is read, then input usage excludes the cache classes, tool_use blocks become numbered tool calls, and stop reasons map', () => {
    const parse = anthropicParser();
    const events = [
      {
        type: 'message_start',
        message: {
          usage: { input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'tu', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a"' } },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
    ].flatMap((e) => parse(JSON.stringify(e)).events);
    expect(events).toEqual([
      { usage: { inputTokens: 5, cacheReadTokens: 100, cacheWriteTokens: 20 } },
      { delta: { text: 'Hi' } },
      { delta: { toolCalls: [{ index: 0, id: 'tu', name: 'f' }] } },
      { delta: { toolCalls: [{ index: 0, arguments: '{"a"' }] } },
      { usage: { outputTokens: 9 } },
      { finish: 'tool_calls' },
    ]);
    expect(
      parse(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } })).error,
    ).toEqual({
      type: 'overloaded_error',
      message: 'busy',
    });
  });
});

describe('OpenAI translation', () => {
  it('when a call has tools and tool turns, then the body has joined texts, tool_calls, tool turns and asks for usage', () => {
    const body = openaiBody(call({ options: { temperature: 0, topP: 0.9, maxTokens: 50, stop: [], seed: 7 } }));
    expect(body).toEqual({
      model: 'up-1',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 50,
      temperature: 0,
      top_p: 0.9,
      seed: 7,
      messages: [
        { role: 'system', content: 'Be brief. Use English.' },
        { role: 'user', content: 'long doc question' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', content: 'ok', tool_call_id: 't1' },
        { role: 'tool', content: 'ok too', tool_call_id: 't2' },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } }],
    });
    const gpt5 = openaiBody(
      call({ model: { ...call().model, family: 'gpt-5' }, options: { ...call().options, maxTokens: 5 } }),
    );
    expect(gpt5).toMatchObject({ max_completion_tokens: 5 });
    // The providers' defaults (temperature 1, top_p 1) are left out: some models refuse them together.
    const neutral = anthropicBody(call({ options: { ...call().options, temperature: 1, topP: 1 } }));
    expect([neutral.temperature, neutral.top_p]).toEqual([undefined, undefined]);
  });

  it('when chunks are read, then prompt tokens minus cached are plain input, and reasoning and tool deltas pass', () => {
    expect(
      openaiEvents(JSON.stringify({ choices: [{ delta: { content: 'a', reasoning_content: 'r' } }] })).events,
    ).toEqual([{ delta: { text: 'a', reasoning: 'r' } }]);
    const last = {
      choices: [],
      usage: {
        prompt_tokens: 1000,
        completion_tokens: 30,
        prompt_tokens_details: { cached_tokens: 800 },
        completion_tokens_details: { reasoning_tokens: 10 },
      },
    };
    expect(openaiEvents(JSON.stringify(last)).events).toEqual([
      { usage: { inputTokens: 200, cacheReadTokens: 800, cacheWriteTokens: 0, outputTokens: 30, reasoningTokens: 10 } },
    ]);
    expect(openaiEvents(JSON.stringify({ choices: [{ delta: {}, finish_reason: 'length' }] })).events).toEqual([
      { finish: 'length' },
    ]);
    expect(openaiEvents('[DONE]').events).toEqual([]);
  });

  it('when penalties and top_k are set, then an OpenAI body carries the penalties and a Messages body top_k', () => {
    const options = { ...call().options, frequencyPenalty: 0.5, presencePenalty: -0.25, topK: 40 };
    expect(openaiBody(call({ options }))).toMatchObject({ frequency_penalty: 0.5, presence_penalty: -0.25 });
    expect(openaiBody(call({ options }))).not.toHaveProperty('top_k');
    expect(anthropicBody(call({ options }))).toMatchObject({ top_k: 40 });
    expect(anthropicBody(call({ options }))).not.toHaveProperty('frequency_penalty');
    expect(openaiBody(call())).not.toHaveProperty('frequency_penalty');
    expect(anthropicBody(call())).not.toHaveProperty('top_k');
  });

  it('when a tool call is required or named, then each dialect asks for it in its own fields, parallel calls included', () => {
    const tools = [{ name: 'get_weather', description: '', parameters: { type: 'object', properties: {} } }];
    const named = call({ tools, toolChoice: { mode: 'tool', name: 'get_weather', parallelToolCalls: false } });
    expect(openaiBody(named)).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    expect(anthropicBody(named).tool_choice).toEqual({
      type: 'tool',
      name: 'get_weather',
      disable_parallel_tool_use: true,
    });
    const required = call({ tools, toolChoice: { mode: 'required' } });
    expect(openaiBody(required).tool_choice).toBe('required');
    expect(anthropicBody(required).tool_choice).toEqual({ type: 'any' });
    const parallelOnly = call({ tools, toolChoice: { mode: 'auto', parallelToolCalls: true } });
    expect(openaiBody(parallelOnly)).not.toHaveProperty('tool_choice');
    expect(openaiBody(parallelOnly).parallel_tool_calls).toBe(true);
    expect(anthropicBody(parallelOnly).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: false });
    expect(openaiBody(call({ tools }))).not.toHaveProperty('tool_choice');
    expect(anthropicBody(call({ tools }))).not.toHaveProperty('tool_choice');
  });

  it('when logit_bias is set, then an OpenAI body carries it as sent, and none is sent without it', () => {
    const options = { ...call().options, logitBias: { 50256: -100, 7: 2.5 } };
    expect(openaiBody(call({ options })).logit_bias).toEqual({ 50256: -100, 7: 2.5 });
    expect(openaiBody(call())).not.toHaveProperty('logit_bias');
  });

  it('when log probabilities are asked for, then the body asks for them and the chunks’ logprobs become the delta’s', () => {
    const options = { ...call().options, logprobs: 2 };
    expect(openaiBody(call({ options }))).toMatchObject({ logprobs: true, top_logprobs: 2 });
    expect(openaiBody(call({ options: { ...options, logprobs: 0 } }))).not.toHaveProperty('top_logprobs');
    expect(openaiBody(call())).not.toHaveProperty('logprobs');
    const chunk = {
      choices: [
        {
          delta: { content: 'Hé' },
          logprobs: {
            content: [
              { token: 'H', logprob: -0.1, bytes: [72], top_logprobs: [{ token: 'H', logprob: -0.1, bytes: [72] }] },
              { token: 'é', logprob: -0.5, bytes: null },
            ],
          },
        },
      ],
    };
    expect(openaiEvents(JSON.stringify(chunk)).events).toEqual([
      {
        delta: {
          text: 'Hé',
          logprobs: [
            {
              token: 'H',
              bytes: Uint8Array.of(72),
              logprob: -0.1,
              topLogprobs: [{ token: 'H', bytes: Uint8Array.of(72), logprob: -0.1 }],
            },
            { token: 'é', bytes: Uint8Array.of(0xc3, 0xa9), logprob: -0.5, topLogprobs: [] },
          ],
        },
      },
    ]);
  });
});

describe('response formats', () => {
  const format = { type: 'json_schema', json_schema: { name: 'person', schema: { type: 'object' }, strict: true } };

  it('when JSON output is asked for, then an OpenAI body carries response_format as sent', () => {
    expect(openaiBody(call({ responseFormat: format })).response_format).toEqual(format);
    expect(openaiBody(call())).not.toHaveProperty('response_format');
  });

  it('when JSON output is asked of a Messages-API model, then the call is refused naming response_format', () => {
    expect(() => anthropicBody(call({ responseFormat: { type: 'json_object' } }))).toThrow(
      expect.objectContaining({
        kind: 'InvalidArgument',
        fieldErrors: [expect.objectContaining({ field: 'response_format' })],
      }),
    );
  });
});

describe('upstream failures', () => {
  const fail = (status: number, body = '{}', headers: Record<string, string> = {}) =>
    upstreamFailure(status, new Headers(headers), body, 'm');

  it('when a provider answers an error status, then it maps to the one error table', () => {
    expect(fail(429, '{}', { 'retry-after': '12' })).toMatchObject({
      kind: 'ResourceExhausted',
      retryAfterSeconds: 12,
    });
    expect(fail(529)).toMatchObject({ kind: 'Unavailable', reason: 'UPSTREAM_OVERLOADED' });
    expect(fail(503, '{"error":{"type":"overloaded_error"}}')).toMatchObject({ reason: 'UPSTREAM_OVERLOADED' });
    expect(fail(503)).toMatchObject({ reason: 'DEPENDENCY_UNAVAILABLE' });
    expect(fail(401)).toMatchObject({ kind: 'Unavailable', reason: 'DEPENDENCY_UNAVAILABLE' });
    expect(fail(400, '{"error":{"message":"bad max_tokens"}}')).toMatchObject({
      kind: 'InvalidArgument',
      message: "The provider of model 'm' rejected the request: bad max_tokens",
    });
  });
});
