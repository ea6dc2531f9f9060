/**
 * What trainer jobs, the CLI and the model-server run: train an extraction
 * model into a bundle, load a bundle for serving, evaluate and merge bundles.
 */
export * from './types';
export { ENCODER_DEFAULTS, trainModel } from './train';
export { loadModel } from './load-model';
export { mergeAdapter, readManifest } from './bundle';
export { evaluateBundle, headline, type EvaluateOptions } from './evaluate';
