/**
 * `@whetstone/ml/internals`: kernels, baselines and building blocks for the
 * benchmarks. UNSTABLE: names and signatures change with the models, without
 * notice. Services import `@whetstone/ml` only.
 */
/** Tensors, reverse-mode autograd, fused ORT kernels and AdamW. */
export * as nn from './nn';
export { loadGlove, type Embeddings } from './assets/load';
export { readBrown } from './encoder/brown';
export { NaiveBayes, NgramClassifier, ngramNames, type NgramFeatures } from './classify/ngram-classifier';
export { LinearTagger } from './extract/linear-tagger';
export { classificationPRF, spanPRF, type Report } from './eval/metrics';
export { validateJsonl, type ValidationReport } from './data';
export { zeroShotSpans, type ZeroShotSpan } from './zeroshot/entities';
/** Decoder building blocks: seeded initial weights of any shape (a base of another context length, for benchmarks). */
export { DEFAULT_CONFIG as DECODER_DEFAULT_CONFIG, initWeights as initDecoderWeights } from './decoder';
/** A bundle's encoder and classifiers, and a task's fused probabilities (the benchmarks' out-of-scope scores). */
export { classifiersOf, encoderOf, readBundle } from './pipeline/bundle';
export { taskScores } from './pipeline/task-scores';
export { chooseRejectThreshold, withTemperature } from './classify/calibration';
export { REJECTION_ACCURACY_BUDGET } from './pipeline/calibrate';
/** Encoder bases: the shipped pretrained one and the seeded initialisation (benchmarks: pretrained vs not, via trainModel's internal `encoderBase`). */
export { initWeights as initEncoderWeights, loadEncoderBase } from './encoder';
/** The synthetic relation-classification set of the relation head's test (bench:ml's relation rows). */
export { HELDOUT_NAMES, RELATIONS, TRAIN_NAMES, relationPairRows } from './synth/relation-pairs';
/** Hugging Face checkpoints (BERT family), their sources, and the label-conditioned span head trained on them. */
export { loadBertCheckpoint, type BertCheckpoint } from './checkpoints/load';
export { fetchCheckpoint, MINILM_L6_V2, modelsCacheDir, resolveBaseDir } from './checkpoints/sources';
export {
  BertEntityModel,
  BERT_ENTITY_DEFAULTS,
  trainBertEntities,
  type BertEntityTrainOptions,
} from './train/bert-entities';
export { mergeLora } from './models/bert/adapters';
/** Llama-family decoders from Hugging Face checkpoints and their byte-level BPE tokenizers (bench:decoder). */
export { loadDecoderCheckpoint, type DecoderCheckpoint } from './checkpoints/load';
export { parseLlamaConfig, type LlamaConfig } from './models/llama/configuration-llama';
export { LlamaForCausalLM, KVCache } from './models/llama/modeling-llama';
export { BpeTokenizer } from './tokenizers/bpe-tokenizer';
export { readSafetensors } from './checkpoints/safetensors';
