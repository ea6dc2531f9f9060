import { CheckpointError, type NamedTensor } from '../../checkpoints/safetensors';
import {
  add,
  addBias,
  addRows,
  concatCols,
  dropout,
  embedding,
  gelu,
  layerNorm,
  matmulBT,
  scale,
  selfAttention,
  sliceRows,
} from '../../nn/ops';
import { geluErf } from '../../nn/gelu-erf';
import { Tensor } from '../../nn/tensor';
import type { Rng } from '../../nn/rng';
import type { BertConfig } from './configuration-bert';

/**
 * BertModel as `transformers` defines it (modeling_bert.py), on the package's autograd ops so the same graph
 * serves and trains: word + position + token-type embeddings and LayerNorm, then post-LN layers (self-attention
 * with the padding mask, output dense, residual, LayerNorm; GELU FFN, residual, LayerNorm). Linear weights are
 * kept as the checkpoint stores them, [out, in], and applied as x·Wᵀ + b; parameter names are the checkpoint's
 * (`encoder.layer.0.attention.self.query.weight`).
 */

/** A low-rank update of a linear layer in PEFT's shapes: lora_A [r, in], lora_B [out, r], scaled by alpha/r. */
export interface LoraFactors {
  A: Tensor;
  B: Tensor;
  scaling: number;
}

export interface Linear {
  weight: Tensor;
  bias: Tensor;
  lora?: LoraFactors;
}

export interface Norm {
  weight: Tensor;
  bias: Tensor;
}

export interface BertLayer {
  query: Linear;
  key: Linear;
  value: Linear;
  attentionOutput: Linear;
  attentionNorm: Norm;
  intermediate: Linear;
  output: Linear;
  outputNorm: Norm;
}

export interface BertWeights {
  wordEmbeddings: Tensor;
  positionEmbeddings: Tensor;
  tokenTypeEmbeddings: Tensor;
  embeddingsNorm: Norm;
  layers: BertLayer[];
  pooler?: Linear;
}

export interface BertInput {
  /** [batch·time] token ids, each sequence padded to `time`. */
  ids: Int32Array;
  /** [batch·time] token type ids (zeros when omitted). */
  typeIds?: Int32Array;
  /** The unpadded length of each sequence (the attention mask). */
  lengths: Int32Array;
  batch: number;
  time: number;
}

export interface ForwardOptions {
  /** Dropout at the config's rates when given (training); none otherwise. */
  rng?: Rng;
}

/** x·Wᵀ + b, plus the LoRA update s·(x·Aᵀ)·Bᵀ when the layer has one. */
export function linear(x: Tensor, l: Linear): Tensor {
  let y = addBias(matmulBT(x, l.weight), l.bias);
  if (l.lora) y = add(y, scale(matmulBT(matmulBT(x, l.lora.A), l.lora.B), l.lora.scaling));
  return y;
}

/** The checkpoint names of one layer's linears, in the order of {@link BertLayer}'s fields. */
export const LAYER_LINEARS: ReadonlyArray<[keyof BertLayer, string]> = [
  ['query', 'attention.self.query'],
  ['key', 'attention.self.key'],
  ['value', 'attention.self.value'],
  ['attentionOutput', 'attention.output.dense'],
  ['intermediate', 'intermediate.dense'],
  ['output', 'output.dense'],
];

export class BertModel {
  constructor(
    readonly config: BertConfig,
    readonly weights: BertWeights,
  ) {}

  /**
   * Builds the model from a checkpoint's tensors (a `bert.` prefix, as task heads save it, and the old
   * `gamma`/`beta` LayerNorm names are accepted). A missing tensor or a wrong shape is an error naming the file,
   * the tensor and the shape expected.
   */
  static fromTensors(
    config: BertConfig,
    tensors: ReadonlyMap<string, NamedTensor>,
    file = 'model.safetensors',
  ): BertModel {
    const H = config.hidden_size;
    const get = (name: string, shape: number[], optional = false): Tensor | undefined => {
      const candidates = [name, `bert.${name}`];
      if (name.endsWith('LayerNorm.weight')) candidates.push(...candidates.map((n) => n.replace(/weight$/, 'gamma')));
      if (name.endsWith('LayerNorm.bias')) candidates.push(...candidates.map((n) => n.replace(/bias$/, 'beta')));
      const found = candidates.map((n) => tensors.get(n)).find((t) => t !== undefined);
      if (!found) {
        if (optional) return undefined;
        throw new CheckpointError(`${file}: tensor ${name} is missing (expected shape [${shape.join(', ')}])`);
      }
      if (found.shape.length !== shape.length || found.shape.some((d, i) => d !== shape[i]))
        throw new CheckpointError(
          `${file}: tensor ${name} has shape [${found.shape.join(', ')}], expected [${shape.join(', ')}] from config.json`,
        );
      return new Tensor(found.data, shape);
    };
    const req = (name: string, shape: number[]): Tensor => get(name, shape)!;
    const lin = (prefix: string, out: number, inp: number): Linear => ({
      weight: req(`${prefix}.weight`, [out, inp]),
      bias: req(`${prefix}.bias`, [out]),
    });
    const norm = (prefix: string): Norm => ({ weight: req(`${prefix}.weight`, [H]), bias: req(`${prefix}.bias`, [H]) });
    const I = config.intermediate_size;
    const layers: BertLayer[] = [];
    for (let i = 0; i < config.num_hidden_layers; i++) {
      const p = `encoder.layer.${i}`;
      layers.push({
        query: lin(`${p}.attention.self.query`, H, H),
        key: lin(`${p}.attention.self.key`, H, H),
        value: lin(`${p}.attention.self.value`, H, H),
        attentionOutput: lin(`${p}.attention.output.dense`, H, H),
        attentionNorm: norm(`${p}.attention.output.LayerNorm`),
        intermediate: lin(`${p}.intermediate.dense`, I, H),
        output: lin(`${p}.output.dense`, H, I),
        outputNorm: norm(`${p}.output.LayerNorm`),
      });
    }
    const poolerWeight = get('pooler.dense.weight', [H, H], true);
    return new BertModel(config, {
      wordEmbeddings: req('embeddings.word_embeddings.weight', [config.vocab_size, H]),
      positionEmbeddings: req('embeddings.position_embeddings.weight', [config.max_position_embeddings, H]),
      tokenTypeEmbeddings: req('embeddings.token_type_embeddings.weight', [config.type_vocab_size, H]),
      embeddingsNorm: norm('embeddings.LayerNorm'),
      layers,
      pooler: poolerWeight ? { weight: poolerWeight, bias: req('pooler.dense.bias', [H]) } : undefined,
    });
  }

