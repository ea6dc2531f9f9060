export { loadDecoderBase, type DecoderBase } from './base';
export {
  trainDecoderLora,
  chatLoss,
  decodeAdapterBundle,
  DECODER_BASE,
  type DecoderTrainRequest,
  type DecoderTrainResult,
  type DecoderManifest,
  type DecoderMetrics,
} from './lora';
export { loadDecoder, sampleToken, type Decoder, type GenerateOptions, type GenerateChunk } from './serve';
export { encodeChat, encodePrompt, TOKENIZER_NAME, type ChatMessage } from './tokenizer';
export {
  forward,
  mergeAdapter,
  DEFAULT_CONFIG,
  LINEAR_MODULES,
  type DecoderConfig,
  type LinearModule,
  type LoraAdapter,
} from './model';
