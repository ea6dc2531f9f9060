import { AppError, Reasons } from '@whetstone/errors';
import type { ChatDone, ChatInput, ChatPiece, Inference } from '../../src/application/ports';

/**
 * A scripted stand-in for the router's Chat: the model id picks the script.
 * It records every input, so tests can assert on the translation.
 */
export interface FakeChat {
  port: Inference;
  inputs: ChatInput[];
  /** Calls whose signal was aborted (client disconnects). */
  aborted: number;
  /** How many calls a model has received. */
  calls: Map<string, number>;
}

const usage = (over: Partial<ChatDone['usage']> = {}): ChatDone['usage'] => ({
  input_tokens: 12,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  output_tokens: 5,
  reasoning_tokens: 0,
  cost_credits: 0.001,
  ...over,
});

const piece = (text: string, extra: Partial<ChatPiece> = {}): ChatPiece => ({
  responseId: 'r1',
  text,
  reasoning: '',
  toolCalls: [],
  logprobs: [],
  ...extra,
});

const done = (input: ChatInput, over: Partial<ChatDone> = {}): ChatDone => ({
  finishReason: 'stop',
  stopSequence: null,
  model: input.model,
  usage: usage(),
  inferenceId: input.store ? '0190f0aa-0000-7000-8000-000000000001' : null,
  routedModel: null,
  savings: null,
  latencyMs: 3,
  ...over,
});

const waitAbort = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve())));

export function fakeChat(): FakeChat {
  const state: FakeChat = { port: {} as Inference, inputs: [], aborted: 0, calls: new Map() };
  async function* chat(_p: unknown, input: ChatInput, signal: AbortSignal): AsyncGenerator<ChatPiece> {
    state.inputs.push(input);
    const n = (state.calls.get(input.model) ?? 0) + 1;
    state.calls.set(input.model, n);
    switch (input.model) {
      case 'fake-warming':
        if (n === 1)
          throw new AppError('TooEarly', Reasons.MODEL_WARMING, 'Model is loading', { retryAfterSeconds: 1 });
        break;
      case 'fake-overloaded':
        if (n === 1)
          throw new AppError('Unavailable', Reasons.UPSTREAM_OVERLOADED, 'Upstream is overloaded', {
            retryAfterSeconds: 1,
          });
        break;
      case 'fake-missing':
        throw new AppError('NotFound', 'MODEL_NOT_FOUND', 'Model fake-missing not found');
      case 'fake-tools':
        yield piece('', { toolCalls: [{ index: 0, id: 'call_1', name: 'lookup', arguments: '{"q":' }] });
        yield piece('', { toolCalls: [{ index: 0, arguments: '"x"}' }] });
        yield piece('', { done: done(input, { finishReason: 'tool_calls' }) });
        return;
      case 'fake-reasoning':
        yield piece('', { reasoning: 'thinking…' });
        yield piece('42');
        yield piece('', { done: done(input, { usage: usage({ reasoning_tokens: 3 }) }) });
        return;
      case 'fake-cache': {
        const write = n === 1 ? 2048 : 0;
        yield piece('ok');
        yield piece('', {
          done: done(input, { usage: usage({ cache_write_tokens: write, cache_read_tokens: 2048 - write }) }),
        });
        return;
      }
      case 'fake-broken':
        yield piece('part');
        throw new AppError('Unavailable', Reasons.UPSTREAM_OVERLOADED, 'Upstream went away');
      case 'fake-crash':
        yield piece('part');
        throw new Error('db password is hunter2');
      case 'fake-hang':
        yield piece('wait');
        await waitAbort(signal);
        state.aborted += 1;
        throw new AppError('Cancelled', 'CANCELLED', 'cancelled');
    }
    yield piece('Hel');
    yield piece('lo');
    yield piece('', { done: done(input) });
  }
  state.port = {
    chat,
    ready: async () => true,
    listModels: async () => [{ id: 'fake-text', object: 'model', created: 0, owned_by: 'whetstone' }],
  } as unknown as Inference;
  return state;
}
