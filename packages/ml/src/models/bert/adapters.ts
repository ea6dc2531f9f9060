import { Rng } from '../../nn/rng';
import { Tensor } from '../../nn/tensor';
import { BertModel, LAYER_LINEARS, type BertLayer, type Linear } from './modeling-bert';

/** Which linears of each layer take LoRA, by PEFT's module names for BERT. */
export const LORA_TARGETS = ['query', 'key', 'value', 'attention.output.dense', 'intermediate.dense', 'output.dense'];

export interface LoraSettings {
  r: number;
  alpha: number;
  seed: number;
}

/** A copy of the model whose every weight is a trainable leaf (full fine-tuning); the source is left as it was. */
export function trainableCopy(model: BertModel): BertModel {
  const p = (t: Tensor): Tensor => new Tensor(t.data.slice(), t.shape, true);
  const lin = (l: Linear): Linear => ({ weight: p(l.weight), bias: p(l.bias) });
  const w = model.weights;
  return new BertModel(model.config, {
    wordEmbeddings: p(w.wordEmbeddings),
    positionEmbeddings: p(w.positionEmbeddings),
    tokenTypeEmbeddings: p(w.tokenTypeEmbeddings),
    embeddingsNorm: { weight: p(w.embeddingsNorm.weight), bias: p(w.embeddingsNorm.bias) },
    layers: w.layers.map((l) => ({
      query: lin(l.query),
      key: lin(l.key),
      value: lin(l.value),
      attentionOutput: lin(l.attentionOutput),
      attentionNorm: { weight: p(l.attentionNorm.weight), bias: p(l.attentionNorm.bias) },
      intermediate: lin(l.intermediate),
      output: lin(l.output),
      outputNorm: { weight: p(l.outputNorm.weight), bias: p(l.outputNorm.bias) },
    })),
    pooler: w.pooler,
  });
}

/**
 * The model with LoRA factors on the attention (query, key, value, output) and FFN linears, as PEFT initialises
 * them: A with Kaiming-uniform (a = √5) values, B zeros, scaling alpha / r. The base weights are shared, frozen.
 */
export function withLora(model: BertModel, s: LoraSettings): BertModel {
  const rng = new Rng(s.seed);
  const add = (l: Linear): Linear => {
    const [out, inp] = l.weight.shape as [number, number];
    // kaiming_uniform_(a=√5) on [r, in]: bound = √(6 / ((1 + a²)·fan_in)) = 1/√fan_in.
    const bound = 1 / Math.sqrt(inp);
    const A = Float32Array.from({ length: s.r * inp }, () => (rng.next() * 2 - 1) * bound);
    return {
      weight: l.weight,
      bias: l.bias,
      lora: {
        A: new Tensor(A, [s.r, inp], true),
        B: new Tensor(new Float32Array(out * s.r), [out, s.r], true),
        scaling: s.alpha / s.r,
      },
    };
  };
  const w = model.weights;
  return new BertModel(model.config, {
    ...w,
    layers: w.layers.map((l) => {
      const copy: BertLayer = { ...l };
      for (const [field] of LAYER_LINEARS) (copy as unknown as Record<string, Linear>)[field] = add(l[field] as Linear);
      return copy;
    }),
  });
}

/** The LoRA factors by PEFT's tensor names (`base_model.model.encoder.layer.0.attention.self.query.lora_A.weight`). */
export function loraTensors(model: BertModel, prefix = 'base_model.model.'): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  model.weights.layers.forEach((l, i) => {
    for (const [field, name] of LAYER_LINEARS) {
      const lora = (l[field] as Linear).lora;
      if (!lora) continue;
      out.set(`${prefix}encoder.layer.${i}.${name}.lora_A.weight`, lora.A);
      out.set(`${prefix}encoder.layer.${i}.${name}.lora_B.weight`, lora.B);
    }
  });
  return out;
}

/** The model with each LoRA update folded into its weight, W + s·B·A: the same outputs with no adapter. */
export function mergeLora(model: BertModel): BertModel {
  const merge = (l: Linear): Linear => {
    if (!l.lora) return l;
    const [out, inp] = l.weight.shape as [number, number];
    const { A, B, scaling } = l.lora;
    const r = A.shape[0]!;
    const W = l.weight.data.slice();
    for (let o = 0; o < out; o++)
      for (let k = 0; k < r; k++) {
        const b = B.data[o * r + k]! * scaling;
        if (b === 0) continue;
        for (let i = 0; i < inp; i++) W[o * inp + i]! += b * A.data[k * inp + i]!;
      }
    return { weight: new Tensor(W, l.weight.shape), bias: l.bias };
  };
  const w = model.weights;
  return new BertModel(model.config, {
    ...w,
    layers: w.layers.map((l) => {
      const copy: BertLayer = { ...l };
      for (const [field] of LAYER_LINEARS)
        (copy as unknown as Record<string, Linear>)[field] = merge(l[field] as Linear);
      return copy;
    }),
  });
}

/** Every trainable tensor of the model (requiresGrad): all weights when full, the LoRA factors otherwise. */
export function trainableParameters(model: BertModel): Tensor[] {
  const out = [...model.namedParameters().values()].filter((t) => t.requiresGrad);
  return out.concat([...loraTensors(model).values()]);
}
