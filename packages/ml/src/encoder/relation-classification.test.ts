import { loadGlove } from '../assets/load';
import { loadModel, trainModel, type Metrics } from '../pipeline';
import { evaluate } from '../pipeline/evaluate';
import { loadEncoderBase } from './base';
import { EncoderTrainer } from './train';
import { HELDOUT_NAMES, RELATIONS, TRAIN_NAMES, relationPairRows } from '../synth/relation-pairs';

// These tests train real models on 2 shared cores beside the rest of the suite: the timeout guards against a hang.
jest.setTimeout(240_000);

const train = relationPairRows(120, 1, TRAIN_NAMES);
const heldout = relationPairRows(36, 2, HELDOUT_NAMES);
const hp = { nrEpochs: 4, learningRate: 0.003, seed: 5, batchSize: 16 };

describe('relation classification with given spans', () => {
  const base = loadEncoderBase();
  const glove = loadGlove();
  const untrained = evaluate(
    {
      encoder: new EncoderTrainer(train, base.config, glove, base.weights, {
        mode: 'full',
        labels: [],
        relationLabels: RELATIONS,
        epochs: 1,
        learningRate: hp.learningRate,
        batchSize: hp.batchSize,
        seed: hp.seed,
        loraRank: 8,
        loraAlpha: 16,
      })
        .model()
        .merged(),
      classifiers: new Map(),
    },
    heldout,
  );
  const trained: Partial<Record<'full' | 'lora', Metrics>> = {};
  let bundle: Uint8Array;

  beforeAll(async () => {
    for (const mode of ['full', 'lora'] as const) {
      const result = await trainModel({
        baseModel: 'whetstone-extract-base',
        trainingType: mode,
        train,
        heldout,
        hyperparameters: hp,
      });
      trained[mode] = result.metrics;
      if (mode === 'full') bundle = result.bundle;
      expect(result.manifest.schema.relations).toEqual(RELATIONS);
    }
    const line = (m: Metrics) => `micro F1 ${m.f1.toFixed(3)} macro ${m.macro_f1!.toFixed(3)} accuracy ${m.accuracy}`;
    process.stdout.write(
      `given-span relations (seed ${hp.seed}, ${train.length} train / ${heldout.length} held-out pairs): untrained ${line(untrained)}; full ${line(trained.full!)}; lora ${line(trained.lora!)}\n`,
    );
  });

  it('when the head is untrained, then its held-out figures are named for given spans and are low', () => {
    expect(untrained.headline).toBe('relation_given_spans_micro_f1');
    expect(untrained.f1).toBeLessThan(0.5);
  });

  it.each(['full', 'lora'] as const)(
    'when trained %s on template rows, then held-out relation F1 on unseen names beats the untrained head by a clear margin',
    (mode) => {
      const m = trained[mode]!;
      expect(m.headline).toBe('relation_given_spans_micro_f1');
      expect(m.f1).toBeGreaterThan(untrained.f1 + 0.3);
      expect(m.f1).toBeGreaterThan(0.75);
      expect(m.accuracy).toBeGreaterThan(untrained.accuracy!);
      for (const r of RELATIONS) expect(m.per_label[`relation/${r}`]!.support).toBeGreaterThan(0);
      // No-relation is not a label of its own: it counts only through the relations' precision.
      expect(Object.keys(m.per_label).filter((l) => l.includes('no_relation'))).toEqual([]);
    },
  );

  it('when a loaded model classifies a given pair, then the direction decides between the relation and none', () => {
    const model = loadModel(bundle);
    const text = 'Greta Holm works for Soylent Corp .';
    const person = { start: 0, end: 10 };
    const org = { start: 21, end: 33 };
    expect(model.classifyRelation!(text, person, org)).toEqual({
      relation: 'works_for',
      confidence: expect.any(Number),
    });
    expect(model.classifyRelation!(text, org, person).relation).toBeNull();
    expect(model.classifyRelation!(text, person, org).confidence).toBeGreaterThan(0.5);
  });

  it('when a model trained on given spans alone serves a schema, then relations come end to end between its zero-shot entities', () => {
    const model = loadModel(bundle);
    const out = model.extract('Greta Holm works for Soylent Corp .', {
      entities: ['person', 'organization'],
      relations: ['works_for'],
    });
    expect(out.relation_extraction).toEqual({ works_for: [['Greta Holm', 'Soylent Corp']] });
  });
});
