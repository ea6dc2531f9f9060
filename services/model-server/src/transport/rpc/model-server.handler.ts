import type { ServiceImpl } from '@connectrpc/connect';
import { ModelServerService, ModelState } from '@whetstone/proto/inference/v1';
import { Reasons, errors } from '@whetstone/errors';
import type { ModelServing } from '../../application/serving';
import type { ModelStatus } from '../../domain/model-cache';

const STATE: Record<ModelStatus | 'absent', ModelState> = {
  absent: ModelState.UNSPECIFIED,
  warming: ModelState.WARMING,
  ready: ModelState.READY,
  failed: ModelState.FAILED,
};

const refOf = (m: { modelId: string; bucket: string; key: string } | undefined) => ({
  modelId: m?.modelId ?? '',
  bucket: m?.bucket ?? '',
  key: m?.key ?? '',
});

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
        models: serving
          .list()
          .map((m) => ({ modelId: m.modelId, state: STATE[m.status], bytes: BigInt(m.bytes), reason: m.reason ?? '' })),
        budgetBytes: BigInt(serving.budgetBytes),
      };
    },
    async *generate(req, ctx) {
      const roles = new Set(['system', 'user', 'assistant']);
      const messages = req.messages.map((m, i) => {
        if (!roles.has(m.role))
          throw errors.invalid(Reasons.VALIDATION_FAILED, 'Invalid message role', [
            { field: `messages.${i}.role`, message: 'must be system, user or assistant' },
          ]);
        return { role: m.role as 'system' | 'user' | 'assistant', content: m.content };
      });
      const out = await serving.generate(refOf(req.model), messages, {
        temperature: req.temperature,
        topP: req.topP,
        maxTokens: req.maxTokens,
        stop: req.stop,
        seed: Number(req.seed),
        signal: ctx.signal,
      });
      for await (const chunk of out.chunks) yield { text: chunk.text };
      const end = out.finish();
      yield {
        text: '',
        finishReason: end.reason,
        inputTokens: BigInt(end.inputTokens),
        outputTokens: BigInt(end.outputTokens),
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
