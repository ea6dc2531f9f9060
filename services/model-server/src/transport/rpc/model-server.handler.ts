import type { ServiceImpl } from '@connectrpc/connect';
import { ModelServerService, ModelState } from '@whetstone/proto/src/gen/whetstone/inference/v1/model_server_pb';
import type { ModelServing } from '../../application/serving';
import type { ModelStatus } from '../../domain/model-cache';

const STATE: Record<ModelStatus | 'absent', ModelState> = {
  absent: ModelState.UNSPECIFIED,
  warming: ModelState.WARMING,
  ready: ModelState.READY,
  failed: ModelState.FAILED,
};

const refOf = (m: { modelId: string; bucket: string; key: string } | undefined) => ({ modelId: m?.modelId ?? '', bucket: m?.bucket ?? '', key: m?.key ?? '' });

/** ModelServerService: proto in, use case, proto out. */
export function modelServerHandler(serving: ModelServing): ServiceImpl<typeof ModelServerService> {
  return {
    loadModel(req) {
      const s = serving.load(refOf(req.model));
      return { state: STATE[s.status], reason: s.reason ?? '' };
    },
    getModelState(req) {
      const s = serving.state(req.modelId);
      return { state: STATE[s.status], reason: s.reason ?? '' };
    },
    listModelStates() {
      return {
        models: serving.list().map((m) => ({ modelId: m.modelId, state: STATE[m.status], bytes: BigInt(m.bytes), reason: m.reason ?? '' })),
        budgetBytes: BigInt(serving.budgetBytes),
      };
    },
    extract(req) {
      const out = serving.extract(refOf(req.model), req.texts, req.schema ?? {}, {
        threshold: req.threshold,
        includeConfidence: req.includeConfidence,
        includeSpans: req.includeSpans,
      });
      return { results: out.results as never, inputTokens: BigInt(out.inputTokens) };
    },
  };
}
