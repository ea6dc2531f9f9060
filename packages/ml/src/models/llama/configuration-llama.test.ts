import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDecoderCheckpoint } from '../../checkpoints/load';
import { readSafetensors, writeSafetensors } from '../../checkpoints/safetensors';
import { parseLlamaConfig } from './configuration-llama';
import { ropeInvFreq } from './rope';

const FIXTURES = join(__dirname, '../../../fixtures');

describe('LlamaConfig and Qwen2Config from config.json', () => {
  const tiny = { model_type: 'llama', hidden_size: 32, num_attention_heads: 4, num_hidden_layers: 1 };

  it('reads the older rope_theta + rope_scaling keys as rope_parameters', () => {
    const c = parseLlamaConfig({
      ...tiny,
      rope_theta: 500000,
      rope_scaling: { type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4 },
      max_position_embeddings: 4096,
    });
    expect(c.rope_parameters).toEqual({
      rope_type: 'llama3',
      type: 'llama3',
      rope_theta: 500000,
      factor: 8,
      low_freq_factor: 1,
      high_freq_factor: 4,
      original_max_position_embeddings: 4096,
    });
    expect(c.num_key_value_heads).toBe(4);
    expect(c.head_dim).toBe(8);
    expect(ropeInvFreq(c, 1).length).toBe(4);
  });

  it('Qwen2 defaults: no sliding window unless use_sliding_window', () => {
    const c = parseLlamaConfig({ ...tiny, model_type: 'qwen2', num_key_value_heads: 2 });
    expect(c.sliding_window).toBeNull();
    expect(c.layer_types).toEqual(['full_attention']);
  });

  it('names what is wrong', () => {
    expect(() => parseLlamaConfig({ ...tiny, model_type: 'gpt2' }, 'x/config.json')).toThrow(
      'x/config.json: model_type "gpt2" is not a decoder this package implements; supported: llama, qwen2',
    );
    expect(() => parseLlamaConfig({ ...tiny, rope_scaling: { rope_type: 'yarn', factor: 4 } }, 'c')).toThrow(
      'c: rope_type "yarn" is not supported; supported: default, linear, dynamic, llama3',
    );
    expect(() => parseLlamaConfig({ ...tiny, num_key_value_heads: 3 }, 'c')).toThrow(
      'c: num_attention_heads 4 is not a multiple of num_key_value_heads 3',
    );
    expect(() => parseLlamaConfig({ ...tiny, hidden_act: 'gelu' }, 'c')).toThrow(
      'c: hidden_act "gelu" is not supported',
    );
  });
});

describe('loadDecoderCheckpoint', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'llama-ckpt-'));
    for (const f of ['config.json', 'tokenizer.json'])
      copyFileSync(join(FIXTURES, 'tiny-llama-linear', f), join(dir, f));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads sharded weights through model.safetensors.index.json, with the same logits', () => {
    const { tensors } = readSafetensors(join(FIXTURES, 'tiny-llama-linear', 'model.safetensors'));
    const names = [...tensors.keys()];
    const shards = [names.slice(0, 10), names.slice(10)];
    const weight_map: Record<string, string> = {};
    shards.forEach((part, i) => {
      const file = `model-0000${i + 1}-of-00002.safetensors`;
      writeSafetensors(join(dir, file), new Map(part.map((n) => [n, tensors.get(n)!])));
      for (const n of part) weight_map[n] = file;
    });
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map }));
    const sharded = loadDecoderCheckpoint(dir).model;
    const whole = loadDecoderCheckpoint(join(FIXTURES, 'tiny-llama-linear')).model;
    const ids = Int32Array.of(3, 1, 4, 1, 5);
    expect(sharded.forward(ids)).toEqual(whole.forward(ids));
  });

  it('an untied checkpoint without lm_head.weight, or no weights at all, is a clear error', () => {
    expect(() => loadDecoderCheckpoint(dir)).toThrow(`${dir}: missing model.safetensors`);
    const { tensors } = readSafetensors(join(FIXTURES, 'tiny-llama-linear', 'model.safetensors'));
    tensors.delete('lm_head.weight');
    writeSafetensors(join(dir, 'model.safetensors'), tensors);
    expect(() => loadDecoderCheckpoint(dir)).toThrow(
      'tensor lm_head.weight is missing (expected shape [501, 32]) and config.json does not tie the embeddings',
    );
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).tie_word_embeddings).toBe(false);
  });
});
