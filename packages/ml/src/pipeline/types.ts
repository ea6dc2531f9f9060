/**
 * The contract between the trainer (which produces model bundles) and the
 * model-server (which loads them and answers extraction requests). Both sides
 * use only these types; the bundle's bytes are what the `artifacts` bucket
 * stores, what `/download` serves and what the model-server loads.
 */
import type { TaskCalibration } from '../classify/calibration';

export type { TaskCalibration } from '../classify/calibration';

/** `full` trains every weight but GloVe; `lora` trains low-rank adapters (and smaller classifier tables) over the frozen base. */
export type TrainingType = 'lora' | 'full';
/** What a bundle serves: an extraction model (entities, classifications, relations, structures) or a chat decoder. */
export type ModelTask = 'extraction' | 'decoder';

/** One canonical JSONL row (datasets/README.md, extended). */
export interface CanonicalRow {
  text?: string;
  entities?: { start: number; end: number; label: string; text?: string }[];
  classifications?: { task: string; labels: string[]; multi_label?: boolean }[] | Record<string, string | string[]>;
  relations?: {
    head: { start: number; end: number; label?: string };
    tail: { start: number; end: number; label?: string };
    label: string;
  }[];
  structures?: Record<string, Record<string, unknown>[]>;
  messages?: { role: 'system' | 'user' | 'assistant'; content: string }[];
}

/** Training settings, as a job stores them; the optional ones take the pipeline's defaults. */
export interface Hyperparameters {
  nrEpochs: number;
  learningRate: number;
  batchSize?: number;
  loraRank?: number;
  loraAlpha?: number;
  seed: number;
}

/**
 * Training progress: the step out of the total, the running loss, the current learning rate, throughput in
 * training rows per second, time left, and the latest held-out figures.
 */
export interface ProgressEvent {
  step: number;
  totalSteps: number;
  epoch: number;
  loss: number;
  learningRate: number;
  examplesPerSecond: number;
  etaSeconds: number;
  /** Held-out figures after the latest finished epoch (from the end of the first, when there are held-out rows). */
  metrics?: Metrics;
  /** Decoders: the share of this step's scored tokens (the assistant replies') that the model ranked first. */
  tokenAccuracy?: number;
  /**
   * Decoders, only on the step that ends an epoch and only with held-out rows: the mean loss per scored token
   * over every held-out row, and the share of those tokens ranked first.
   */
  validation?: { loss: number; tokenAccuracy: number };
}

/** `weights/<step>` resumes training; `sampler_weights/<step>` is servable (a bundle). */
export interface Checkpoint {
  id: string;
  type: 'training' | 'sampler';
  step: number;
  bytes: Uint8Array;
}

