import type { Checkpoint, Hyperparameters, ProgressEvent } from '../pipeline/types';
import { AppError } from '@whetstone/errors';
import { Adam, decodeTensors, encodeTensors, Rng, tensor, trainingStep } from '../nn';
import { loadDecoderBase } from './base';
import { chatWindows, type ChatRow, validateChatRows } from './chat-data';
import {
  type DecoderConfig,
  initAdapter,
  LINEAR_MODULES,
  type LinearModule,
  type LoraAdapter,
  makeBatch,
  scoredLoss,
  type Weights,
  type Window,
} from './model';
import { TOKENIZER_NAME } from './tokenizer';
import { adapterFrom, adapterTensors } from './weights-file';

/** The built-in decoder base model's id; decoder jobs train LoRA adapters over it. */
export const DECODER_BASE = 'whetstone-decoder-base';

/** Held-out loss, perplexity and token accuracy of the assistant replies, with the adapter and with the base alone. */
export interface DecoderMetrics {
  /** Mean cross-entropy (nats per byte) of the assistant replies in the held-out rows. */
  loss: number;
  perplexity: number;
  /** The share of the replies' bytes (the tokenizer's tokens) the model ranks first. */
  token_accuracy: number;
  base_loss: number;
  base_perplexity: number;
  base_token_accuracy: number;
  /** Training runs: the tokens the model read in training, every epoch counted (OpenAI's `trained_tokens`). */
  trained_tokens?: number;
}

/** The manifest stored at the head of an adapter bundle. */
export interface DecoderManifest {
  format: 'whetstone-model/1';
  baseModel: string;
  task: 'decoder';
  trainingType: 'lora';
  tokenizer: string;
  lora: { rank: number; alpha: number; targets: LinearModule[]; trainedParameters: number; baseParameters: number };
  hyperparameters: Hyperparameters;
  metrics: DecoderMetrics | null;
}

/** One decoder LoRA run: chat rows (`{messages}`), settings, an optional checkpoint to resume, and callbacks. */
export interface DecoderTrainRequest {
  train: readonly unknown[];
  heldout: readonly unknown[];
  hyperparameters: Hyperparameters;
  /** LoRA target modules; all linear layers by default. */
  targetModules?: LinearModule[];
  /** Steps between `weights/<step>` and `sampler_weights/<step>` checkpoints (default: one epoch). */
  checkpointEvery?: number;
  /** A `weights/<step>` checkpoint to continue from. */
  resumeFrom?: Uint8Array;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
  onCheckpoint?: (checkpoint: Checkpoint) => Promise<void>;
}

/** A finished decoder LoRA run. */
export interface DecoderTrainResult {
  /** The adapter alone (manifest + LoRA tensors): what `loadDecoder(bundle)` serves. */
  bundle: Uint8Array;
  manifest: DecoderManifest;
  metrics: DecoderMetrics;
}

interface StateMeta {
  format: 'whetstone-decoder-lora-state/1';
  step: number;
  /** The run's seed and epochs (absent in older checkpoints): a checkpoint of the same run resumes it. */
  seed?: number;
  nrEpochs?: number;
  rank: number;
  alpha: number;
  targets: LinearModule[];
}

/** Token-weighted mean loss of the assistant replies in `rows`, and the share of their tokens ranked first. */
export function chatScores(
  config: DecoderConfig,
  weights: Weights,
  rows: readonly ChatRow[],
  adapter?: LoraAdapter,
): { loss: number; tokenAccuracy: number } {
  let total = 0;
  let hits = 0;
  let count = 0;
  for (const row of rows) {
    for (const win of chatWindows(config, row)) {
      const scored = scoredLoss(config, weights, makeBatch([win]), adapter);
      total += scored.loss.data[0]! * scored.scored;
      hits += scored.hits;
      count += scored.scored;
    }
  }
  return count ? { loss: total / count, tokenAccuracy: hits / count } : { loss: NaN, tokenAccuracy: NaN };
}

/** Token-weighted mean loss of the assistant replies in `rows`. */
export const chatLoss = (config: DecoderConfig, weights: Weights, rows: readonly ChatRow[], adapter?: LoraAdapter) =>
  chatScores(config, weights, rows, adapter).loss;

/** Held-out figures of an adapter (or of the base alone, with none). */
function decoderMetrics(config: DecoderConfig, weights: Weights, heldout: readonly ChatRow[], adapter: LoraAdapter) {
  const tuned = chatScores(config, weights, heldout, adapter);
  const base = chatScores(config, weights, heldout);
  return {
    loss: tuned.loss,
    perplexity: Math.exp(tuned.loss),
    token_accuracy: tuned.tokenAccuracy,
    base_loss: base.loss,
    base_perplexity: Math.exp(base.loss),
    base_token_accuracy: base.tokenAccuracy,
  } satisfies DecoderMetrics;
}

