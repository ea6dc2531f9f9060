import { AppError, Reasons, errors, failureOf } from '@whetstone/errors';
import type { ExtractionModel } from '@whetstone/ml';
import type { Logger } from '@whetstone/telemetry';
import { ModelCache, type CacheEntry, type ModelStatus } from '../domain/model-cache';
import type { BundleSource, ModelLoader, ModelRef } from './ports';

/** Seconds a caller is told to wait while a model warms. */
const WARMING_RETRY_SECONDS = 2;

/** What a failed bundle load tells users when the cause is not one of ours (the cause is logged). */
const UNREADABLE_BUNDLE = 'could not load the model bundle';

/**
 * The extraction models this server holds: loaded on demand, least recently
 * used out beyond a memory budget, built-in base models pinned.
 */
export class ExtractionModels {
  private readonly cache: ModelCache<ExtractionModel>;
  private readonly inflight = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: { bundles: BundleSource; loader: ModelLoader; logger: Logger; budgetBytes: number },
  ) {
    this.cache = new ModelCache(deps.budgetBytes);
  }

  get budgetBytes(): number {
    return this.cache.budget;
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
    if (!ref.bucket || !ref.key)
      throw errors.notFound(
        'MODEL_NOT_FOUND',
        `Model '${ref.modelId}' is not a built-in model and no bundle location was given.`,
      );
    this.cache.startWarming(ref.modelId);
    const task = this.readBundle(ref).finally(() => this.inflight.delete(ref.modelId));
    this.inflight.set(ref.modelId, task);
    return { status: 'warming' };
  }

  private async readBundle(ref: ModelRef): Promise<void> {
    const started = Date.now();
    try {
      const bytes = await this.deps.bundles.read(ref.bucket, ref.key);
      const model = this.deps.loader.fromBundle(bytes);
      const evicted = this.cache.ready(ref.modelId, model, bytes.byteLength * 3);
      this.deps.logger.info(
        { modelId: ref.modelId, bytes: bytes.byteLength, ms: Date.now() - started, evicted },
        'model ready',
      );
    } catch (err) {
      // The reason is shown to users (deployment history): ours when typed, else a stable sentence.
      const failure = failureOf(err);
      const reason = failure.code === 'INTERNAL' ? UNREADABLE_BUNDLE : failure.message;
      this.cache.failed(ref.modelId, reason);
      this.deps.logger.warn({ err, modelId: ref.modelId, reason }, 'model failed to load');
    }
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

  list(): CacheEntry<ExtractionModel>[] {
    return this.cache.list();
  }

  /** A ready model; a load starts on first use, and MODEL_WARMING (425 at the edge) answers while it runs. */
  ready(ref: ModelRef): ExtractionModel {
    let entry = this.cache.get(ref.modelId);
    if (!entry || entry.status === 'failed') {
      if (entry?.status === 'failed' && !ref.key) throw notServable(ref.modelId, entry.reason);
      this.load(ref);
      entry = this.cache.get(ref.modelId);
    }
    if (!entry || entry.status === 'warming')
      throw new AppError('TooEarly', Reasons.MODEL_WARMING, `Model '${ref.modelId}' is loading; retry shortly.`, {
        retryAfterSeconds: WARMING_RETRY_SECONDS,
      });
    if (entry.status === 'failed' || !entry.model) throw notServable(ref.modelId, entry.reason);
    return entry.model;
  }
}

const notServable = (modelId: string, reason: string | undefined) =>
  errors.precondition(Reasons.MODEL_NOT_SERVABLE, `Model '${modelId}' failed to load: ${reason ?? 'unknown reason'}`);
