import { AppError, Reasons, errors } from '@whetstone/errors';
import type { Decoder, ExtractionModel, ExtractionResult, PredictOptions } from '@whetstone/ml';
import { SchemaError } from '@whetstone/ml';
import { ModelCache, type ModelStatus } from '../domain/model-cache';

/** Where a trained model's bundle lives; empty for built-in base models. */
export interface ModelRef {
  modelId: string;
  bucket: string;
  key: string;
}

/** Reads bundles from object storage. */
export interface BundleSource {
  read(bucket: string, key: string): Promise<Uint8Array>;
}

/** Turns a built-in id or a bundle into a runnable model. */
export interface ModelLoader {
  builtin(modelId: string): ExtractionModel | undefined;
  fromBundle(bytes: Uint8Array): ExtractionModel;
  /** A decoder: the built-in base (no bytes) or a job's adapter bundle. */
  decoder(bytes?: Uint8Array): Decoder;
}

export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerateOptions {
  temperature: number;
  topP: number;
  maxTokens: number;
  stop: string[];
  seed: number;
  signal?: AbortSignal;
}

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Seconds a caller is told to wait while a model warms. */
const WARMING_RETRY_SECONDS = 2;
/** Texts of one call are capped at the batch limit of the public surface. */
const MAX_TEXTS = 1000;

/**
 * The model-server's use cases: load models on demand (LRU within a memory
 * budget), report their states, and run extraction on ready ones.
 */
export class ModelServing {
  private readonly cache: ModelCache<ExtractionModel>;
  private readonly inflight = new Map<string, Promise<void>>();
  /** Decoders loading, and loaded ones in an LRU under the same memory budget as extraction models. */
  private readonly decodersLoading = new Map<string, Promise<Decoder>>();
  private readonly decoders: ModelCache<Decoder>;

  constructor(
    private readonly deps: { bundles: BundleSource; loader: ModelLoader; logger: Logger; budgetBytes: number },
  ) {
    this.cache = new ModelCache(deps.budgetBytes);
    this.decoders = new ModelCache(deps.budgetBytes);
  }

  /** Starts loading (idempotent) and returns the state right after. */
  load(ref: ModelRef): { status: ModelStatus; reason?: string } {
    const held = this.cache.get(ref.modelId);
    if (held && held.status !== 'failed') return { status: held.status };
    const builtin = this.deps.loader.builtin(ref.modelId);
    if (builtin) {
      this.cache.startWarming(ref.modelId, true);
      this.cache.ready(ref.modelId, builtin, 0);
      return { status: 'ready' };
    }
    if (!ref.bucket || !ref.key) {
      throw errors.notFound(
        'MODEL_NOT_FOUND',
        `Model '${ref.modelId}' is not a built-in model and no bundle location was given.`,
      );
    }
    this.cache.startWarming(ref.modelId);
    const started = Date.now();
    const task = this.deps.bundles
      .read(ref.bucket, ref.key)
      .then((bytes) => {
        const model = this.deps.loader.fromBundle(bytes);
        const evicted = this.cache.ready(ref.modelId, model, bytes.byteLength * 3);
        this.deps.logger.info(
          { modelId: ref.modelId, bytes: bytes.byteLength, ms: Date.now() - started, evicted },
          'model ready',
        );
      })
      .catch((err: unknown) => {
        const reason =
          err instanceof AppError
            ? err.message
            : `could not load the model bundle: ${err instanceof Error ? err.message : String(err)}`;
        this.cache.failed(ref.modelId, reason);
        this.deps.logger.warn({ modelId: ref.modelId, reason }, 'model failed to load');
      })
      .finally(() => this.inflight.delete(ref.modelId));
    this.inflight.set(ref.modelId, task);
    return { status: 'warming' };
  }

  /** Resolves once an in-flight load finished (for tests and graceful start). */
  async settled(modelId: string): Promise<void> {
    await this.inflight.get(modelId);
  }

  state(modelId: string): { status: ModelStatus | 'absent'; reason?: string } {
    const entry = this.cache.peek(modelId);
    if (!entry) return { status: 'absent' };
    return { status: entry.status, ...(entry.reason ? { reason: entry.reason } : {}) };
  }

  list(): { modelId: string; status: ModelStatus; bytes: number; reason?: string }[] {
    return [...this.cache.list(), ...this.decoders.list()].map((e) => ({
      modelId: e.id,
      status: e.status,
      bytes: e.bytes,
      ...(e.reason ? { reason: e.reason } : {}),
    }));
  }

