import type { ChatInput } from '../../../../application/ports';

/** A chat core input with the public defaults, for unit tests: `over` sets what a test is about. */
export const chatInput = (over: Partial<ChatInput> = {}): ChatInput => ({
  model: 'm',
  system: [],
  messages: [],
  temperature: 1,
  topP: 1,
  maxTokens: 0,
  stop: [],
  seed: 0,
  tools: [],
  surface: 'chat_completions',
  store: false,
  includeReasoning: false,
  ...over,
});
