import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { RankedModel, RouterView } from '../../application/project-router';

/** A router as ProjectRouter; the rates are credits per million tokens. */
const rankedToPb = (m: RankedModel) => ({
  modelId: m.modelId,
  inputPerMillion: m.inputPerMillion,
  outputPerMillion: m.outputPerMillion,
});

export function projectRouterToPb(view: RouterView) {
  const { router } = view;
  return {
    projectId: router.projectId,
    candidates: router.candidates,
    referenceModel: router.referenceModel,
    maxPromptTokens: router.maxPromptTokens,
    updatedAt: timestampFromDate(router.updatedAt),
    ranking: view.ranking.map(rankedToPb),
    ...(view.reference ? { reference: rankedToPb(view.reference) } : {}),
  };
}
