import type { ServiceImpl } from '@connectrpc/connect';
import type { PrefixCache } from '@whetstone/ml';
import type { ModelServerService } from '@whetstone/proto/inference/v1';
import type { Decoders } from '../../application/decoders';
import type { ExtractBatcher } from '../../application/extract-batcher';
import type { ExtractionModels } from '../../application/extraction-models';
import { embed } from '../../application/embed';
import { generate } from '../../application/generate';
import {
  chatTurnsOf,
  finishToPb,
  chunkToPb,
  generateOptionsOf,
  refOf,
  resultsToPb,
  schemaTextOf,
  stateToPb,
} from './model-server.mapper';

/** ModelServerService: proto in, use case, proto out. */
export function modelServerHandler(
  models: ExtractionModels,
  batcher: ExtractBatcher,
  decoders: Decoders,
  prefixCache: PrefixCache | undefined,
): ServiceImpl<typeof ModelServerService> {
  return {
    loadModel: (req) => stateToPb(models.load(refOf(req.model))),
    getModelState: (req) => stateToPb(models.state(req.modelId)),
    listModelStates: () => ({
      models: [...models.list(), ...decoders.list()].map((e) => ({
        modelId: e.id,
        bytes: BigInt(e.bytes),
        ...stateToPb(e),
      })),
      budgetBytes: BigInt(models.budgetBytes),
    }),
    async extract(req) {
      const out = await batcher.extract(refOf(req.model), req.texts, schemaTextOf(req.schemaJson), {
        threshold: req.threshold,
        includeConfidence: req.includeConfidence,
        includeSpans: req.includeSpans,
      });
      return { resultsJson: resultsToPb(out.results), inputTokens: BigInt(out.inputTokens) };
    },
    async embed(req) {
      const out = await embed(models, refOf(req.model), req.texts);
      return {
        embeddings: out.vectors.map((v) => ({ values: Array.from(v) })),
        dimensions: out.dimensions,
        inputTokens: BigInt(out.inputTokens),
      };
    },
    async *generate(req, ctx) {
      const out = await generate(
        decoders,
        prefixCache,
        refOf(req.model),
        chatTurnsOf(req.messages),
        generateOptionsOf(req.sampling, req.cacheBreakpoints, ctx.signal),
      );
      for await (const chunk of out.chunks) yield chunkToPb(chunk);
      yield finishToPb(out.finish());
    },
  };
}
