import type { PrefixCache } from '@whetstone/ml';
import { ModelServerService } from '@whetstone/proto/inference/v1';
import type { ServiceRouter } from '@whetstone/rpc';
import type { Logger } from '@whetstone/telemetry';
import { Decoders } from './application/decoders';
import { extract } from './application/extract';
import { ExtractBatcher, type BatchingOptions } from './application/extract-batcher';
import { ExtractionModels } from './application/extraction-models';
import type { BundleSource, ModelLoader } from './application/ports';
import { modelServerHandler } from './transport/rpc/model-server.handler';

export interface AppDeps {
  bundles: BundleSource;
  loader: ModelLoader;
  logger: Logger;
  /** Memory budget for extraction models, and separately for decoders; least recently used are evicted beyond it. */
  budgetBytes: number;
  /** Micro-batching of concurrent extraction calls. */
  batching: BatchingOptions;
  /** Decoder attention state of prompt prefixes that Generate's cache breakpoints read and write; absent: none. */
  prefixCache?: PrefixCache;
}

/** The wired service: its RPC routes, and the model states tests and start-up read. No I/O happens here. */
export interface ModelServerApp {
  registerRoutes(router: ServiceRouter): void;
  /** Loads built-in models and runs each once, so the first real call pays for nothing. */
  preload(modelIds: string[]): void;
  /** A model's state on this server ('absent' when not held). */
  state(modelId: string): ReturnType<ExtractionModels['state']>;
  /** Resolves once an in-flight load finished. */
  settled(modelId: string): Promise<void>;
}

export function buildApp(deps: AppDeps): ModelServerApp {
  const models = new ExtractionModels(deps);
  const decoders = new Decoders(deps);
  const batcher = new ExtractBatcher(models, deps.batching);
  return {
    registerRoutes: (router) =>
      router.service(ModelServerService, modelServerHandler(models, batcher, decoders, deps.prefixCache)),
    preload(modelIds) {
      for (const modelId of modelIds) {
        const ref = { modelId, bucket: '', key: '' };
        models.load(ref);
        extract(models, ref, ['Warm up with Ada Lovelace in London.'], { entities: ['person'] }, {});
      }
    },
    state: (modelId) => models.state(modelId),
    settled: (modelId) => models.settled(modelId),
  };
}
