import { join } from 'node:path';
import { loadBertCheckpoint } from '../checkpoints/load';
import { BERT_ENTITY_DEFAULTS, trainBertEntities, type EntityRow } from './bert-entities';

const ckpt = loadBertCheckpoint(join(__dirname, '../../fixtures/tiny-bert'));
const row = (text: string, spans: Array<[string, string]>): EntityRow => ({
  text,
  entities: spans.map(([s, label]) => ({ start: text.indexOf(s), end: text.indexOf(s) + s.length, label })),
});
const rows = [
  row('Barack Obama visited Paris on Tuesday.', [
    ['Barack Obama', 'person'],
    ['Paris', 'location'],
  ]),
  row('The European Union grew in 2019, said Jean-Claude Juncker.', [
    ['European Union', 'organization'],
    ['Jean-Claude Juncker', 'person'],
  ]),
  row('What is the capital of France?', [['France', 'location']]),
];
const labels = ['person', 'location', 'organization'];
const options = {
  ...BERT_ENTITY_DEFAULTS,
  head: { ...BERT_ENTITY_DEFAULTS.head, dim: 32 },
  epochs: 40,
  batchSize: 3,
  seed: 3,
};

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('the label-conditioned span head on a BERT checkpoint', () => {
  it('full fine-tuning lowers the loss and decodes spans back to word-aligned character offsets', () => {
    const losses: number[] = [];
    const model = trainBertEntities(ckpt, rows, labels, {
      ...options,
      mode: 'full',
      learningRate: 3e-3,
      headLearningRate: 1e-2,
      onProgress: (e) => losses.push(e.loss),
    });
    expect(mean(losses.slice(-10))).toBeLessThan(0.2 * losses[0]!);
    // With every span allowed (threshold 0), decoding keeps the best non-overlapping spans, each whole words.
    const found = model.predict([rows[0]!.text], labels, 0)[0]!;
    for (const f of found) expect(rows[0]!.text.slice(f.start, f.end)).toBe(rows[0]!.text.slice(f.start, f.end).trim());
    expect(found.length).toBeGreaterThan(0);
  });

  it('LoRA trains the adapter and the head only, and the merged model predicts the same', () => {
    const model = trainBertEntities(ckpt, rows, labels, {
      ...options,
      mode: 'lora',
      learningRate: 1e-2,
      headLearningRate: 1e-2,
    });
    expect(ckpt.model.weights.layers[0]!.query.weight.requiresGrad).toBe(false);
    expect(model.bert.weights.layers[0]!.query.lora!.B.data.some((v) => v !== 0)).toBe(true);
    const texts = rows.map((r) => r.text);
    const unmerged = model.predict(texts, labels, 0.05);
    expect(unmerged.flat().length).toBeGreaterThan(0);
    expect(model.merged().predict(texts, labels, 0.05)).toEqual(unmerged);
  });
});
