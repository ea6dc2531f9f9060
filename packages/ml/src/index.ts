export * from './eval';
export * from './data';
export * from './text';
export * from './classify/ngram-classifier';
export * from './extract/linear-tagger';
export * from './assets';
export * from './zeroshot';
export * as nn from './nn';
export { loadDecoderBase, trainDecoderLora, loadDecoder, decodeAdapterBundle, DECODER_BASE, type Decoder, type DecoderTrainRequest, type DecoderTrainResult, type DecoderManifest, type DecoderMetrics, type GenerateOptions, type GenerateChunk, type ChatMessage } from './decoder';
