import { loadGlove } from '../assets/load';
import { relationPRF, spanPRF, type Relation } from '../eval/metrics';
import { loadModel, mergeAdapter, trainModel, type Checkpoint, type ProgressEvent } from '../pipeline';
import { Rng } from '../nn';
import { fillRelationTemplate, type RelationNames } from '../synth/relation-pairs';
import { extractBaseModel } from '../zeroshot/base-model';
import { loadEncoderBase } from './base';
import { EncoderTrainer, type EncoderTrainOptions } from './train';

// These tests train real models on 2 shared cores beside the rest of the suite: the timeout guards against a hang.
jest.setTimeout(240_000);

type Span = { start: number; end: number; label: string };

const PEOPLE = [
  'Anna Berg',
  'Tom Walsh',
  'Maria Costa',
  'John Reed',
  'Lena Fischer',
  'Omar Haddad',
  'Sara Lind',
  'Paul Duarte',
  'Nina Petrova',
  'Carl Jansen',
  'Eva Novak',
  'Hugo Martin',
];
const ORGS = [
  'Acme Corp',
  'Globex',
  'Initech',
  'Umbrella Group',
  'Stark Industries',
  'Wayne Enterprises',
  'Hooli',
  'Vandelay Industries',
];
const CITIES = ['Paris', 'Berlin', 'Madrid', 'Chicago', 'Toronto', 'Oslo', 'Lisbon', 'Vienna'];
const UNSEEN = {
  person: ['Ivan Sokolov', 'Greta Holm', 'Luis Ortega', 'Mia Tanaka'],
  organization: ['Cyberdyne Systems', 'Soylent Corp', 'Tyrell Corporation'],
  city: ['Dublin', 'Prague', 'Boston', 'Milan'],
};

/** Templates: `{p}`, `{o}`, `{c}` slots (a second person `{q}`), and the relations they state. */
const TEMPLATES: [string, [string, string, string][]][] = [
  ['{p} works for {o} .', [['works_for', 'p', 'o']]],
  ['{p} was born in {c} .', [['born_in', 'p', 'c']]],
  ['{o} is based in {c} .', [['based_in', 'o', 'c']]],
  [
    '{p} , who was born in {c} , works for {o} .',
    [
      ['born_in', 'p', 'c'],
      ['works_for', 'p', 'o'],
    ],
  ],
  ['{p} visited {c} last year .', []],
  ['{p} met {q} at {o} .', []],
];
const RELATIONS = ['based_in', 'born_in', 'works_for'];

type Row = { text: string; entities: Span[]; relations: { label: string; head: Span; tail: Span }[] };

function rows(n: number, seed: number, names: RelationNames): Row[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const [template, relations] = TEMPLATES[i % TEMPLATES.length]!;
    const { text, spans } = fillRelationTemplate(template, rng, names);
    return {
      text,
      entities: Object.values(spans).sort((x, y) => x.start - y.start),
      relations: relations.map(([label, h, t]) => ({ label, head: spans[h]!, tail: spans[t]! })),
    };
  });
}

const train = rows(200, 1, { person: PEOPLE, organization: ORGS, city: CITIES });
const heldout = rows(48, 2, UNSEEN);
const hp = { nrEpochs: 4, learningRate: 0.003, seed: 5, batchSize: 8 };
const schema = { entities: ['city', 'organization', 'person'], relations: RELATIONS };
const predictions = (bundle: Uint8Array) => {
  const model = loadModel(bundle);
  return heldout.map((r) =>
    JSON.stringify(model.extract(r.text, schema, { includeSpans: true, includeConfidence: true })),
  );
};

/** Relation F1 of an encoder trainer's model on the held-out rows. */
function relationF1(trainer: EncoderTrainer): number {
  const model = trainer.model().merged();
  return relationPRF(
    heldout.map((r) => r.relations as Relation[]),
    heldout.map((r) => model.extractRelations(r.text)),
  ).f1;
}

const options = (mode: 'full' | 'lora', epochs: number): EncoderTrainOptions => ({
  mode,
  labels: ['city', 'organization', 'person'],
  relationLabels: RELATIONS,
  epochs,
  learningRate: hp.learningRate,
  batchSize: hp.batchSize,
  seed: hp.seed,
  loraRank: 8,
  loraAlpha: 16,
});

