import { AppError, Reasons } from '@whetstone/errors';
import {
  DECODER_BASE,
  SchemaError,
  evaluateBundle,
  evaluateDecoder,
  scoreDecoderRun,
  trainDecoderLora,
  trainModel,
  type CanonicalRow,
} from '@whetstone/ml';
import type { TrainingEngine } from '../application/ports';

/** Decoder fine-tuning batch and adapter size (the decoder base is small). */
const DECODER = { batchSize: 4, loraRank: 4 };

/** The engine's typed data errors become AppErrors the trainer can classify (not retryable). */
function typed<T>(work: () => Promise<T> | T): Promise<T> {
  return Promise.resolve()
    .then(work)
    .catch((err: unknown) => {
      if (err instanceof SchemaError)
        throw new AppError('InvalidArgument', Reasons.VALIDATION_FAILED, err.message, { cause: err, retryable: false });
      throw err;
    });
}

/**
 * A decoder LoRA run, then its held-out generation F1, precision and recall beside its loss and perplexity
 * (bounded: packages/ml's DECODER_GENERATION_EVAL).
 */
async function trainDecoder(
  train: readonly unknown[],
  heldout: readonly unknown[],
  hyperparameters: Parameters<typeof trainDecoderLora>[0]['hyperparameters'],
  hooks: Parameters<TrainingEngine['train']>[1],
) {
  const run = await trainDecoderLora({ train, heldout, hyperparameters, ...hooks });
  const scored = await scoreDecoderRun(run, heldout, { signal: hooks.signal });
  const { f1, precision, recall, generation_examples: n, generation_max_tokens: tokens } = scored.metrics;
  if (f1 !== undefined)
    hooks.onLog(
      'info',
      `held-out generation F1 ${f1.toFixed(3)} (precision ${precision!.toFixed(3)}, recall ${recall!.toFixed(3)}) on ${n} greedy replies of at most ${tokens} tokens`,
    );
  return scored;
}

/** packages/ml: decoders fine-tune with LoRA on chat rows, extraction models on canonical rows. */
export const mlEngine: TrainingEngine = {
  async train(input, hooks) {
    const train = input.train as CanonicalRow[];
    const heldout = input.heldout as CanonicalRow[];
    const result = await typed<{ bundle: Uint8Array; manifest: unknown; metrics: unknown }>(() =>
      input.baseModel === DECODER_BASE
        ? trainDecoder(train, heldout, { ...input.hyperparameters, ...DECODER }, hooks)
        : trainModel({
            baseModel: input.baseModel,
            trainingType: input.trainingType,
            train,
            heldout,
            hyperparameters: input.hyperparameters,
            ...(input.outOfScope ? { outOfScope: input.outOfScope } : {}),
            ...hooks,
          }),
    );
    return {
      bundle: result.bundle,
      manifest: result.manifest,
      metrics: result.metrics as Record<string, unknown>,
    };
  },
  async evaluate(bundle, rows, baseModel) {
    const metrics =
      baseModel === DECODER_BASE
        ? await evaluateDecoder(bundle, rows)
        : evaluateBundle(bundle, rows as CanonicalRow[], { perExample: true });
    return metrics as unknown as Record<string, unknown>;
  },
};
