/**
 * Datasets: the canonical JSONL examples, converters from CSV and CoNLL/BIO,
 * validation with row-level errors, and a deterministic held-out split.
 * Shared by the ML CLI, the training pipeline and the dataset service.
 */
export type {
  ArgumentSpan,
  ChatMessage,
  DatasetKind,
  EntitySpan,
  Example,
  RowError,
  ValidationReport,
} from './example';
export { NO_RELATION_LABELS, isNoRelation } from './example';
export { JsonlValidator, decodeUtf8, validateExample, validateJsonl } from './validate';
export { conllToJsonl, csvToJsonl } from './convert';
export { isHeldOut, isHeldOutJson, splitHeldOut } from './split';
