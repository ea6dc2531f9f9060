export type { FakeBehaviour, FakeUpstream, ReceivedRequest } from './server';
export { startFakeOpenAIUpstream, type FakeOpenAIOptions } from './openai';
export { startFakeAnthropicUpstream, type FakeAnthropicOptions } from './anthropic';
