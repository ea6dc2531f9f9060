import { loadGlove } from '../assets/load';
import { NgramClassifier } from '../classify/ngram-classifier';
import { EntityEncoder, loadEncoderBase, type ClassTask, type EncoderAdapter, type EncoderWeights } from '../encoder';
import { isHeadOrNorm } from '../encoder/model';
import { tensor } from '../nn';
import { b64, f32, packTensors, unpackTensors, type TensorRecord } from './tensor-pack';
import type { Hyperparameters, Metrics, ModelManifest, TaskCalibration, TrainingType } from './types';

/**
 * Classifiers' hashed-table sizes (log2 buckets). `full` trains full-size
 * tables; `lora` trains tables 1/8 the size (12.5% of the parameters), stored
 * alone and mergeable into full-size tables with identical outputs (a
 * feature's small bucket is its full bucket's low bits). The entity encoder's
 * LoRA is a true low-rank adapter (../encoder).
 */
export const BUCKETS: Record<TrainingType, number> = { full: 16, lora: 13 };
export const FULL_BUCKETS = BUCKETS.full;

/** Version 3: the encoder's features gained character n-grams (a 2^15 hash table) and its tags a CRF; older bundles must be retrained. */
const BUNDLE_FORMAT = 'whetstone-bundle/3';

interface BundleMeta {
  format: typeof BUNDLE_FORMAT;
  manifest: ModelManifest;
  /** True when the bundle stores a LoRA adapter (and smaller classifier tables) rather than whole weights. */
  adapter: boolean;
  /** The entity encoder: its labels and relations, and its adapter's rank and alpha in LoRA mode. Tensors `w:<name>` (weights) and `a:<name>` (adapter). */
  encoder: {
    labels: string[];
    relations?: string[];
    tasks?: ClassTask[];
    lora: { rank: number; alpha: number } | null;
  } | null;
  classifiers: Record<string, ReturnType<NgramClassifier['toJSON']>>;
}

export function readBundle(bundle: Uint8Array): { meta: BundleMeta; tensors: TensorRecord } {
  const file = unpackTensors<BundleMeta>(bundle);
  if (!file) throw new Error('not a whetstone model bundle (expected a gzip’d tensor file)');
  if (file.meta?.format !== BUNDLE_FORMAT)
    throw new Error(`unknown bundle format ${String(file.meta?.format)}; retrain the model with this version`);
  return file;
}

/** The bundle's encoder over the frozen base: stored weights override the base's, and an adapter is attached. */
export function encoderOf(meta: BundleMeta, tensors: TensorRecord): EntityEncoder | null {
  if (!meta.encoder) return null;
  const base = loadEncoderBase();
  const weights: EncoderWeights = { ...base.weights };
  const adapterTensors: EncoderWeights = {};
  for (const [key, t] of Object.entries(tensors)) {
    if (key.startsWith('w:')) weights[key.slice(2)] = tensor(t.data, t.shape);
    else if (key.startsWith('a:')) adapterTensors[key.slice(2)] = tensor(t.data, t.shape);
  }
  const lora = meta.encoder.lora;
  const adapter: EncoderAdapter | null = lora
    ? { rank: lora.rank, alpha: lora.alpha, targets: [], tensors: adapterTensors }
    : null;
  return new EntityEncoder(
    base.config,
    loadGlove(),
    weights,
    adapter,
    meta.encoder.labels,
    meta.encoder.relations ?? [],
    meta.encoder.tasks ?? [],
  );
}

export function classifiersOf(meta: BundleMeta): Map<string, NgramClassifier> {
  return new Map(
    Object.entries(meta.classifiers).map(([k, c]) => [
      k,
      NgramClassifier.fromJSON(c as Parameters<typeof NgramClassifier.fromJSON>[0]),
    ]),
  );
}

