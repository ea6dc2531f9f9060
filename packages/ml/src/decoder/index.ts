export { loadDecoderBase, type DecoderBase } from './base';
export {
  trainDecoderLora,
  evaluateDecoderBundle,
  chatLoss,
  decodeAdapterBundle,
  DECODER_BASE,
  type DecoderTrainRequest,
  type DecoderTrainResult,
  type DecoderManifest,
  type DecoderMetrics,
} from './lora';
export {
  loadDecoder,
  sampleToken,
  MAX_CACHE_BREAKPOINTS,
  type CacheBreakpoint,
  type CacheUsage,
  type Decoder,
  type GenerateOptions,
  type GenerateChunk,
  type GenerateStream,
} from './serve';
export { MAX_TOP_LOGPROBS, tokenLogprob, tokenOf, type TokenLogprob, type TopLogprob } from './logprobs';
export { PrefixCache, type PrefixCacheOptions, type PrefixCacheStats } from './prefix-cache';
export { encodeChat, encodePrompt, TOKENIZER_NAME, type ChatMessage } from './tokenizer';
export {
  forward,
  initWeights,
  mergeAdapter,
  DEFAULT_CONFIG,
  LINEAR_MODULES,
  type DecoderConfig,
  type LinearModule,
  type LoraAdapter,
} from './model';
