import { errors } from '@whetstone/errors';
import { BUILTIN_MODELS } from '../domain/catalog';
import { type ChatRequest, limitCacheMarkers } from '../domain/chat';
import { decoderPrompt } from './chat';
import { type ChatContext, relay } from './chat-relay';
import type { RouterDeps } from './deps';
import type { InferenceRecord, UpstreamEvent } from './ports';

const request = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'm',
  system: [{ text: 'sys ', cache: { ttlSeconds: 600 } }],
  messages: [
    {
      role: 'user',
      content: [{ text: 'ab' }, { text: 'cdé', cache: { ttlSeconds: 0 } }, { text: 'tail' }],
      toolCalls: [],
      toolCallId: '',
    },
    { role: 'tool', content: [{ text: 'r' }], toolCalls: [], toolCallId: 'x' },
  ],
  options: { temperature: 0, topP: 0, maxTokens: 0, stop: [], seed: 0 },
  tools: [],
  schemaJson: new Uint8Array(),
  schema: undefined,
  surface: 'messages',
  store: true,
  includeReasoning: false,
  ...over,
});

describe('decoderPrompt', () => {
  it('when blocks carry markers, then each becomes a breakpoint at its turn and UTF-16 offset, and tool turns read as user turns', () => {
    const { turns, breakpoints } = decoderPrompt(request());
    expect(turns).toEqual([
      { role: 'system', content: 'sys ' },
      { role: 'user', content: 'abcdétail' },
      { role: 'user', content: 'r' },
    ]);
    expect(breakpoints).toEqual([
      { turn: 0, chars: 4, ttlSeconds: 600 },
      { turn: 1, chars: 5, ttlSeconds: 0 },
    ]);
  });

  it('when more than four markers are sent, then the first four in prompt order (tools, system, turns) are kept', () => {
    const blocks = Array.from({ length: 4 }, (_, i) => ({ text: `b${i}`, cache: { ttlSeconds: 0 } }));
    const limited = limitCacheMarkers(request({ system: blocks, toolsCache: { ttlSeconds: 0 } }));
    expect(limited.toolsCache).toEqual({ ttlSeconds: 0 });
    expect(limited.system.map((b) => !!b.cache)).toEqual([true, true, true, false]);
    expect(limited.messages.flatMap((m) => m.content).some((b) => b.cache)).toBe(false);
    const { breakpoints } = decoderPrompt(limitCacheMarkers(request({ system: blocks, messages: [] })));
    expect(breakpoints.map((b) => b.chars)).toEqual([2, 4, 6, 8]);
  });
});

describe('relay', () => {
  function setup(store: boolean, signal?: AbortSignal) {
    const recorded: InferenceRecord[] = [];
    const deps = {
      metering: { record: async (r: InferenceRecord) => void recorded.push(r) },
      now: () => new Date(0),
      logger: { error() {} },
    } as unknown as RouterDeps;
    const entry = BUILTIN_MODELS[1]!;
    const ctx: ChatContext = {
      caller: { teamId: 't', keyId: 'k', userId: 'u' },
      request: request({ store, options: { ...request().options, ...(signal ? { signal } : {}) } }),
      target: { ref: { modelId: 'job', bucket: 'b', key: 'k' }, entry },
      projectId: '',
      task: 'generate',
      responseId: 'resp-1',
      startedAt: new Date(0),
      t0: 0,
    };
    return { deps, ctx, recorded };
  }
  const estimate = (text: string) => ({
    inputTokens: 10,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: text.length,
    reasoningTokens: 0,
  });

  it('when the source fails after a first piece, then what was produced is metered as failed with the reason, and the error goes on', async () => {
    const { deps, ctx, recorded } = setup(true);
    const events = (async function* (): AsyncGenerator<UpstreamEvent> {
      yield { usage: { inputTokens: 7 } };
      yield { delta: { text: 'abc' } };
      throw errors.unavailable('UPSTREAM_OVERLOADED', 'busy');
    })();
    const pieces: unknown[] = [];
    await expect(
      (async () => {
        for await (const p of relay(deps, ctx, { events, estimate })) pieces.push(p);
      })(),
    ).rejects.toMatchObject({ reason: 'UPSTREAM_OVERLOADED' });
    expect(pieces).toEqual([{ delta: { text: 'abc' } }]);
    expect(recorded[0]).toMatchObject({
      inputTokens: 7,
      outputTokens: 3,
      errorCode: 'UPSTREAM_OVERLOADED',
      stored: true,
    });
  });

  it('when the caller aborts, then the record says CLIENT_DISCONNECTED; when not stored, the last piece has no inference id', async () => {
    const abort = new AbortController();
    const cut = setup(true, abort.signal);
    const events = (async function* (): AsyncGenerator<UpstreamEvent> {
      yield { delta: { text: 'x' } };
      abort.abort();
      throw new Error('aborted');
    })();
    await expect(
      (async () => {
        for await (const _ of relay(cut.deps, cut.ctx, { events, estimate })) void _;
      })(),
    ).rejects.toThrow('aborted');
    expect(cut.recorded[0]?.errorCode).toBe('CLIENT_DISCONNECTED');

    const plain = setup(false);
    const ok = (async function* (): AsyncGenerator<UpstreamEvent> {
      yield { delta: { text: 'hi', reasoning: 'hidden' } };
      yield { finish: 'length' };
    })();
    const out = [];
    for await (const p of relay(plain.deps, plain.ctx, { events: ok, estimate })) out.push(p);
    expect(out[0]).toEqual({ delta: { text: 'hi' } });
    expect(out[1]).toMatchObject({ done: { inferenceId: '', responseId: 'resp-1', finishReason: 'length' } });
    expect(plain.recorded[0]).toMatchObject({ stored: false, outputTokens: 2 });
  });
});
