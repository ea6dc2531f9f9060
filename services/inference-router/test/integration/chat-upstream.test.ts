import { ChatRole, FinishReason, InferenceStatus, InferenceSurface } from '@whetstone/proto/inference/v1';
import { eventually } from '@whetstone/testing';
import { chatRequest, collect, outboxOf, toolDeltas } from './chat-support';
import { freeTeam, json, rpcError, startHarness, team, type Harness } from './harness';

const SYSTEM = 'you are a terse assistant that echoes';

describe('Chat with upstream providers over real gRPC and HTTP', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  }, 60_000);
  afterAll(() => h?.close());
  beforeEach(() => {
    h.openai.reset();
    h.anthropic.reset();
  });

  const chat = (over: Record<string, unknown> = {}, options: { signal?: AbortSignal } = {}) =>
    h.client.chat({ caller: team, ...chatRequest(over) } as never, options);

  it('when an OpenAI-compatible model answers, then its pieces stream through, usage splits cached input, and the cost follows the class rates', async () => {
    const call = () => collect(chat({ model: 'gpt-fake', system: [{ text: SYSTEM }] }));
    const first = await call();
    expect(first.text).toBe('Echo: HELLO THERE');
    expect(first.pieces.filter((p) => p.text).length).toBe(3);
    expect(new Set(first.pieces.map((p) => p.responseId)).size).toBe(1);
    expect(first.last).toMatchObject({ finishReason: FinishReason.STOP, model: 'gpt-fake' });
    // 9 input tokens (7 system + 2 user) at 3,000 per 1k, 3 output at 15,000 per 1k.
    expect(first.last.usage).toMatchObject({
      inputTokens: 9n,
      cacheReadTokens: 0n,
      outputTokens: 3n,
      costMicroCredits: 27n + 45n,
    });

    const second = await call();
    // The provider cached the 7-token system turn: read at the GPT-4-style 0.5× rate (1,500 per 1k).
    expect(second.last.usage).toMatchObject({ inputTokens: 2n, cacheReadTokens: 7n, cacheWriteTokens: 0n });
    expect(second.last.usage?.costMicroCredits).toBe(6n + 11n + 45n);

    const sent = h.openai.requests[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${h.openai.apiKey}`);
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-fake',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'hello there' },
      ],
    });
    expect(h.direct[h.direct.length - 1]).toBe(true);

    const { usage, completed } = await outboxOf(h, second.last.responseId);
    expect(second.last.inferenceId).toBe(second.last.responseId);
    expect(usage[0]).toMatchObject({ inputTokens: 9n, outputTokens: 3n, costMicroCredits: 62n, model: 'gpt-fake' });
    expect(completed[0]).toMatchObject({
      surface: InferenceSurface.CHAT_COMPLETIONS,
      status: InferenceStatus.SUCCEEDED,
      inputTokens: 9n,
      cacheReadTokens: 7n,
      costMicroCredits: 62n,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'hello there' },
      ],
    });
  });

  it('when an Anthropic model gets cache markers, then they reach it, the write and the read are priced Claude-style, and a call without store is metered but not recorded', async () => {
    const system = [{ text: SYSTEM, cacheControl: { ttlSeconds: 0 } }];
    const call = () =>
      collect(chat({ model: 'claude-fake', system, store: false, surface: InferenceSurface.MESSAGES }));
    const first = await call();
    expect(first.text).toBe('Echo: HELLO THERE');
    // 7 tokens written at 1.25× (3,750 per 1k), 2 plain input, 3 output.
    expect(first.last.usage).toMatchObject({
      inputTokens: 2n,
      cacheWriteTokens: 7n,
      cacheReadTokens: 0n,
      outputTokens: 3n,
    });
    expect(first.last.usage?.costMicroCredits).toBe(6n + 27n + 45n);
    const second = await call();
    // Read at 0.1× (300 per 1k).
    expect(second.last.usage).toMatchObject({ inputTokens: 2n, cacheWriteTokens: 0n, cacheReadTokens: 7n });
    expect(second.last.usage?.costMicroCredits).toBe(6n + 3n + 45n);

    const sent = h.anthropic.requests[0]!;
    expect([sent.headers['x-api-key'], sent.headers['anthropic-version']]).toEqual([h.anthropic.apiKey, '2023-06-01']);
    expect(sent.body).toMatchObject({
      model: 'claude-x',
      max_tokens: 256,
      stream: true,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
    });

    expect(second.last.inferenceId).toBe('');
    const { usage, completed } = await outboxOf(h, second.last.responseId);
    expect([usage.length, completed.length]).toEqual([1, 0]);
  });

  it('when tools are given, then tool-call deltas stream from both dialects, and a tool result goes back in each one’s shape', async () => {
    const tools = json([{ name: 'lookup', description: 'find things', parameters: { type: 'object' } }]);
    const ids: string[] = [];
    for (const model of ['gpt-fake', 'claude-fake']) {
      const called = await collect(chat({ model, toolsJson: tools }));
      expect(called.last.finishReason).toBe(FinishReason.TOOL_CALLS);
      const deltas = called.pieces.flatMap(toolDeltas);
      expect(deltas[0]).toMatchObject({ index: 0, name: 'lookup', id: expect.any(String) });
      expect(deltas.map((d) => d.arguments ?? '').join('')).toBe('{"text":"hello there"}');
      ids.push(String(deltas[0]!.id));

      const answered = await collect(
        chat({
          model,
          toolsJson: tools,
          messages: [
            { role: ChatRole.USER, content: [{ text: 'hello there' }] },
            {
              role: ChatRole.ASSISTANT,
              content: [],
              toolCallsJson: json([{ id: deltas[0]!.id, name: 'lookup', arguments: '{"text":"hello there"}' }]),
            },
            { role: ChatRole.TOOL, content: [{ text: '42' }], toolCallId: deltas[0]!.id },
          ],
        }),
      );
      expect(answered.text).toBe('Tool result: 42');
    }
    expect(h.openai.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'hello there' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: ids[0], type: 'function', function: { name: 'lookup', arguments: '{"text":"hello there"}' } },
        ],
      },
      { role: 'tool', content: '42', tool_call_id: ids[0] },
    ]);
    expect(h.anthropic.requests[1]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hello there' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: ids[1], name: 'lookup', input: { text: 'hello there' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: ids[1], content: [{ type: 'text', text: '42' }] }],
      },
    ]);
  });

  it('when the caller goes away mid-reply, then the upstream request is aborted, and input plus the output so far is charged and recorded as failed', async () => {
    for (const [model, up] of [
      ['gpt-fake', h.openai],
      ['claude-fake', h.anthropic],
    ] as const) {
      up.behave({ kind: 'stall-after-first-piece' }, 1);
      const abort = new AbortController();
      let responseId = '';
      const err = await rpcError(
        (async () => {
          for await (const piece of chat({ model }, { signal: abort.signal })) {
            responseId = piece.responseId;
            abort.abort();
          }
        })(),
      );
      expect(err).toBeDefined();
      await eventually(async () => up.requests[0]?.closedEarly === true);
      const { usage, completed } = await eventually(async () => {
        const rows = await outboxOf(h, responseId);
        return rows.completed.length ? rows : null;
      });
      expect(usage[0]!.outputTokens).toBeGreaterThan(0n);
      expect(usage[0]!.costMicroCredits).toBeGreaterThan(0n);
      expect(completed[0]).toMatchObject({ status: InferenceStatus.FAILED, errorCode: 'CLIENT_DISCONNECTED' });
      up.reset();
    }
  });

  it('when providers fail, then 429 keeps its Retry-After, 529 and an overloaded 503 are UPSTREAM_OVERLOADED, a 5xx, a refused connection or silence is DEPENDENCY_UNAVAILABLE, and a 400 carries its message', async () => {
    const count = async () =>
      (await h.pool.pool.query(`SELECT count(*)::int AS n FROM "${h.schema.name}".outbox_events`)).rows[0].n as number;
    const before = await count();
    const fail = async (up: typeof h.openai, model: string, status: number, message?: string) => {
      up.behave({ kind: 'status', status, retryAfterSeconds: 7, ...(message ? { message } : {}) }, 1);
      return rpcError(collect(chat({ model })));
    };
    expect(await fail(h.openai, 'gpt-fake', 429)).toMatchObject({ kind: 'ResourceExhausted', retryAfterSeconds: 7 });
    expect(await fail(h.anthropic, 'claude-fake', 529)).toMatchObject({
      kind: 'Unavailable',
      reason: 'UPSTREAM_OVERLOADED',
    });
    expect(await fail(h.openai, 'gpt-fake', 503, 'The server is overloaded')).toMatchObject({
      reason: 'UPSTREAM_OVERLOADED',
    });
    expect(await fail(h.openai, 'gpt-fake', 500)).toMatchObject({
      kind: 'Unavailable',
      reason: 'DEPENDENCY_UNAVAILABLE',
    });
    const rejected = await fail(h.anthropic, 'claude-fake', 400, 'messages.0: bad block');
    expect([rejected.kind, rejected.message]).toEqual([
      'InvalidArgument',
      "The provider of model 'claude-fake' rejected the request: messages.0: bad block",
    ]);
    expect(await rpcError(collect(chat({ model: 'gpt-gone' })))).toMatchObject({ reason: 'DEPENDENCY_UNAVAILABLE' });
    h.openai.behave({ kind: 'hang' }, 1);
    expect(await rpcError(collect(chat({ model: 'gpt-fake' })))).toMatchObject({ reason: 'DEPENDENCY_UNAVAILABLE' });
    // Nothing was charged for calls that failed before their first piece.
    expect(await count()).toBe(before);
  });

  it('when a provider’s host is private and not allowed, or the team has no paid balance, then the call is refused before reaching it', async () => {
    expect(await rpcError(collect(chat({ model: 'gpt-private' })))).toMatchObject({
      kind: 'FailedPrecondition',
      reason: 'UPSTREAM_ADDRESS_FORBIDDEN',
    });
    const free = await rpcError(
      collect(h.client.chat({ caller: freeTeam, ...chatRequest({ model: 'gpt-fake' }) } as never)),
    );
    expect(free).toMatchObject({ kind: 'PaymentRequired', reason: 'DIRECT_MODEL_REQUIRES_CREDITS' });
    expect(h.openai.requests).toHaveLength(0);
  });

  it('when the catalog is listed, then upstream models are on-demand decoders of their provider with cache prices', async () => {
    const base = (await h.client.listBaseModels({ caller: team })).models.find((m) => m.id === 'claude-fake');
    expect(base).toMatchObject({
      supportsInference: true,
      supportsOnDemandInference: true,
      supportsTraining: false,
      minCacheableTokens: 4,
      price: {
        per1kInputTokensMicroCredits: 3_000n,
        per1kCacheReadTokensMicroCredits: 300n,
        per1kCacheWriteTokensMicroCredits: 3_750n,
      },
    });
    const callable = (await h.client.listModels({ caller: team })).models;
    expect(callable.find((m) => m.id === 'gpt-fake')?.ownedBy).toBe('fake-openai');
  });
});
