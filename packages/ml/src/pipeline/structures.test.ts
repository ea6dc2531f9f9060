import { extractBaseModel } from '../zeroshot/base-model';
import { loadModel, mergeAdapter, trainModel } from './index';
import type { CanonicalRow, ExtractionSchema } from './types';

// These tests train real models on 2 shared cores beside the rest of the suite: the timeout guards against a hang.
jest.setTimeout(240_000);

const PRODUCTS = [
  'Pixel 8',
  'Galaxy Tab',
  'ThinkPad X1',
  'Kindle Oasis',
  'iPad Mini',
  'Surface Pro',
  'Xperia Z',
  'Moto Edge',
  'Nokia Lumia',
  'Yoga Slim',
];
const CITIES = ['Lisbon', 'Nairobi', 'Toronto', 'Osaka', 'Berlin', 'Lima', 'Oslo', 'Cairo', 'Seoul', 'Dublin'];
const HELD_PRODUCTS = ['Zenbook Flip', 'Fire HD', 'Aspire One'];
const HELD_CITIES = ['Prague', 'Accra', 'Porto'];
const TEMPLATES: [string, 'high' | 'low'][] = [
  ['Please ship the {p} to {c} asap , it is urgent .', 'high'],
  ['Send one {p} to our office in {c} immediately .', 'high'],
  ['We need a {p} delivered to {c} today .', 'high'],
  ['Whenever convenient , send a {p} to {c} .', 'low'],
  ['No rush : a {p} for the team in {c} , sometime next month .', 'low'],
  ['Could you eventually mail the {p} to {c} ?', 'low'],
];

function rows(products: string[], cities: string[], n: number, seed: number): (CanonicalRow & { text: string })[] {
  const out: (CanonicalRow & { text: string })[] = [];
  for (let i = 0; i < n; i++) {
    const [template, urgency] = TEMPLATES[(i * 7 + seed) % TEMPLATES.length]!;
    // i + seed, not a multiple of 3: with three held-out products every one of them is asked for.
    const product = products[(i + seed) % products.length]!;
    const city = cities[(i * 5 + seed * 2) % cities.length]!;
    out.push({
      text: template.replace('{p}', product).replace('{c}', city),
      structures: { order: [{ product, city, urgency }] },
    });
  }
  return out;
}

const train = rows(PRODUCTS, CITIES, 120, 1);
const heldout = rows(HELD_PRODUCTS, HELD_CITIES, 24, 2);
const schema: ExtractionSchema = {
  structures: { order: { product: 'str', city: 'str', urgency: { choices: ['high', 'low'] } } },
};

function accuracy(model: { extract: typeof extractBaseModel.extract }): { fields: number; urgency: number } {
  let fields = 0;
  let urgency = 0;
  for (const r of heldout) {
    const gold = (r.structures as { order: Record<string, string>[] }).order[0]!;
    const got = (model.extract(r.text, schema) as { order: Record<string, unknown>[] }).order[0] ?? {};
    if (got.product === gold.product) fields++;
    if (got.city === gold.city) fields++;
    if (got.urgency === gold.urgency) urgency++;
  }
  return { fields: fields / (2 * heldout.length), urgency: urgency / heldout.length };
}

describe('trained structures', () => {
  it('learns text fields as `structure.field` spans and choice fields as classifications, on values it never saw', async () => {
    const result = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train,
      heldout,
      hyperparameters: { nrEpochs: 4, learningRate: 0.002, batchSize: 8, seed: 5 },
    });
    expect(result.manifest.schema.structures).toEqual({ order: { product: 'str', city: 'str', urgency: 'str' } });
    expect(result.manifest.schema.entities).toEqual(['order.city', 'order.product']);
    expect(result.manifest.schema.classifications).toEqual([
      { task: 'order.urgency', labels: ['high', 'low'], multi_label: false },
    ]);
    const trained = accuracy(loadModel(result.bundle));
    const base = accuracy(extractBaseModel);
    expect(trained.fields).toBeGreaterThan(0.8);
    expect(trained.fields).toBeGreaterThan(base.fields);
    expect(trained.urgency).toBeGreaterThan(0.8);
    // Without a schema, a project call gets the trained structure back.
    const model = loadModel(result.bundle);
    expect(Object.keys(model.extract('Send one Fire HD to Accra immediately .', {}))).toEqual(['order']);
  });

  it('trains structures with LoRA, and the merged adapter answers the same', async () => {
    const lora = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'lora',
      train,
      heldout,
      hyperparameters: { nrEpochs: 3, learningRate: 0.003, batchSize: 8, seed: 5 },
    });
    const outputs = (bundle: Uint8Array) =>
      heldout.map((r) => JSON.stringify(loadModel(bundle).extract(r.text, schema, { includeConfidence: true })));
    expect(outputs(mergeAdapter(lora.bundle))).toEqual(outputs(lora.bundle));
    expect(accuracy(loadModel(lora.bundle)).fields).toBeGreaterThan(accuracy(extractBaseModel).fields);
  });
});
