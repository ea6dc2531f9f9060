import { readFileSync } from 'node:fs';
import { datasetFile } from '@whetstone/testing';
import { loadGlove } from '../assets/load';
import { loadEncoderBase } from './base';
import { EncoderTrainer } from './train';

const rows = readFileSync(datasetFile('wikigold/train.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .slice(0, 64)
  .map((l) => JSON.parse(l) as { text: string; entities: { start: number; end: number; label: string }[] });
const labels = ['location', 'misc', 'organization', 'person'];

describe('the encoder LoRA adapter', () => {
  it('when the trained adapter is folded into the weights, then spans and confidences match the adapter applied at run time', () => {
    const base = loadEncoderBase();
    const trainer = new EncoderTrainer(rows, base.config, loadGlove(), base.weights, {
      mode: 'lora',
      labels,
      epochs: 2,
      learningRate: 0.005,
      batchSize: 16,
      seed: 3,
      loraRank: 8,
      loraAlpha: 16,
    });
    trainer.runEpoch();
    trainer.runEpoch();
    const unmerged = trainer.model();
    const merged = unmerged.merged();
    expect(unmerged.adapter).not.toBeNull();
    expect(merged.adapter).toBeNull();
    // The adapter moved B away from zero, so folding changes the weights and is really exercised.
    expect(merged.weights['in.w']!.data).not.toEqual(base.weights['in.w']!.data);
    for (const r of rows.slice(0, 20)) {
      const a = unmerged.extract(r.text, labels);
      const b = merged.extract(r.text, labels);
      expect(b.map(({ start, end, label }) => ({ start, end, label }))).toEqual(
        a.map(({ start, end, label }) => ({ start, end, label })),
      );
      b.forEach((s, i) => expect(s.confidence).toBeCloseTo(a[i]!.confidence, 4));
    }
  });
});
