import { Reasons, errors } from '@whetstone/errors';
import type { Decoder } from '@whetstone/ml';
import type { Logger } from '@whetstone/telemetry';
import { ModelCache, type CacheEntry } from '../domain/model-cache';
import type { BundleSource, ModelLoader, ModelRef } from './ports';

/** Memory charged for a decoder on top of its bundle: the base weights are shared, an adapter costs about its bundle. */
const DECODER_OVERHEAD_BYTES = 600_000;

/** Decoders loaded on first use (adapters load in milliseconds), in an LRU under the server's memory budget. */
export class Decoders {
  private readonly loading = new Map<string, Promise<Decoder>>();
  private readonly cache: ModelCache<Decoder>;

  constructor(
    private readonly deps: { bundles: BundleSource; loader: ModelLoader; logger: Logger; budgetBytes: number },
  ) {
    this.cache = new ModelCache(deps.budgetBytes);
  }

  list(): CacheEntry<Decoder>[] {
    return this.cache.list();
  }

  /** The decoder, loading it once however many calls wait for it; MODEL_NOT_SERVABLE when it cannot load. */
  async get(ref: ModelRef): Promise<Decoder> {
    const held = this.cache.get(ref.modelId)?.model;
    if (held) return held;
    let loading = this.loading.get(ref.modelId);
    if (!loading) {
      loading = this.load(ref).finally(() => this.loading.delete(ref.modelId));
      this.loading.set(ref.modelId, loading);
    }
    try {
      return await loading;
    } catch (err) {
      this.deps.logger.warn({ err, modelId: ref.modelId }, 'decoder failed to load');
      throw errors.precondition(Reasons.MODEL_NOT_SERVABLE, `Decoder '${ref.modelId}' could not be loaded.`);
    }
  }

  private async load(ref: ModelRef): Promise<Decoder> {
    const bundle = ref.key ? await this.deps.bundles.read(ref.bucket, ref.key) : undefined;
    const loaded = this.deps.loader.decoder(bundle);
    this.cache.ready(ref.modelId, loaded, (bundle?.byteLength ?? 0) + DECODER_OVERHEAD_BYTES);
    return loaded;
  }
}
