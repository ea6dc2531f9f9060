export * from './eval';
export * from './data';
export * from './text';
export * from './classify/ngram-classifier';
export * from './extract/linear-tagger';
export * from './assets';
export * from './zeroshot';
export * from './schema';
export * from './zeroshot/base-model';
export * from './pipeline';
export * from './synth';
export * as nn from './nn';
export {
  loadDecoderBase,
  trainDecoderLora,
  loadDecoder,
  decodeAdapterBundle,
  DECODER_BASE,
  type Decoder,
  type DecoderTrainRequest,
  type DecoderTrainResult,
  type DecoderManifest,
  type DecoderMetrics,
  type GenerateOptions,
  type GenerateChunk,
} from './decoder';
