/**
 * Writes fixtures/tiny-bert-lora: a LoRA adapter on the tiny checkpoint, trained here for a few AdamW steps (so
 * lora_B is not zero), saved in PEFT's layout, with the hidden states this package computes with it for the
 * goldens' texts. python/test_peft_roundtrip.py loads it in HF `peft` and checks the same outputs; the jest test
 * checks that loading it back (and merging it) gives them too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBertCheckpoint } from '../src/checkpoints/load';
import { writeSafetensors } from '../src/checkpoints/safetensors';
import { trainableParameters, withLora } from '../src/models/bert/adapters';
import { saveLoraAdapter } from '../src/models/bert/peft';
import { batchOf } from '../src/models/bert/batch';
import { Adam } from '../src/nn/adam';
import { weightedSum } from '../src/nn/ops';
import { Rng, randn } from '../src/nn/rng';

const FIXTURES = join(__dirname, '../fixtures');
const ckpt = loadBertCheckpoint(join(FIXTURES, 'tiny-bert'));
const texts = (
  JSON.parse(readFileSync(join(FIXTURES, 'tiny-bert/goldens.json'), 'utf8')) as {
    model: Array<string | [string, string]>;
  }
).model;
const model = withLora(ckpt.model, { r: 4, alpha: 8, seed: 5 });
const input = batchOf(ckpt.tokenizer, texts);
const target = randn(new Rng(9), input.batch * input.time * ckpt.config.hidden_size, 1);
const opt = new Adam(trainableParameters(model), { learningRate: 0.02 });
for (let step = 0; step < 8; step++) {
  const loss = weightedSum(model.forward(input), target);
  loss.backward();
  opt.step();
}
const out = join(FIXTURES, 'tiny-bert-lora');
saveLoraAdapter(model, out, 'tiny-bert');
const hidden = model.forward(input);
const H = ckpt.config.hidden_size;
const expected = new Map<string, { shape: number[]; data: Float32Array }>();
for (let b = 0; b < input.batch; b++) {
  const n = input.lengths[b]!;
  expected.set(`hidden.${b}`, { shape: [n, H], data: hidden.data.slice(b * input.time * H, (b * input.time + n) * H) });
}
writeSafetensors(join(out, 'expected.safetensors'), expected);
console.log(`wrote ${out}`);
