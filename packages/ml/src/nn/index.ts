export { Tensor, tensor, trainingStep, zeros } from './tensor';
export {
  matmul,
  matmulBT,
  add,
  addRows,
  addBias,
  scale,
  dropout,
  concatCols,
  sliceRows,
  layerNorm,
  gelu,
  embedding,
  embeddingBag,
  window,
  crossEntropy,
  chainNll,
  chainMarginals,
  chainViterbi,
  type ChainKinds,
  weightedSum,
  causalSelfAttention,
  selfAttention,
  loraLinear,
} from './ops';
export { Adam, clipGradNorm, type AdamOptions } from './adam';
export { Rng, randn } from './rng';
export {
  matmulInto,
  softmaxInPlace,
  setMatmulBackend,
  matmulBackend,
  setFusedMinSize,
  type MatmulBackend,
  type FusedOp,
} from './kernels';
export { loadOrtGemm, gemmModel, type OrtGemm } from './ort';
export { encodeTensors, decodeTensors, type TensorFile } from './tensor-file';
