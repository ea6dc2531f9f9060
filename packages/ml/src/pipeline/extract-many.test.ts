import { readFileSync } from 'node:fs';
import { datasetFile } from '@whetstone/testing';
import { extractBaseModel } from '../zeroshot/base-model';
import { loadModel, trainModel } from './index';

// Trains one small real model on 2 shared cores: the timeout guards against a hang, it does not time the training.
jest.setTimeout(240_000);

const read = (file: string, n: number) =>
  readFileSync(datasetFile(file), 'utf8')
    .trim()
    .split('\n')
    .slice(0, n)
    .map((l) => JSON.parse(l) as { text: string; entities?: { start: number; end: number; label: string }[] });

const train = read('wikigold/train.jsonl', 120);
// Texts of very different lengths (padding), one longer than a chunk (several chunks), one empty, one repeated.
const texts = [
  ...read('wikigold/test.jsonl', 30).map((r) => r.text),
  '',
  'Ada Lovelace met Charles Babbage in London .',
  Array.from({ length: 8 }, () => 'Grace Hopper worked at Harvard in Cambridge with the Navy .').join(' '),
  'Ada Lovelace met Charles Babbage in London .',
];
const options = { includeConfidence: true, includeSpans: true };

/** JSON without confidences (the spans, labels and texts must match exactly; confidences by `expectClose`). */
const nearest = (key: string, value: unknown) => (key === 'confidence' ? undefined : value);

/** Every confidence within 0.0002 of its counterpart. */
function expectClose(a: unknown, b: unknown): void {
  if (typeof a === 'number' && typeof b === 'number') return expect(Math.abs(a - b)).toBeLessThanOrEqual(2e-4);
  if (a && b && typeof a === 'object' && typeof b === 'object')
    for (const k of Object.keys(a)) expectClose((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
}

describe('extractMany', () => {
  let bundle: Uint8Array;
  beforeAll(async () => {
    bundle = (
      await trainModel({
        baseModel: 'whetstone-extract-base',
        trainingType: 'lora',
        train,
        heldout: [],
        hyperparameters: { nrEpochs: 1, learningRate: 0.005, seed: 5 },
      })
    ).bundle;
  });

  it('when a trained model runs texts as one batch, then every result equals running that text alone', () => {
    const model = loadModel(bundle);
    for (const schema of [
      { entities: ['person', 'location', 'organization', 'misc'] },
      // Trained and untrained labels together: the trained ones batch, the others take the zero-shot path.
      { entities: ['person', 'city'] },
      {},
    ]) {
      const alone = texts.map((t) => model.extract(t, schema, options));
      const batched = model.extractMany(texts, schema, options);
      // Batched matmuls round differently in the last float bits, which can move a 4-decimal confidence by 0.0001.
      expect(JSON.stringify(batched, nearest)).toEqual(JSON.stringify(alone, nearest));
      batched.forEach((r, i) => expectClose(r, alone[i]));
    }
    // Entities were really found, so the comparison is not between empty results.
    expect(JSON.stringify(model.extractMany(texts.slice(0, 5), { entities: ['person'] }))).toContain('"person":["');
  });

  it('when more texts than one forward pass takes arrive, then they are split and stay in order', () => {
    const model = loadModel(bundle);
    const many = Array.from({ length: 70 }, (_, i) => texts[i % texts.length]!);
    const schema = { entities: ['person', 'location'] };
    expect(model.extractMany(many, schema, options)).toEqual(many.map((t) => model.extract(t, schema, options)));
  });

  it('when the zero-shot base runs a batch, then each result equals its own call', () => {
    const schema = { entities: ['person', 'city'] };
    expect(extractBaseModel.extractMany(texts.slice(0, 6), schema)).toEqual(
      texts.slice(0, 6).map((t) => extractBaseModel.extract(t, schema)),
    );
  });
});
