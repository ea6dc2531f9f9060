export type { FakeBehaviour, FakeUpstream, ReceivedRequest } from './server';
export { fakeEmbedding, startFakeOpenAIUpstream, type FakeOpenAIOptions } from './openai';
export { startFakeAnthropicUpstream, type FakeAnthropicOptions } from './anthropic';
