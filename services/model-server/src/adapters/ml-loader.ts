import { EXTRACT_BASE_ID, extractBaseModel } from '@whetstone/ml';
import type { ModelLoader } from '../application/serving';

/** Built-in base models and trained bundles, both from packages/ml. */
export const mlLoader: ModelLoader = {
  builtin: (modelId) => (modelId === EXTRACT_BASE_ID ? extractBaseModel : undefined),
  fromBundle: () => {
    throw new Error('this build cannot load trained bundles yet (the training pipeline is not part of it)');
  },
};
