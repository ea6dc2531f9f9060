import { EXTRACT_BASE_ID, extractBaseModel, loadModel } from '@whetstone/ml';
import type { ModelLoader } from '../application/serving';

/** Built-in base models and trained bundles (full, or LoRA adapters served as stored), both from packages/ml. */
export const mlLoader: ModelLoader = {
  builtin: (modelId) => (modelId === EXTRACT_BASE_ID ? extractBaseModel : undefined),
  fromBundle: (bytes) => loadModel(bytes),
};