  /** Every weight by its checkpoint name (LoRA factors excluded). */
  namedParameters(): Map<string, Tensor> {
    const w = this.weights;
    const out = new Map<string, Tensor>([
      ['embeddings.word_embeddings.weight', w.wordEmbeddings],
      ['embeddings.position_embeddings.weight', w.positionEmbeddings],
      ['embeddings.token_type_embeddings.weight', w.tokenTypeEmbeddings],
      ['embeddings.LayerNorm.weight', w.embeddingsNorm.weight],
      ['embeddings.LayerNorm.bias', w.embeddingsNorm.bias],
    ]);
    w.layers.forEach((layer, i) => {
      const p = `encoder.layer.${i}`;
      for (const [field, name] of LAYER_LINEARS) {
        const l = layer[field] as Linear;
        out.set(`${p}.${name}.weight`, l.weight);
        out.set(`${p}.${name}.bias`, l.bias);
      }
      out.set(`${p}.attention.output.LayerNorm.weight`, layer.attentionNorm.weight);
      out.set(`${p}.attention.output.LayerNorm.bias`, layer.attentionNorm.bias);
      out.set(`${p}.output.LayerNorm.weight`, layer.outputNorm.weight);
      out.set(`${p}.output.LayerNorm.bias`, layer.outputNorm.bias);
    });
    if (w.pooler) {
      out.set('pooler.dense.weight', w.pooler.weight);
      out.set('pooler.dense.bias', w.pooler.bias);
    }
    return out;
  }

  parameterCount(): number {
    let n = 0;
    for (const t of this.namedParameters().values()) n += t.data.length;
    return n;
  }

  private embed(input: BertInput, rng?: Rng): Tensor {
    const { batch, time } = input;
    const c = this.config;
    if (time > c.max_position_embeddings)
      throw new Error(`BertModel: ${time} positions, the model has ${c.max_position_embeddings}`);
    const w = this.weights;
    let x = embedding(w.wordEmbeddings, input.ids);
    x = addRows(x, sliceRows(w.positionEmbeddings, 0, time));
    x = add(x, embedding(w.tokenTypeEmbeddings, input.typeIds ?? new Int32Array(batch * time)));
    x = layerNorm(x, w.embeddingsNorm.weight, w.embeddingsNorm.bias, c.layer_norm_eps);
    return rng ? dropout(x, c.hidden_dropout_prob, rng) : x;
  }

  private layer(x: Tensor, l: BertLayer, input: BertInput, rng?: Rng): Tensor {
    const c = this.config;
    const qkv = concatCols([linear(x, l.query), linear(x, l.key), linear(x, l.value)]);
    const ctx = selfAttention(qkv, input.batch, input.time, c.num_attention_heads, input.lengths);
    let a = linear(ctx, l.attentionOutput);
    if (rng) a = dropout(a, c.hidden_dropout_prob, rng);
    const h = layerNorm(add(a, x), l.attentionNorm.weight, l.attentionNorm.bias, c.layer_norm_eps);
    const pre = linear(h, l.intermediate);
    const act = c.hidden_act === 'gelu' ? geluErf(pre) : gelu(pre);
    let o = linear(act, l.output);
    if (rng) o = dropout(o, c.hidden_dropout_prob, rng);
    return layerNorm(add(o, h), l.outputNorm.weight, l.outputNorm.bias, c.layer_norm_eps);
  }

  /** The last hidden state, [batch·time, hidden_size]; rows past a sequence's length are padding. */
  forward(input: BertInput, options: ForwardOptions = {}): Tensor {
    let x = this.embed(input, options.rng);
    for (const l of this.weights.layers) x = this.layer(x, l, input, options.rng);
    return x;
  }
}
