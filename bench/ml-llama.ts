/**
 * pnpm --filter @whetstone/bench bench:decoder-llama (the first part of bench:decoder)
 * The Llama-family decoders read from Hugging Face checkpoints:
 * - decoder_exact_max_abs_diff: the largest logit difference from `transformers` over the tiny random
 *   LlamaConfig/Qwen2Config fixtures (packages/ml/fixtures/tiny-*, every position of each input and each
 *   KV-cache decoding step; written by packages/ml/python/make_decoder_goldens.py).
 * - decoder_135m_prefill_tokens_per_s and decoder_135m_gen_tokens_per_s: SmolLM2-135M's config.json with seeded
 *   random weights (float32), a 512-token prompt run in one forward (logits of its last position), then greedy
 *   decoding of BENCH_LLAMA_GEN tokens (default 32) one at a time with the KV cache, at 512+ tokens of context.
 *   Matmuls run as onnxruntime sessions with one intra-op thread (one core); BENCH_MATMUL=js for the loops.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  nn,
  loadDecoderCheckpoint,
  LlamaForCausalLM,
  parseLlamaConfig,
  readSafetensors,
} from '@whetstone/ml/internals';

const FIXTURES = path.join(__dirname, '../packages/ml/fixtures');
const GEN = Number(process.env.BENCH_LLAMA_GEN ?? 32);
const CONTEXT = Number(process.env.BENCH_LLAMA_CONTEXT ?? 512);

/** SmolLM2-135M's config.json (HuggingFaceTB/SmolLM2-135M), as published. */
const SMOLLM2_135M = {
  architectures: ['LlamaForCausalLM'],
  attention_bias: false,
  bos_token_id: 0,
  eos_token_id: 0,
  hidden_act: 'silu',
  hidden_size: 576,
  initializer_range: 0.041666666666666664,
  intermediate_size: 1536,
  max_position_embeddings: 8192,
  model_type: 'llama',
  num_attention_heads: 9,
  num_hidden_layers: 30,
  num_key_value_heads: 3,
  rms_norm_eps: 1e-5,
  rope_scaling: null,
  rope_theta: 100000,
  tie_word_embeddings: true,
  vocab_size: 49152,
};

function maxDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} and ${b.length}`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

function exactness(): number {
  let worst = 0;
  for (const name of ['tiny-llama', 'tiny-llama-linear', 'tiny-llama-dynamic', 'tiny-qwen2']) {
    const dir = path.join(FIXTURES, name);
    const { model } = loadDecoderCheckpoint(dir);
    const { inputs } = JSON.parse(readFileSync(path.join(dir, 'goldens.json'), 'utf8')) as {
      inputs: Array<{ ids: number[]; greedy: number[] }>;
    };
    const tensors = readSafetensors(path.join(dir, 'goldens.safetensors')).tensors;
    let modelWorst = 0;
    inputs.forEach((input, i) => {
      const ids = Int32Array.from(input.ids);
      modelWorst = Math.max(modelWorst, maxDiff(model.forward(ids), tensors.get(`logits.${i}`)!.data));
      const steps = tensors.get(`steps.${i}`)?.data;
      if (!steps) return;
      const cache = model.newCache();
      model.forward(ids, { cache, logits: 'last' });
      const V = model.config.vocab_size;
      const got = new Float32Array(input.greedy.length * V);
      input.greedy.forEach((id, s) => got.set(model.forward(Int32Array.of(id), { cache }), s * V));
      modelWorst = Math.max(modelWorst, maxDiff(got, steps));
    });
    console.log(`${name}: max |logit - transformers| ${modelWorst.toExponential(2)}`);
    worst = Math.max(worst, modelWorst);
  }
  return worst;
}

/** SmolLM2-135M's shapes with seeded normal weights (std initializer_range) and unit norm gains. */
function smolLM2Random(): LlamaForCausalLM {
  const config = parseLlamaConfig(SMOLLM2_135M, 'SmolLM2-135M config.json');
  const rng = new nn.Rng(135);
  const H = config.hidden_size;
  const kv = config.num_key_value_heads * config.head_dim;
  const I = config.intermediate_size;
  const std = SMOLLM2_135M.initializer_range;
  const tensors = new Map<string, { shape: number[]; data: Float32Array; dtype: string }>();
  const put = (name: string, shape: number[], ones = false): void => {
    const n = shape.reduce((a, b) => a * b, 1);
    tensors.set(name, { shape, dtype: 'F32', data: ones ? new Float32Array(n).fill(1) : nn.randn(rng, n, std) });
  };
  put('model.embed_tokens.weight', [config.vocab_size, H]);
  put('model.norm.weight', [H], true);
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const p = `model.layers.${i}`;
    put(`${p}.self_attn.q_proj.weight`, [H, H]);
    put(`${p}.self_attn.k_proj.weight`, [kv, H]);
    put(`${p}.self_attn.v_proj.weight`, [kv, H]);
    put(`${p}.self_attn.o_proj.weight`, [H, H]);
    put(`${p}.mlp.gate_proj.weight`, [I, H]);
    put(`${p}.mlp.up_proj.weight`, [I, H]);
    put(`${p}.mlp.down_proj.weight`, [H, I]);
    put(`${p}.input_layernorm.weight`, [H], true);
    put(`${p}.post_attention_layernorm.weight`, [H], true);
  }
  return LlamaForCausalLM.fromTensors(config, tensors, 'random weights');
}

function speed(): { prefill: number; gen: number; params: number } {
  const model = smolLM2Random();
  const rng = new nn.Rng(7);
  const prompt = Int32Array.from({ length: CONTEXT }, () => Math.floor(rng.next() * model.config.vocab_size));
  // Warm-up: the ORT sessions of every shape are made once.
  model.greedy(prompt.subarray(0, 8), 2);
  const cache = model.newCache();
  const t0 = process.hrtime.bigint();
  let logits = model.forward(prompt, { cache, logits: 'last' });
  const t1 = process.hrtime.bigint();
  for (let n = 0; n < GEN; n++) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
    logits = model.forward(Int32Array.of(best), { cache });
  }
  const t2 = process.hrtime.bigint();
  return {
    prefill: CONTEXT / (Number(t1 - t0) / 1e9),
    gen: GEN / (Number(t2 - t1) / 1e9),
    params: model.parameterCount(),
  };
}

function main(): void {
  if (process.env.BENCH_MATMUL === 'js') nn.setMatmulBackend('js');
  console.log(`matmul backend: ${nn.matmulBackend()}`);
  const diff = exactness();
  const s = speed();
  console.log(
    `SmolLM2-135M shapes, random weights (${(s.params / 1e6).toFixed(1)}M parameters): ${CONTEXT}-token prefill, ${GEN} greedy tokens after it`,
  );
  console.log(`headline: decoder_exact_max_abs_diff ${diff.toExponential(2)}`);
  console.log(`headline: decoder_135m_prefill_tokens_per_s ${s.prefill.toFixed(1)}`);
  console.log(`headline: decoder_135m_gen_tokens_per_s ${s.gen.toFixed(1)}`);
}

main();
