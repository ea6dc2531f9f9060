import { readFileSync } from 'node:fs';
import { CheckpointError } from '../../checkpoints/safetensors';

/** `config.json` of a BERT-family checkpoint: the keys `transformers`' BertConfig reads, by the same names. */
export interface BertConfig {
  model_type: 'bert';
  vocab_size: number;
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  intermediate_size: number;
  hidden_act: 'gelu' | 'gelu_new' | 'gelu_pytorch_tanh';
  hidden_dropout_prob: number;
  attention_probs_dropout_prob: number;
  max_position_embeddings: number;
  type_vocab_size: number;
  layer_norm_eps: number;
  pad_token_id: number;
  position_embedding_type: 'absolute';
}

const DEFAULTS: Omit<BertConfig, 'model_type'> = {
  vocab_size: 30522,
  hidden_size: 768,
  num_hidden_layers: 12,
  num_attention_heads: 12,
  intermediate_size: 3072,
  hidden_act: 'gelu',
  hidden_dropout_prob: 0.1,
  attention_probs_dropout_prob: 0.1,
  max_position_embeddings: 512,
  type_vocab_size: 2,
  layer_norm_eps: 1e-12,
  pad_token_id: 0,
  position_embedding_type: 'absolute',
};

/** Model types this package implements, for the error a checkpoint of another family gets. */
export const SUPPORTED_MODEL_TYPES = ['bert'] as const;

/** Validates a parsed config.json (defaults as BertConfig's); `file` names it in errors. */
export function parseBertConfig(raw: Record<string, unknown>, file = 'config.json'): BertConfig {
  if (raw.model_type !== 'bert')
    throw new CheckpointError(
      `${file}: model_type ${JSON.stringify(raw.model_type)} is not supported; supported: ${SUPPORTED_MODEL_TYPES.join(', ')}`,
    );
  const config = { ...DEFAULTS, ...raw, model_type: 'bert' } as BertConfig;
  for (const key of [
    'vocab_size',
    'hidden_size',
    'num_hidden_layers',
    'num_attention_heads',
    'intermediate_size',
    'max_position_embeddings',
    'type_vocab_size',
  ] as const)
    if (!Number.isInteger(config[key]) || config[key] <= 0)
      throw new CheckpointError(`${file}: ${key} must be a positive integer, got ${JSON.stringify(config[key])}`);
  if (config.hidden_size % config.num_attention_heads !== 0)
    throw new CheckpointError(`${file}: hidden_size ${config.hidden_size} is not a multiple of num_attention_heads`);
  if (!['gelu', 'gelu_new', 'gelu_pytorch_tanh'].includes(config.hidden_act))
    throw new CheckpointError(`${file}: hidden_act ${config.hidden_act} is not supported; supported: gelu, gelu_new`);
  if (config.position_embedding_type !== 'absolute')
    throw new CheckpointError(`${file}: position_embedding_type ${config.position_embedding_type} is not supported`);
  return config;
}

export function readBertConfig(path: string): BertConfig {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new CheckpointError(`${path}: not readable as config.json (${(e as Error).message})`);
  }
  return parseBertConfig(raw, path);
}
