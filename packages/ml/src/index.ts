/**
 * `@whetstone/ml`: the built-in models as the services use them. Everything
 * here is a stable contract; the rest of the package is private. Benchmarks
 * that need the kernels use `@whetstone/ml/internals`, which may change at any time.
 */

// Extraction models: train a bundle, read and score it, serve it.
export { trainModel, loadModel, evaluateBundle, readManifest } from './pipeline';
export type {
  CanonicalRow,
  Checkpoint,
  ExtractionModel,
  ExtractionResult,
  ExtractionSchema,
  Hyperparameters,
  LabelMetrics,
  Metrics,
  ModelManifest,
  PredictOptions,
  ProgressEvent,
  TrainRequest,
  TrainResult,
  TrainingType,
} from './pipeline';

// The zero-shot base model (no training) and the request schema it and trained models accept.
export { extractBaseModel, EXTRACT_BASE_ID } from './zeroshot/base-model';
export { normalizeSchema, SchemaError, type NormalizedSchema, type SchemaIssue } from './schema/normalize';

// Datasets: validation with row-level errors, converters, the held-out rule, synthetic examples.
export {
  JsonlValidator,
  conllToJsonl,
  csvToJsonl,
  decodeUtf8,
  isHeldOutJson,
  type DatasetKind,
  type Example,
  type RowError,
} from './data';
export { generateExamples, type GenerateRequest } from './synth/generate';
export { fnv1a } from './text/tokenize';
export { decoderTokens, extractionTokens } from './text/billing-tokens';

// The decoder: chat LoRA training, adapter bundles, streaming generation.
export {
  DECODER_BASE,
  decodeAdapterBundle,
  loadDecoder,
  trainDecoderLora,
  evaluateDecoderBundle,
  type Decoder,
  type DecoderManifest,
  type DecoderMetrics,
  type DecoderTrainRequest,
  type DecoderTrainResult,
  type GenerateChunk,
  type GenerateOptions,
  type GenerateStream,
  MAX_CACHE_BREAKPOINTS,
  MAX_TOP_LOGPROBS,
  type TokenLogprob,
  PrefixCache,
  type CacheBreakpoint,
  type CacheUsage,
  type PrefixCacheOptions,
  type PrefixCacheStats,
} from './decoder';
// Decoder evaluation: held-out loss and perplexity with generation F1 (SQuAD's token overlap), bounded.
export {
  DECODER_GENERATION_EVAL,
  evaluateDecoder,
  scoreDecoderRun,
  type DecoderEvaluation,
  type DecoderGenerationScores,
} from './eval/decoder-generation';

// The built-in judge: a score for a served extraction from its confidences and an independent model's agreement.
export {
  BUILTIN_JUDGE_CONFIDENCE_WEIGHT,
  BUILTIN_JUDGE_ID,
  builtinJudgeCanScore,
  builtinJudgeScore,
  type BuiltinJudgeInput,
  type BuiltinJudgeScore,
} from './judge/builtin-judge';