describe('the relation head', () => {
  const base = loadEncoderBase();
  const untrained = relationF1(new EncoderTrainer(train, base.config, loadGlove(), base.weights, options('full', 1)));
  const checkpoints: Checkpoint[] = [];
  let full: Awaited<ReturnType<typeof trainModel>>;
  const losses = new Map<number, number>();

  beforeAll(async () => {
    full = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train,
      heldout,
      hyperparameters: hp,
      onCheckpoint: async (c) => void checkpoints.push(c),
      onProgress: (p: ProgressEvent) => void losses.set(p.epoch, p.loss),
    });
  });

  it('when trained on templated relations, then loss falls and held-out relation F1 on unseen names is well above the untrained head', () => {
    const byEpoch = [...losses.values()];
    expect(byEpoch[byEpoch.length - 1]!).toBeLessThan(byEpoch[0]! * 0.5);
    const f1 = full.metrics.per_label;
    const micro = relationPRF(
      heldout.map((r) => r.relations as Relation[]),
      heldout.map((r) => {
        const out = loadModel(full.bundle).extract(r.text, schema, { includeSpans: true })
          .relation_extraction as Record<
          string,
          { head: { start: number; end: number }; tail: { start: number; end: number } }[]
        >;
        const label = (s: { start: number; end: number }) =>
          r.entities.find((e) => e.start === s.start && e.end === s.end)?.label ?? '?';
        return Object.entries(out).flatMap(([rel, items]) =>
          items.map((x) => ({
            label: rel,
            head: { ...x.head, label: label(x.head) },
            tail: { ...x.tail, label: label(x.tail) },
          })),
        );
      }),
    ).f1;
    process.stdout.write(`relation F1 untrained ${untrained.toFixed(3)}, full ${micro.toFixed(3)}\n`);
    expect(untrained).toBeLessThan(0.4);
    expect(micro).toBeGreaterThan(0.8);
    expect(micro).toBeGreaterThan(untrained + 0.4);
    for (const r of RELATIONS) expect(f1[`relation/${r}`]!.f1).toBeGreaterThan(0.6);
    // Relation F1 is the headline; the arguments' (entities') span F1 is reported apart.
    expect(full.metrics.headline).toBe('relation_micro_f1');
    expect(full.metrics.scores!.relation_micro_f1!.f1).toBe(full.metrics.f1);
    const model = loadModel(full.bundle);
    const entities = spanPRF(
      heldout.map((r) => r.entities),
      heldout.map((r) =>
        Object.entries(
          model.extract(r.text, { entities: schema.entities }, { includeSpans: true }).entities as Record<
            string,
            Span[]
          >,
        ).flatMap(([label, items]) => items.map((x) => ({ start: x.start, end: x.end, label }))),
      ),
    );
    expect(full.metrics.scores!.entity_span_micro_f1!.f1).toBe(Number(entities.f1.toFixed(4)));
    expect(full.manifest.schema.relations).toEqual(RELATIONS);
  });

  it('when a schema mixes trained and untrained relations, then the trained ones come from the encoder in GLiNER2 shape and the others from zero-shot', () => {
    const model = loadModel(full.bundle);
    const text = 'Greta Holm works for Soylent Corp .';
    const out = model.extract(text, { entities: ['person', 'organization'], relations: ['works_for', 'founded'] });
    const zeroShot = extractBaseModel.extract(text, { relations: ['founded'] }).relation_extraction as Record<
      string,
      unknown
    >;
    expect(out.relation_extraction).toEqual({ works_for: [['Greta Holm', 'Soylent Corp']], founded: zeroShot.founded });
    // No schema: the trained one, relations included.
    expect(Object.keys(model.extract('Greta Holm works for Soylent Corp .', {}))).toEqual([
      'entities',
      'relation_extraction',
    ]);
  });

  it('when resumed from a weights/<step> checkpoint, then it ends exactly like the uninterrupted run', async () => {
    expect(checkpoints.filter((c) => c.type === 'training')).toHaveLength(hp.nrEpochs);
    const resumed = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train,
      heldout,
      hyperparameters: hp,
      resumeFrom: checkpoints[2]!.bytes,
    });
    expect(resumed.metrics).toEqual(full.metrics);
    expect(predictions(resumed.bundle)).toEqual(predictions(full.bundle));
  });

  it('when trained as LoRA, then it learns the relations and its merged adapter predicts the same as the unmerged one', async () => {
    const lora = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'lora',
      train,
      heldout,
      hyperparameters: hp,
    });
    process.stdout.write(
      `relation F1 lora ${JSON.stringify(Object.fromEntries(RELATIONS.map((r) => [r, lora.metrics.per_label[`relation/${r}`]!.f1])))}\n`,
    );
    for (const r of RELATIONS) expect(lora.metrics.per_label[`relation/${r}`]!.f1).toBeGreaterThan(0.6);
    expect(predictions(mergeAdapter(lora.bundle))).toEqual(predictions(lora.bundle));

    // The encoder itself: the adapter applied at run time and folded into the weights agree.
    const trainer = new EncoderTrainer(train.slice(0, 48), base.config, loadGlove(), base.weights, options('lora', 1));
    trainer.runEpoch();
    const unmerged = trainer.model();
    const merged = unmerged.merged();
    for (const r of heldout.slice(0, 12)) {
      const a = unmerged.extractRelations(r.text, RELATIONS, unmerged.trainedLabels, 0);
      const b = merged.extractRelations(r.text, RELATIONS, merged.trainedLabels, 0);
      expect(b.map((x) => [x.label, x.head.start, x.tail.start])).toEqual(
        a.map((x) => [x.label, x.head.start, x.tail.start]),
      );
      b.forEach((x, i) => expect(x.confidence).toBeCloseTo(a[i]!.confidence, 4));
    }
  });
});