/** The trained tensors `names` (in a bundle's order) as plain tensors holding their current values. */
const frozenCopy = (adapter: LoraAdapter, names: readonly string[]): LoraAdapter => ({
  ...adapter,
  tensors: Object.fromEntries(
    names.map((n) => [n, tensor(adapter.tensors[n]!.data.slice(), adapter.tensors[n]!.shape)] as const),
  ),
});

export function encodeAdapterBundle(manifest: DecoderManifest, adapter: LoraAdapter): Uint8Array {
  return encodeTensors({ meta: manifest, tensors: adapterTensors(adapter) });
}

/**
 * Held-out loss and perplexity of a decoder adapter bundle on chat rows, and of the base alone: how evaluations
 * (and the adaptive gate) score decoder jobs.
 */
export function evaluateDecoderBundle(bundle: Uint8Array, rows: readonly unknown[]): DecoderMetrics {
  const heldout = validateChatRows(rows, 'heldout');
  const { adapter } = decodeAdapterBundle(bundle);
  const { config, weights } = loadDecoderBase();
  return decoderMetrics(config, weights, heldout, adapter);
}

/** Reads a decoder adapter bundle (its manifest and LoRA tensors); throws when the bytes are not one. */
export function decodeAdapterBundle(bytes: Uint8Array): { manifest: DecoderManifest; adapter: LoraAdapter } {
  const file = decodeTensors<DecoderManifest>(bytes);
  if (file.meta?.format !== 'whetstone-model/1' || file.meta.task !== 'decoder')
    throw new AppError('InvalidArgument', 'MODEL_BUNDLE_INVALID', 'not a whetstone decoder bundle');
  const { rank, alpha, targets } = file.meta.lora;
  return { manifest: file.meta, adapter: adapterFrom(rank, alpha, targets, file.tensors, false) };
}

/**
 * LoRA fine-tuning of whetstone-decoder-base on chat examples: the base is
 * frozen, only A and B of the target modules train, and only assistant tokens
 * are scored. Deterministic for a seed; a `weights/<step>` checkpoint resumes
 * to the same bits as an uninterrupted run.
 */
