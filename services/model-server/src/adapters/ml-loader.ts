import { EXTRACT_BASE_ID, extractBaseModel, loadDecoder, loadModel } from '@whetstone/ml';
import type { ModelLoader } from '../application/ports';

/** Built-in base models, trained extraction bundles and decoder adapters, all from packages/ml. */
export const mlLoader: ModelLoader = {
  builtin: (modelId) => (modelId === EXTRACT_BASE_ID ? extractBaseModel : undefined),
  fromBundle: (bytes) => loadModel(bytes),
  decoder: (bytes) => loadDecoder(bytes),
};
