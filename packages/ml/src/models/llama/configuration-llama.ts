import { readFileSync } from 'node:fs';
import { CheckpointError } from '../../checkpoints/safetensors';

/**
 * `config.json` of a Llama-family checkpoint: the keys `transformers`' LlamaConfig and Qwen2Config read, by the
 * same names and with the same defaults. Both the current `rope_parameters` dict and the older top-level
 * `rope_theta` + `rope_scaling` pair are read; {@link LlamaConfig.rope_parameters} is always filled in, as
 * `standardize_rope_params` does.
 */
export type LlamaModelType = 'llama' | 'qwen2';

export const LLAMA_MODEL_TYPES: readonly LlamaModelType[] = ['llama', 'qwen2'];

export type RopeType = 'default' | 'linear' | 'dynamic' | 'llama3';

export interface RopeParameters {
  rope_type: RopeType;
  rope_theta: number;
  /** linear, dynamic, llama3. */
  factor?: number;
  /** llama3. */
  low_freq_factor?: number;
  high_freq_factor?: number;
  original_max_position_embeddings?: number;
  partial_rotary_factor?: number;
}

export interface LlamaConfig {
  model_type: LlamaModelType;
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  hidden_act: 'silu';
  max_position_embeddings: number;
  rms_norm_eps: number;
  tie_word_embeddings: boolean;
  rope_parameters: RopeParameters;
  /** Biases on q, k, v and o (Llama); Qwen2 always has q/k/v biases and none on o. */
  attention_bias: boolean;
  mlp_bias: boolean;
  bos_token_id: number | null;
  eos_token_id: number | number[] | null;
  pad_token_id: number | null;
  /** Qwen2: the window of the layers `layer_types` marks `sliding_attention`, null for full attention everywhere. */
  sliding_window: number | null;
  layer_types: Array<'full_attention' | 'sliding_attention'>;
}

const DEFAULTS: Record<LlamaModelType, Record<string, unknown>> = {
  llama: {
    vocab_size: 32000,
    hidden_size: 4096,
    intermediate_size: 11008,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    hidden_act: 'silu',
    max_position_embeddings: 2048,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: false,
    attention_bias: false,
    mlp_bias: false,
    bos_token_id: 1,
    eos_token_id: 2,
    pad_token_id: null,
    rope_theta: 10000,
  },
  qwen2: {
    vocab_size: 151936,
    hidden_size: 4096,
    intermediate_size: 22016,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    num_key_value_heads: 32,
    hidden_act: 'silu',
    max_position_embeddings: 32768,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: false,
    use_sliding_window: false,
    sliding_window: 4096,
    max_window_layers: 28,
    bos_token_id: null,
    eos_token_id: null,
    pad_token_id: null,
    rope_theta: 10000,
  },
};

function positiveInt(raw: Record<string, unknown>, key: string, file: string): number {
  const v = raw[key];
  if (!Number.isInteger(v) || (v as number) <= 0)
    throw new CheckpointError(`${file}: ${key} must be a positive integer, got ${JSON.stringify(v)}`);
  return v as number;
}