  get budgetBytes(): number {
    return this.cache.budget;
  }

  /** Streams a decoder's reply; the decoder is loaded on first use (adapters load in milliseconds). */
  async generate(ref: ModelRef, messages: ChatTurn[], options: GenerateOptions): Promise<GenerateStream> {
    if (!messages.length)
      throw errors.invalid(Reasons.VALIDATION_FAILED, 'Give at least one message.', [
        { field: 'messages', message: 'must not be empty' },
      ]);
    let decoder = this.decoders.get(ref.modelId)?.model;
    if (!decoder) {
      let loading = this.decodersLoading.get(ref.modelId);
      if (!loading) {
        loading = (async () => {
          const bundle = ref.key ? await this.deps.bundles.read(ref.bucket, ref.key) : undefined;
          const loaded = this.deps.loader.decoder(bundle);
          // The base weights are shared; an adapter costs about its bundle, merged weights about the base.
          this.decoders.ready(ref.modelId, loaded, (bundle?.byteLength ?? 0) + 600_000);
          return loaded;
        })().finally(() => this.decodersLoading.delete(ref.modelId));
        this.decodersLoading.set(ref.modelId, loading);
      }
      try {
        decoder = await loading;
      } catch (err) {
        throw errors.precondition(
          Reasons.MODEL_NOT_SERVABLE,
          `Decoder '${ref.modelId}' could not be loaded: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    const stream = decoder.generate(messages, {
      temperature: options.temperature,
      top_p: options.topP > 0 ? options.topP : 1,
      max_tokens: options.maxTokens > 0 ? Math.min(options.maxTokens, 2048) : 128,
      stop: options.stop,
      seed: options.seed,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    let output = 0;
    const inputTokens = messages.reduce((n, m) => n + bytes(m.content), 0);
    return {
      chunks: (async function* () {
        for await (const chunk of stream) {
          output += bytes(chunk.text);
          yield chunk;
        }
      })(),
      finish: () => ({ reason: stream.finishReason() ?? 'length', inputTokens, outputTokens: output }),
    };
  }

  /** Runs extraction; MODEL_WARMING (425 at the edge) while the model loads, a load starts on first use. */
  extract(
    ref: ModelRef,
    texts: string[],
    schema: unknown,
    options: PredictOptions,
  ): { results: ExtractionResult[]; inputTokens: number } {
    if (texts.length === 0 || texts.length > MAX_TEXTS)
      throw errors.invalid(Reasons.VALIDATION_FAILED, `Give 1 to ${MAX_TEXTS} texts.`, [
        { field: 'texts', message: `must hold 1 to ${MAX_TEXTS} strings` },
      ]);
    let entry = this.cache.get(ref.modelId);
    if (!entry || entry.status === 'failed') {
      if (entry?.status === 'failed' && !ref.key)
        throw errors.precondition(
          Reasons.MODEL_NOT_SERVABLE,
          `Model '${ref.modelId}' failed to load: ${entry.reason ?? 'unknown reason'}`,
        );
      this.load(ref);
      entry = this.cache.get(ref.modelId);
    }
    if (!entry || entry.status === 'warming')
      throw new AppError('TooEarly', Reasons.MODEL_WARMING, `Model '${ref.modelId}' is loading; retry shortly.`, {
        retryAfterSeconds: WARMING_RETRY_SECONDS,
      });
    if (entry.status === 'failed' || !entry.model)
      throw errors.precondition(
        Reasons.MODEL_NOT_SERVABLE,
        `Model '${ref.modelId}' failed to load: ${entry.reason ?? 'unknown reason'}`,
      );
    const model = entry.model;
    try {
      const results = texts.map((t) => model.extract(t, schema as never, options));
      const inputTokens = texts.reduce((n, t) => n + countTokens(t), 0);
      return { results, inputTokens };
    } catch (err) {
      if (err instanceof SchemaError) {
        throw errors.invalid(
          Reasons.VALIDATION_FAILED,
          `Invalid schema: ${err.message}`,
          err.issues.map((i) => ({ field: i.field, message: i.message })),
        );
      }
      throw err;
    }
  }
}

export interface GenerateStream {
  chunks: AsyncIterable<{ text: string }>;
  finish(): { reason: 'stop' | 'length'; inputTokens: number; outputTokens: number };
}

/** Decoder tokens are bytes. */
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Whitespace-and-punctuation token count, the unit extraction is priced in. */
export function countTokens(text: string): number {
  return text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;
}