export async function trainDecoderLora(request: DecoderTrainRequest): Promise<DecoderTrainResult> {
  const train = validateChatRows(request.train, 'train');
  const heldout = validateChatRows(request.heldout, 'heldout');
  const hp = request.hyperparameters;
  const { config, weights } = loadDecoderBase();
  const batchSize = hp.batchSize ?? 8;
  const rank = hp.loraRank ?? 8;
  const alpha = hp.loraAlpha ?? 2 * rank;
  const targets = request.targetModules ?? [...LINEAR_MODULES];
  const log = request.onLog ?? (() => undefined);

  let adapter = initAdapter(config, rank, alpha, targets, hp.seed);
  const names = Object.keys(adapter.tensors).sort();
  let opt = new Adam(
    names.map((n) => adapter.tensors[n]!),
    { learningRate: hp.learningRate },
  );
  let startStep = 0;
  if (request.resumeFrom) {
    const state = decodeTensors<StateMeta>(request.resumeFrom);
    if (state.meta?.format !== 'whetstone-decoder-lora-state/1')
      throw new AppError('InvalidArgument', 'CHECKPOINT_INVALID', 'resumeFrom is not a decoder training checkpoint');
    adapter = adapterFrom(state.meta.rank, state.meta.alpha, state.meta.targets, state.tensors, true);
    opt = new Adam(
      names.map((n) => adapter.tensors[n]!),
      { learningRate: hp.learningRate },
    );
    names.forEach((n, k) => {
      opt.m[k]!.set(state.tensors[`m.${n}`]!.data);
      opt.v[k]!.set(state.tensors[`v.${n}`]!.data);
    });
    // A checkpoint of this run (same seed and epochs) resumes it; another job's starts a new run from its adapter.
    const sameRun = state.meta.seed === hp.seed && state.meta.nrEpochs === hp.nrEpochs;
    if (sameRun) {
      opt.t = state.meta.step;
      startStep = state.meta.step;
      log('info', `resuming from step ${startStep}`);
    } else {
      opt = new Adam(
        names.map((n) => adapter.tensors[n]!),
        { learningRate: hp.learningRate },
      );
      log('info', `continuing from another run's adapter (step ${state.meta.step}) for ${hp.nrEpochs} more epochs`);
    }
  }

  const windows: Window[] = train.flatMap((row) => chatWindows(config, row));
  const stepsPerEpoch = Math.ceil(windows.length / batchSize);
  const totalSteps = stepsPerEpoch * hp.nrEpochs;
  const checkpointEvery = request.checkpointEvery ?? stepsPerEpoch;
  const trainedParameters = names.reduce((n, k) => n + adapter.tensors[k]!.data.length, 0);
  const baseParameters = Object.values(weights).reduce((n, t) => n + t.data.length, 0);
  log(
    'info',
    `LoRA rank ${rank} on ${targets.join(', ')}: ${trainedParameters} trained parameters (${((100 * trainedParameters) / baseParameters).toFixed(1)}% of the base), ${windows.length} windows, ${totalSteps} steps`,
  );

  const orderOf = (epoch: number): number[] => new Rng(hp.seed * 7919 + epoch).shuffle(windows.map((_, i) => i));
  const started = Date.now();
  let scoringMs = 0;
  let passMs = 0;
  let order = orderOf(Math.floor(startStep / stepsPerEpoch));
  for (let step = startStep; step < totalSteps; step++) {
    if (request.signal?.aborted) throw new AppError('Cancelled', 'TRAINING_CANCELLED', 'training was cancelled');
    const epoch = Math.floor(step / stepsPerEpoch);
    if (step % stepsPerEpoch === 0) order = orderOf(epoch);
    const within = step % stepsPerEpoch;
    const batch = order.slice(within * batchSize, (within + 1) * batchSize).map((i) => windows[i]!);
    // Forward and backward in buffers the next step reuses; only the figures leave the step.
    const { loss, hits, scored } = trainingStep(() => {
      const l = scoredLoss(config, weights, makeBatch(batch), adapter);
      l.loss.backward();
      return { loss: l.loss.data[0]!, hits: l.hits, scored: l.scored };
    });
    opt.step();
    const done = step + 1;
    // The step that ends an epoch reports the held-out rows' loss and token accuracy as they stand; the rate
    // counts training alone.
    const scoring = Date.now();
    const validation =
      heldout.length > 0 && (done % stepsPerEpoch === 0 || done === totalSteps)
        ? chatScores(config, weights, heldout, frozenCopy(adapter, names))
        : undefined;
    if (validation) passMs = Date.now() - scoring;
    scoringMs += Date.now() - scoring;
    const seconds = (Date.now() - started - scoringMs) / 1000;
    const examplesPerSecond = ((done - startStep) * batchSize) / Math.max(seconds, 1e-3);
    request.onProgress?.({
      step: done,
      totalSteps,
      epoch: epoch + 1,
      loss,
      learningRate: hp.learningRate,
      examplesPerSecond,
      // Training left at the rate so far, and a held-out pass (as long as the last) per epoch end left.
      etaSeconds:
        ((totalSteps - done) * batchSize) / examplesPerSecond +
        (Math.ceil((totalSteps - done) / stepsPerEpoch) * passMs) / 1000,
      ...(scored > 0 ? { tokenAccuracy: hits / scored } : {}),
      ...(validation && Number.isFinite(validation.loss) ? { validation } : {}),
    });
    // Every checkpointEvery steps and at the end (the end's training state is what another job continues from).
    if (request.onCheckpoint && (done % checkpointEvery === 0 || done === totalSteps)) {
      const tensors = adapterTensors(adapter);
      names.forEach((n, k) => {
        tensors[`m.${n}`] = { shape: [...adapter.tensors[n]!.shape], data: opt.m[k]!.slice() };
        tensors[`v.${n}`] = { shape: [...adapter.tensors[n]!.shape], data: opt.v[k]!.slice() };
      });
      const meta: StateMeta = {
        format: 'whetstone-decoder-lora-state/1',
        step: done,
        rank,
        alpha,
        targets,
        seed: hp.seed,
        nrEpochs: hp.nrEpochs,
      };
      await request.onCheckpoint({
        id: `weights/${done}`,
        type: 'training',
        step: done,
        bytes: encodeTensors({ meta, tensors }),
      });
      await request.onCheckpoint({
        id: `sampler_weights/${done}`,
        type: 'sampler',
        step: done,
        bytes: encodeAdapterBundle(manifestOf(null), adapter),
      });
    }
    // Yield to the event loop between steps so cancellation and I/O are seen promptly.
    await new Promise((resolve) => setImmediate(resolve));
  }

  const frozen = frozenCopy(adapter, names);
  const trainedTokens = windows.reduce((n, w) => n + w.inputs.length, 0) * hp.nrEpochs;
  const metrics: DecoderMetrics = {
    ...decoderMetrics(config, weights, heldout, frozen),
    trained_tokens: trainedTokens,
  };
  log(
    'info',
    `held-out loss ${metrics.loss.toFixed(3)} (base ${metrics.base_loss.toFixed(3)}), perplexity ${metrics.perplexity.toFixed(2)}, token accuracy ${metrics.token_accuracy.toFixed(3)} (base ${metrics.base_token_accuracy.toFixed(3)})`,
  );
  const manifest = manifestOf(metrics);
  return { bundle: encodeAdapterBundle(manifest, frozen), manifest, metrics };

  function manifestOf(m: DecoderMetrics | null): DecoderManifest {
    return {
      format: 'whetstone-model/1',
      baseModel: DECODER_BASE,
      task: 'decoder',
      trainingType: 'lora',
      tokenizer: TOKENIZER_NAME,
      lora: { rank, alpha, targets, trainedParameters, baseParameters },
      hyperparameters: { ...hp, batchSize, loraRank: rank, loraAlpha: alpha },
      metrics: m,
    };
  }
}
