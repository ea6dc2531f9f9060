import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadDecoderCheckpoint } from '../../checkpoints/load';
import { readSafetensors } from '../../checkpoints/safetensors';

/**
 * The TypeScript Llama family against `transformers` (goldens written by packages/ml/python/make_decoder_goldens.py):
 * tiny random LlamaConfig and Qwen2Config checkpoints (save_pretrained) covering the rotary kinds (llama3, linear,
 * dynamic past max_position_embeddings, default), tied and untied embeddings, grouped-query, multi-query and
 * multi-head attention, attention and MLP biases, Qwen2's q/k/v biases and a sliding-window layer. Token ids
 * identical, logits of every position within 1e-4, decoding with the KV cache equal to the full forward, and to
 * transformers' own cached decoding step by step (logits and greedy ids).
 */
const FIXTURES = join(__dirname, '../../../fixtures');
const TOLERANCE = 1e-4;

interface Input {
  text: string;
  ids: number[];
  greedy: number[];
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

describe('Llama-family decoders against transformers', () => {
  for (const name of ['tiny-llama', 'tiny-llama-linear', 'tiny-llama-dynamic', 'tiny-qwen2']) {
    it(`${name}: ids, logits, KV-cache decoding and greedy generation`, () => {
      const dir = join(FIXTURES, name);
      const { model, tokenizer } = loadDecoderCheckpoint(dir);
      const { inputs } = JSON.parse(readFileSync(join(dir, 'goldens.json'), 'utf8')) as { inputs: Input[] };
      const logits = readSafetensors(join(dir, 'goldens.safetensors')).tensors;
      const V = model.config.vocab_size;
      inputs.forEach((input, i) => {
        const ids = tokenizer.encode(input.text).ids;
        expect(Array.from(ids)).toEqual(input.ids);
        const full = model.forward(ids);
        expect(maxDiff(full, logits.get(`logits.${i}`)!.data)).toBeLessThanOrEqual(TOLERANCE);
        // One token at a time through the cache: the same logits as the full forward.
        if (
          model.config.rope_parameters.rope_type !== 'dynamic' ||
          ids.length <= model.config.max_position_embeddings
        ) {
          const cache = model.newCache();
          const stepped = new Float32Array(ids.length * V);
          const split = Math.max(1, ids.length >> 1);
          stepped.set(model.forward(ids.subarray(0, split), { cache }), 0);
          for (let t = split; t < ids.length; t++) stepped.set(model.forward(ids.subarray(t, t + 1), { cache }), t * V);
          expect(cache.length).toBe(ids.length);
          expect(maxDiff(stepped, full)).toBeLessThanOrEqual(TOLERANCE);
        }
        // transformers' decoding with its DynamicCache: the same logits at each step, the same greedy ids.
        const steps = logits.get(`steps.${i}`);
        if (steps) {
          const cache = model.newCache();
          model.forward(ids, { cache, logits: 'last' });
          const got = new Float32Array(input.greedy.length * V);
          input.greedy.forEach((id, s) => got.set(model.forward(Int32Array.of(id), { cache }), s * V));
          expect(maxDiff(got, steps.data)).toBeLessThanOrEqual(TOLERANCE);
        }
        expect(model.greedy(ids, input.greedy.length)).toEqual(input.greedy);
      });
    });
  }

  it('refuses a context beyond max_position_embeddings and ids outside the vocabulary', () => {
    const { model } = loadDecoderCheckpoint(join(FIXTURES, 'tiny-llama'));
    expect(() => model.forward(new Int32Array(65))).toThrow(
      'LlamaForCausalLM: 65 positions exceed the context of 64 (max_position_embeddings)',
    );
    expect(() => model.forward(Int32Array.of(1, 501))).toThrow('token id 501 is outside the vocabulary of 501');
  });
});
