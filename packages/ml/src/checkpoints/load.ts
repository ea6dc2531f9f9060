import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readBertConfig, type BertConfig } from '../models/bert/configuration-bert';
import { BertModel } from '../models/bert/modeling-bert';
import { readLlamaConfig, type LlamaConfig } from '../models/llama/configuration-llama';
import { LlamaForCausalLM } from '../models/llama/modeling-llama';
import { BpeTokenizer } from '../tokenizers/bpe-tokenizer';
import { WordPieceTokenizer } from '../tokenizers/tokenizer';
import { CheckpointError, readSafetensors, type NamedTensor } from './safetensors';

/** The files a BERT-family checkpoint directory must have (Hugging Face layout). */
export const CHECKPOINT_FILES = ['config.json', 'model.safetensors', 'tokenizer.json'] as const;

export interface BertCheckpoint {
  dir: string;
  config: BertConfig;
  model: BertModel;
  tokenizer: WordPieceTokenizer;
  /** Bytes of model.safetensors on disk. */
  bytes: number;
}

/** Names every required file that is absent, and says that pickled weights are never read. */
export function checkCheckpointDir(dir: string): void {
  if (!existsSync(dir)) throw new CheckpointError(`${dir}: no such checkpoint directory`);
  const sharded = existsSync(join(dir, SHARD_INDEX));
  const missing = CHECKPOINT_FILES.filter((f) => !existsSync(join(dir, f)) && !(f === 'model.safetensors' && sharded));
  if (missing.length === 0) return;
  const pickled = ['pytorch_model.bin', 'model.bin'].some((f) => existsSync(join(dir, f)));
  throw new CheckpointError(
    `${dir}: missing ${missing.join(', ')}; a checkpoint needs ${CHECKPOINT_FILES.join(', ')}` +
      (pickled && missing.includes('model.safetensors')
        ? ' (pickled .bin weights are never loaded: convert to safetensors)'
        : ''),
  );
}

/** Loads config.json, model.safetensors and tokenizer.json from a Hugging Face layout directory. */
export function loadBertCheckpoint(dir: string): BertCheckpoint {
  checkCheckpointDir(dir);
  const config = readBertConfig(join(dir, 'config.json'));
  const weightsPath = join(dir, 'model.safetensors');
  const { tensors } = readSafetensors(weightsPath);
  const model = BertModel.fromTensors(config, tensors, weightsPath);
  const tokenizer = WordPieceTokenizer.fromFile(join(dir, 'tokenizer.json'));
  if (tokenizer.vocabSize > config.vocab_size)
    throw new CheckpointError(
      `${join(dir, 'tokenizer.json')}: ${tokenizer.vocabSize} token ids, config.json says vocab_size ${config.vocab_size}`,
    );
  return { dir, config, model, tokenizer, bytes: statSync(weightsPath).size };
}

/** Sharded weights (large decoders): the index whose weight_map names each tensor's shard, in place of model.safetensors. */
export const SHARD_INDEX = 'model.safetensors.index.json';

/** The tensors of a checkpoint directory: model.safetensors, or every shard model.safetensors.index.json names. */
export function readCheckpointTensors(dir: string): { tensors: Map<string, NamedTensor>; bytes: number; file: string } {
  const single = join(dir, 'model.safetensors');
  if (existsSync(single))
    return { tensors: readSafetensors(single).tensors, bytes: statSync(single).size, file: single };
  const indexPath = join(dir, SHARD_INDEX);
  let map: Record<string, string>;
  try {
    map = (JSON.parse(readFileSync(indexPath, 'utf8')) as { weight_map: Record<string, string> }).weight_map;
    if (!map || typeof map !== 'object') throw new Error('no weight_map');
  } catch (e) {
    throw new CheckpointError(`${indexPath}: not readable as a safetensors index (${(e as Error).message})`);
  }
  const tensors = new Map<string, NamedTensor>();
  let bytes = 0;
  for (const shard of new Set(Object.values(map))) {
    const path = join(dir, shard);
    if (!existsSync(path)) throw new CheckpointError(`${indexPath}: shard ${shard} is missing`);
    for (const [name, t] of readSafetensors(path).tensors) tensors.set(name, t);
    bytes += statSync(path).size;
  }
  return { tensors, bytes, file: indexPath };
}

export interface DecoderCheckpoint {
  dir: string;
  config: LlamaConfig;
  model: LlamaForCausalLM;
  tokenizer: BpeTokenizer;
  /** Bytes of the weights on disk. */
  bytes: number;
}

/** Loads a Llama-family decoder (model_type llama or qwen2) from a Hugging Face layout directory. */
export function loadDecoderCheckpoint(dir: string): DecoderCheckpoint {
  checkCheckpointDir(dir);
  const config = readLlamaConfig(join(dir, 'config.json'));
  const { tensors, bytes, file } = readCheckpointTensors(dir);
  const model = LlamaForCausalLM.fromTensors(config, tensors, file);
  const tokenizer = BpeTokenizer.fromFile(join(dir, 'tokenizer.json'));
  if (tokenizer.vocabSize > config.vocab_size)
    throw new CheckpointError(
      `${join(dir, 'tokenizer.json')}: ${tokenizer.vocabSize} token ids, config.json says vocab_size ${config.vocab_size}`,
    );
  return { dir, config, model, tokenizer, bytes };
}