function readRope(raw: Record<string, unknown>, file: string): RopeParameters {
  const given = (raw.rope_parameters ?? raw.rope_scaling ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object' || Array.isArray(given))
    throw new CheckpointError(`${file}: rope_parameters must be an object`);
  const type = String(given.rope_type ?? given.type ?? 'default');
  if (!['default', 'linear', 'dynamic', 'llama3'].includes(type))
    throw new CheckpointError(
      `${file}: rope_type ${JSON.stringify(type)} is not supported; supported: default, linear, dynamic, llama3`,
    );
  const rope: RopeParameters = {
    ...(given as Partial<RopeParameters>),
    rope_type: type as RopeType,
    rope_theta: Number(given.rope_theta ?? raw.rope_theta),
  };
  if (!(rope.rope_theta > 0)) throw new CheckpointError(`${file}: rope_theta must be positive`);
  if (raw.partial_rotary_factor !== undefined && rope.partial_rotary_factor === undefined)
    rope.partial_rotary_factor = Number(raw.partial_rotary_factor);
  if (type !== 'default' && !(Number(rope.factor) > 0))
    throw new CheckpointError(`${file}: rope_type ${type} needs a positive factor`);
  if (type === 'llama3') {
    rope.original_max_position_embeddings ??= raw.max_position_embeddings as number;
    for (const k of ['low_freq_factor', 'high_freq_factor', 'original_max_position_embeddings'] as const)
      if (!(Number(rope[k]) > 0)) throw new CheckpointError(`${file}: rope_type llama3 needs ${k}`);
  }
  return rope;
}

/** Validates a parsed config.json (defaults as LlamaConfig's or Qwen2Config's); `file` names it in errors. */
export function parseLlamaConfig(input: Record<string, unknown>, file = 'config.json'): LlamaConfig {
  const type = input.model_type as LlamaModelType;
  if (!LLAMA_MODEL_TYPES.includes(type))
    throw new CheckpointError(
      `${file}: model_type ${JSON.stringify(input.model_type)} is not a decoder this package implements; supported: ${LLAMA_MODEL_TYPES.join(', ')}`,
    );
  const raw: Record<string, unknown> = { ...DEFAULTS[type], ...input };
  for (const k of [
    'vocab_size',
    'hidden_size',
    'intermediate_size',
    'num_hidden_layers',
    'num_attention_heads',
    'max_position_embeddings',
  ])
    positiveInt(raw, k, file);
  raw.num_key_value_heads ??= raw.num_attention_heads;
  raw.head_dim ??= (raw.hidden_size as number) / (raw.num_attention_heads as number);
  positiveInt(raw, 'num_key_value_heads', file);
  positiveInt(raw, 'head_dim', file);
  if ((raw.num_attention_heads as number) % (raw.num_key_value_heads as number) !== 0)
    throw new CheckpointError(
      `${file}: num_attention_heads ${String(raw.num_attention_heads)} is not a multiple of num_key_value_heads ${String(raw.num_key_value_heads)}`,
    );
  if (raw.hidden_act !== 'silu')
    throw new CheckpointError(
      `${file}: hidden_act ${JSON.stringify(raw.hidden_act)} is not supported; supported: silu`,
    );
  const layers = raw.num_hidden_layers as number;
  let sliding: number | null = null;
  let layerTypes = raw.layer_types as LlamaConfig['layer_types'] | undefined;
  if (type === 'qwen2' && raw.use_sliding_window) {
    sliding = positiveInt(raw, 'sliding_window', file);
    const from = raw.max_window_layers as number;
    layerTypes ??= Array.from({ length: layers }, (_, i) => (i >= from ? 'sliding_attention' : 'full_attention'));
  }
  layerTypes ??= Array.from({ length: layers }, () => 'full_attention' as const);
  if (layerTypes.length !== layers)
    throw new CheckpointError(`${file}: layer_types has ${layerTypes.length} entries for ${layers} layers`);
  return {
    model_type: type,
    vocab_size: raw.vocab_size as number,
    hidden_size: raw.hidden_size as number,
    intermediate_size: raw.intermediate_size as number,
    num_hidden_layers: layers,
    num_attention_heads: raw.num_attention_heads as number,
    num_key_value_heads: raw.num_key_value_heads as number,
    head_dim: raw.head_dim as number,
    hidden_act: 'silu',
    max_position_embeddings: raw.max_position_embeddings as number,
    rms_norm_eps: Number(raw.rms_norm_eps),
    tie_word_embeddings: Boolean(raw.tie_word_embeddings),
    rope_parameters: readRope(raw, file),
    attention_bias: Boolean(raw.attention_bias),
    mlp_bias: Boolean(raw.mlp_bias),
    bos_token_id: (raw.bos_token_id as number | null) ?? null,
    eos_token_id: (raw.eos_token_id as number | number[] | null) ?? null,
    pad_token_id: (raw.pad_token_id as number | null) ?? null,
    sliding_window: sliding,
    layer_types: layerTypes,
  };
}

export function readLlamaConfig(path: string): LlamaConfig {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new CheckpointError(`${path}: not readable as config.json (${(e as Error).message})`);
  }
  return parseLlamaConfig(raw, path);
}
