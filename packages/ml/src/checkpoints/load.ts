import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readBertConfig, type BertConfig } from '../models/bert/configuration-bert';
import { BertModel } from '../models/bert/modeling-bert';
import { WordPieceTokenizer } from '../tokenizers/tokenizer';
import { CheckpointError, readSafetensors } from './safetensors';

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
  const missing = CHECKPOINT_FILES.filter((f) => !existsSync(join(dir, f)));
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