/** Precision, recall and F1 of one label, and how many gold items it has (`support`). */
export interface LabelMetrics {
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

/** What a held-out figure scores; the first the data has is the headline. */
export type MetricKind =
  | 'relation_given_spans_micro_f1'
  | 'relation_micro_f1'
  | 'entity_span_micro_f1'
  | 'classification_micro_f1'
  | 'accuracy';

/**
 * Held-out scores: the headline micro F1, precision and recall (relations when the data has them, given spans
 * first, else entities, else classification), each figure apart in `scores`, per label (`relation/<label>`,
 * `<task>/<label>` for those), and the last training loss.
 */
export interface Metrics {
  f1: number;
  precision: number;
  recall: number;
  /**
   * Which figure `f1` is: relation micro F1 with given spans (no-relation excluded) or end to end, entity span
   * micro F1, classification micro F1, or accuracy.
   */
  headline?: MetricKind;
  /** Unweighted mean F1 over the headline's labels. */
  macro_f1?: number;
  /** Relations with given spans: the share of pairs whose label (no-relation included) is predicted exactly. */
  accuracy?: number;
  /** When the data has more than one kind: each one's figures, e.g. relation F1 beside the arguments' span F1. */
  scores?: Partial<Record<MetricKind, { f1: number; precision: number; recall: number; macro_f1: number }>>;
  /** Evaluations only: each held-out row's headline [tp, fp, fn], in file order (the adaptive gate pairs them). */
  per_example?: [number, number, number][];
  per_label: Record<string, LabelMetrics>;
  loss?: number;
  /** Per single-label task: the temperature, ECE before/after, and the rejection threshold when one was chosen. */
  calibration?: Record<string, TaskCalibration>;
}

/** What a bundle holds: base model, trained schema, tokenizer, architecture, hyperparameters and held-out metrics. */
export interface ModelManifest {
  format: 'whetstone-model/1';
  baseModel: string;
  task: ModelTask;
  trainingType: TrainingType;
  schema: {
    entities: string[];
    classifications: { task: string; labels: string[]; multi_label: boolean }[];
    relations: string[];
    /** Trained structures: field → type. A field trains the entity label or classification task `structure.field`. */
    structures?: Record<string, Record<string, 'str' | 'list'>>;
  };
  tokenizer: string;
  /** What was trained: the entity encoder and classifier kinds, and the LoRA adapter's settings. */
  architecture?: {
    entities: string | null;
    classifications: string | null;
    /** The relation head, when relations were trained. */
    relations?: string;
    lora?: { rank: number; alpha: number; targets: string[]; trained_share_percent: number | null };
  };
  hyperparameters: Hyperparameters;
  metrics: Metrics | null;
  /** Per single-label task, what serving applies: the temperature, and the out-of-scope threshold and label. */
  calibration?: Record<string, TaskCalibration>;
  createdAt: string;
}

/** One training run: rows, settings, an optional checkpoint to resume, and callbacks for progress, logs and checkpoints. */
export interface TrainRequest {
  baseModel: string;
  trainingType: TrainingType;
  train: CanonicalRow[];
  heldout: CanonicalRow[];
  hyperparameters: Hyperparameters;
  /** Bytes of a `weights/<step>` checkpoint (or a finished bundle) to continue from. */
  resumeFrom?: Uint8Array;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
  onCheckpoint?: (checkpoint: Checkpoint) => Promise<void>;
  /**
   * Reject out-of-scope inputs of single-label tasks even when no `oos`/`none`/`other` label was trained:
   * a threshold is chosen on the held-out rows, and rejected inputs get `label` (default `oos`).
   */
  outOfScope?: { label?: string };
}

/** A finished training run. */
export interface TrainResult {
  /** The servable bundle (manifest plus weights), what the model-server loads. */
  bundle: Uint8Array;
  manifest: ModelManifest;
  metrics: Metrics;
}

/** Native extraction schema: `classifications` as a list or a dict keyed by task. */
export interface ExtractionSchema {
  entities?: string[] | Record<string, string>;
  classifications?:
    | { task: string; labels: string[]; multi_label?: boolean }[]
    | Record<string, string[] | { labels: string[]; multi_label?: boolean }>;
  relations?: string[] | Record<string, string>;
  structures?: Record<
    string,
    Record<string, string | { type?: 'str' | 'list'; choices?: string[]; description?: string }>
  >;
}

/** Extraction options: the minimum confidence (absent or 0: each head's default), and GLiNER2's object results. */
export interface PredictOptions {
  threshold?: number;
  includeConfidence?: boolean;
  includeSpans?: boolean;
}

/** GLiNER2 result shapes: `entities`, one key per classification task, `relation_extraction`, one key per structure. */
export type ExtractionResult = Record<string, unknown>;

/** A servable extraction model: a trained bundle (`loadModel`) or the zero-shot base (`extractBaseModel`). */
export interface ExtractionModel {
  readonly manifest: ModelManifest;
  extract(text: string, schema: ExtractionSchema, options?: PredictOptions): ExtractionResult;
  /**
   * The results of {@link extract} on each text, in order, computed together where the model can batch (a
   * trained encoder runs its texts through one forward pass): the same results as one text at a time.
   */
  extractMany(texts: readonly string[], schema: ExtractionSchema, options?: PredictOptions): ExtractionResult[];
  /**
   * Each text's embedding from the model's encoder: the mean of its token states, unit length (zeros for a text
   * without tokens). Models without an encoder leave it out.
   */
  embed?(texts: readonly string[]): Float32Array[];
  /**
   * Relation classification with given spans: the relation (or null for none) of the ordered pair `head` → `tail`
   * among the trained relations, with its probability. Models without a trained relation head leave it out.
   */
  classifyRelation?(
    text: string,
    head: { start: number; end: number },
    tail: { start: number; end: number },
  ): { relation: string | null; confidence: number };
}
