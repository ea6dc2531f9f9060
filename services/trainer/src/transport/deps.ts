/** What the worker takes from the ML engine and the trainer protocol. */
export { DECODER_BASE, trainDecoderLora, trainModel, type CanonicalRow } from '@whetstone/ml';
export type { LeasedJob as LeasedJobLike } from '@whetstone/proto/training/v1';
