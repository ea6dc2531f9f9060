import { join } from 'node:path';
import { loadBertCheckpoint } from '../../checkpoints/load';
import { readSafetensors } from '../../checkpoints/safetensors';
import { geluErf } from '../../nn/gelu-erf';
import { weightedSum } from '../../nn/ops';
import { randn, Rng } from '../../nn/rng';
import { Tensor } from '../../nn/tensor';
import { mergeLora, trainableCopy, trainableParameters, withLora } from './adapters';
import { batchOf } from './batch';
import { loadLoraAdapter, saveLoraAdapter } from './peft';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const FIXTURES = join(__dirname, '../../../fixtures');
const ckpt = loadBertCheckpoint(join(FIXTURES, 'tiny-bert'));
const texts = (
  JSON.parse(readFileSync(join(FIXTURES, 'tiny-bert/goldens.json'), 'utf8')) as {
    model: Array<string | [string, string]>;
  }
).model;
const input = batchOf(ckpt.tokenizer, texts);
const maxDiff = (a: Float32Array, b: Float32Array): number =>
  a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);

describe('BERT LoRA, PEFT layout and gradients', () => {
  it('the PEFT adapter made by scripts/make-lora-fixture.ts loads back to the outputs it was saved with, merged too', () => {
    const dir = join(FIXTURES, 'tiny-bert-lora');
    const expected = readSafetensors(join(dir, 'expected.safetensors')).tensors;
    const adapted = loadLoraAdapter(ckpt.model, dir);
    const H = ckpt.config.hidden_size;
    for (const model of [adapted, mergeLora(adapted)]) {
      const out = model.forward(input);
      for (let b = 0; b < input.batch; b++) {
        const want = expected.get(`hidden.${b}`)!.data;
        expect(
          maxDiff(out.data.subarray(b * input.time * H, b * input.time * H + want.length), want),
        ).toBeLessThanOrEqual(1e-5);
      }
    }
  });

  it('saves and reloads an adapter with PEFT tensor names; a fresh adapter changes nothing (B = 0)', () => {
    const lora = withLora(ckpt.model, { r: 2, alpha: 4, seed: 3 });
    expect(maxDiff(lora.forward(input).data, ckpt.model.forward(input).data)).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), 'peft-'));
    try {
      saveLoraAdapter(lora, dir, 'tiny');
      const names = [...readSafetensors(join(dir, 'adapter_model.safetensors')).tensors.keys()];
      expect(names).toContain('base_model.model.encoder.layer.0.attention.self.query.lora_A.weight');
      expect(names).toContain('base_model.model.encoder.layer.1.output.dense.lora_B.weight');
      expect(names).toHaveLength(2 * 6 * ckpt.config.num_hidden_layers);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gradients match finite differences: GELU (erf), and through the whole model into a LoRA factor and a weight', () => {
    const x = new Tensor(Float32Array.from([-3, -1.2, -0.3, 0, 0.4, 1.7, 4]), [7], true);
    geluErf(x).backward(new Float32Array(7).fill(1));
    const g = Float64Array.from(x.grad!);
    const h = 1e-3;
    x.data.forEach((v, i) => {
      const f = (z: number) => geluErf(new Tensor(Float32Array.of(z), [1])).data[0]!;
      expect(g[i]).toBeCloseTo((f(v + h) - f(v - h)) / (2 * h), 3);
    });
    const model = withLora(trainableCopy(ckpt.model), { r: 2, alpha: 4, seed: 1 });
    const B = model.weights.layers[0]!.value.lora!.B;
    B.data.set(randn(new Rng(2), B.data.length, 0.1));
    const w = randn(new Rng(4), input.batch * input.time * ckpt.config.hidden_size, 1);
    const loss = () => weightedSum(model.forward(input), w).data[0]!;
    weightedSum(model.forward(input), w).backward();
    for (const [t, i] of [
      [model.weights.layers[0]!.query.lora!.A, 5],
      [model.weights.layers[1]!.intermediate.weight, 17],
      [model.weights.embeddingsNorm.weight, 3],
    ] as const) {
      const analytic = t.grad![i]!;
      const v = t.data[i]!;
      t.data[i] = v + 1e-2;
      const up = loss();
      t.data[i] = v - 1e-2;
      const down = loss();
      t.data[i] = v;
      expect(Math.abs(analytic - (up - down) / 2e-2)).toBeLessThan(2e-2 * Math.max(1, Math.abs(analytic)));
    }
    expect(trainableParameters(model).length).toBeGreaterThan(0);
  });
});
