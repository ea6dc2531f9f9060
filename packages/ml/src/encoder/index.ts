export {
  ENCODER_CONFIG,
  LORA_TARGETS,
  initWeights,
  mergeAdapter as mergeEncoderAdapter,
  type EncoderConfig,
  type LoraAdapter as EncoderAdapter,
  type Weights as EncoderWeights,
} from './model';
export {
  EMBEDDING_DIMENSIONS,
  EMBEDDING_STATE_WEIGHT,
  EncoderTrainer,
  EntityEncoder,
  type ClassTask,
  type EncoderMode,
  type EncoderTrainOptions,
  type EncoderTrainState,
  type EntityMention,
  type RelationMention,
} from './train';
export { loadEncoderBase, encodeEncoderBase, decodeEncoderBase, ENCODER_BASE_FILE } from './base';
export { pretrainingExamples } from './pretrain';
