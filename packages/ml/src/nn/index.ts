export { Tensor, tensor, zeros } from './tensor';
export { matmul, add, addRows, addBias, layerNorm, gelu, embedding, crossEntropy, weightedSum, causalSelfAttention, loraLinear } from './ops';
export { Adam, clipGradNorm, type AdamOptions } from './adam';
export { Rng, randn } from './rng';
export { matmulInto, softmaxInPlace, setMatmulBackend, matmulBackend, type MatmulBackend } from './kernels';
export { loadOrtGemm, gemmModel, type OrtGemm } from './ort';
export { encodeTensors, decodeTensors, type TensorFile } from './tensor-file';
