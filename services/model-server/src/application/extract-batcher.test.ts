import { extractBaseModel, type ExtractionModel } from '@whetstone/ml';
import { ExtractBatcher } from './extract-batcher';
import { ExtractionModels } from './extraction-models';

const logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => logger } as never;
const ref = { modelId: 'whetstone-extract-base', bucket: '', key: '' };
const schema = JSON.stringify({ entities: ['person', 'city'] });

/** The zero-shot base, counting how many batches (and texts per batch) reach the model. */
function counting() {
  const batches: number[] = [];
  const model: ExtractionModel = {
    ...extractBaseModel,
    extractMany(texts, s, o) {
      batches.push(texts.length);
      return extractBaseModel.extractMany(texts, s, o);
    },
  };
  const models = new ExtractionModels({
    bundles: { read: async () => new Uint8Array() },
    loader: { builtin: () => model, fromBundle: () => model, decoder: () => undefined as never },
    logger,
    budgetBytes: 1 << 20,
  });
  models.load(ref);
  return { batches, models };
}

describe('ExtractBatcher', () => {
  it('when calls for one model and schema arrive together, then they run as one batch and each gets its own results', async () => {
    const { batches, models } = counting();
    const batcher = new ExtractBatcher(models, { windowMs: 1, maxTexts: 256 });
    const texts = [['Ada Lovelace lived in London.'], ['Grace Hopper visited Paris.', 'Alan Turing.'], ['Nothing.']];
    const outs = await Promise.all(texts.map((t) => batcher.extract(ref, t, schema, {})));
    expect(batches).toEqual([4]);
    outs.forEach((out, i) =>
      expect(out.results).toEqual(texts[i]!.map((t) => extractBaseModel.extract(t, JSON.parse(schema) as never))),
    );
    expect(outs.map((o) => o.inputTokens)).toEqual([6, 8, 2]);
  });

  it('when a call is alone, then it runs at the next turn of the event loop without waiting for the window', async () => {
    const { batches, models } = counting();
    const batcher = new ExtractBatcher(models, { windowMs: 50, maxTexts: 256 });
    const done = batcher.extract(ref, ['Ada Lovelace.'], schema, {});
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([1]);
    await done;
  });

  it('when schemas or options differ, then the calls run in separate batches', async () => {
    const { batches, models } = counting();
    const batcher = new ExtractBatcher(models, { windowMs: 1, maxTexts: 256 });
    await Promise.all([
      batcher.extract(ref, ['a'], schema, {}),
      batcher.extract(ref, ['b'], JSON.stringify({ entities: ['person'] }), {}),
      batcher.extract(ref, ['c'], schema, { includeSpans: true }),
    ]);
    expect(batches).toEqual([1, 1, 1]);
  });

  it('when the schema is not JSON or not a valid schema, then every call of the batch gets the 422-kind error', async () => {
    const { models } = counting();
    const batcher = new ExtractBatcher(models, { windowMs: 1, maxTexts: 256 });
    await expect(batcher.extract(ref, ['a'], '{nope', {})).rejects.toMatchObject({ kind: 'InvalidArgument' });
    const bad = JSON.stringify({ entities: 'person' });
    const both = [batcher.extract(ref, ['a'], bad, {}), batcher.extract(ref, ['b'], bad, {})];
    for (const p of both) await expect(p).rejects.toMatchObject({ kind: 'InvalidArgument' });
  });
});