export function buildBundle(
  baseModel: string,
  trainingType: TrainingType,
  hp: Hyperparameters,
  encoder: EntityEncoder | null,
  classifiers: Map<string, NgramClassifier>,
  metrics: Metrics | null,
  extra: {
    trainedShare?: number;
    structures: Record<string, Record<string, 'str' | 'list'>>;
    calibration?: Record<string, TaskCalibration>;
  },
): { bytes: Uint8Array; manifest: ModelManifest } {
  const { trainedShare } = extra;
  const base = loadEncoderBase();
  const manifest: ModelManifest = {
    format: 'whetstone-model/1',
    baseModel,
    task: 'extraction',
    trainingType,
    schema: {
      entities: encoder ? [...encoder.trainedLabels] : [],
      classifications: [...classifiers].map(([task, c]) => ({ task, labels: c.labels, multi_label: c.multiLabel })),
      relations: encoder ? [...encoder.relationLabels] : [],
      ...(Object.keys(extra.structures).length ? { structures: extra.structures } : {}),
    },
    tokenizer: 'whetstone-words/1',
    architecture: {
      entities: encoder
        ? `encoder: GloVe-100 + hashed features (2^${base.config.hashLog2}×${base.config.hashDim}), width-3 window, ${base.config.layers} pre-LN transformer layers (D=${base.config.dim}, ${base.config.heads} heads), label-name BIO head`
        : null,
      ...(encoder?.relationLabels.length
        ? { relations: 'encoder span pairs (head, tail, the words between, order) against relation-name vectors' }
        : {}),
      classifications: classifiers.size
        ? `hashed word uni+bigram${[...classifiers.values()].some((c) => c.featureSet === 'words+char4') ? ' and character 4-gram' : ''} linear model${encoder?.tasks.length ? ", fused with the encoder's pooled head (label-name vectors) for single-label tasks" : ''}`
        : null,
      ...(encoder?.adapter
        ? {
            lora: {
              rank: encoder.adapter.rank,
              alpha: encoder.adapter.alpha,
              targets: ['in', 'qkv', 'o', 'fc1', 'fc2', 'hash'],
              trained_share_percent: trainedShare ?? null,
            },
          }
        : {}),
    },
    hyperparameters: hp,
    metrics,
    ...(extra.calibration && Object.keys(extra.calibration).length ? { calibration: extra.calibration } : {}),
    createdAt: new Date().toISOString(),
  };
  const tensors: TensorRecord = {};
  if (encoder) {
    // The relation head is stored only when trained (otherwise it is the base's).
    const stored = (name: string) =>
      (!encoder.adapter || isHeadOrNorm(name)) && (encoder.relationLabels.length > 0 || !name.startsWith('rel.'));
    for (const [name, t] of Object.entries(encoder.weights))
      if (stored(name)) tensors[`w:${name}`] = { shape: [...t.shape], data: t.data };
    if (encoder.adapter)
      for (const [name, t] of Object.entries(encoder.adapter.tensors))
        tensors[`a:${name}`] = { shape: [...t.shape], data: t.data };
  }
  const meta: BundleMeta = {
    format: BUNDLE_FORMAT,
    manifest,
    adapter: trainingType === 'lora',
    encoder: encoder
      ? {
          labels: [...encoder.trainedLabels],
          relations: [...encoder.relationLabels],
          tasks: [...encoder.tasks],
          lora: encoder.adapter ? { rank: encoder.adapter.rank, alpha: encoder.adapter.alpha } : null,
        }
      : null,
    classifiers: Object.fromEntries([...classifiers].map(([k, c]) => [k, c.toJSON()])),
  };
  return { bytes: packTensors(meta, tensors), manifest };
}

/** Reads a bundle's manifest. */
export function readManifest(bundle: Uint8Array): ModelManifest {
  return readBundle(bundle).meta.manifest;
}

/** Expands a table whose buckets are the low bits of full-size buckets. */
function expand(weights: Float32Array, fromLog2: number, toLog2: number, width: number): Float32Array {
  const out = new Float32Array((1 << toLog2) * width);
  const mask = (1 << fromLog2) - 1;
  for (let b = 0; b < 1 << toLog2; b++)
    out.set(weights.subarray((b & mask) * width, ((b & mask) + 1) * width), b * width);
  return out;
}

/**
 * Merges a LoRA bundle into whole weights for serving: the encoder's
 * `W + (alpha/rank)·A·B` folded into each adapted matrix, the classifiers'
 * small tables expanded to full size. Outputs are identical (to float
 * rounding). A full bundle is returned unchanged.
 */
export function mergeAdapter(bundle: Uint8Array): Uint8Array {
  const { meta, tensors } = readBundle(bundle);
  if (!meta.adapter) return bundle;
  const classifiers = meta.classifiers as Record<
    string,
    Record<string, unknown> & { bucketsLog2: number; labels: string[]; weights: string }
  >;
  const merged: BundleMeta = {
    ...meta,
    adapter: false,
    encoder: meta.encoder ? { ...meta.encoder, lora: null } : null,
    classifiers: Object.fromEntries(
      Object.entries(classifiers).map(([k, c]) => [
        k,
        {
          ...c,
          bucketsLog2: FULL_BUCKETS,
          weights: b64(expand(f32(c.weights), c.bucketsLog2, FULL_BUCKETS, c.labels.length)),
        },
      ]),
    ),
  };
  const encoder = encoderOf(meta, tensors)?.merged();
  const out: TensorRecord = {};
  if (encoder)
    for (const [name, t] of Object.entries(encoder.weights)) out[`w:${name}`] = { shape: [...t.shape], data: t.data };
  return packTensors(merged, out);
}
