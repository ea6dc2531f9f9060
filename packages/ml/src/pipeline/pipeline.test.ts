import { readFileSync } from 'node:fs';
import { datasetFile, fixtureDataset } from '@whetstone/testing';
import { spanPRF } from '../eval/metrics';
import { extractBaseModel } from '../zeroshot/base-model';
import { zeroShotSpans } from '../zeroshot/entities';
import { loadModel, mergeAdapter, readManifest, trainModel, type Checkpoint, type ProgressEvent } from './index';

// Each test trains real models (the resume test two of them, with checkpoints of every tensor's Adam state) on
// 2 shared cores beside the rest of the suite: the timeout guards against a hang, it does not time the training.
jest.setTimeout(240_000);

const read = (file: string, n: number) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(0, n)
    .map(
      (l) =>
        JSON.parse(l) as {
          text: string;
          entities?: { start: number; end: number; label: string }[];
          label?: string;
          task?: string;
        },
    );

const train = read(datasetFile('wikigold/train.jsonl'), 240);
const heldout = read(datasetFile('wikigold/test.jsonl'), 80);
const hp = { nrEpochs: 3, learningRate: 0.002, seed: 3 };
const predictions = (bundle: Uint8Array) => {
  const model = loadModel(bundle);
  return heldout.map((r) =>
    JSON.stringify(
      model.extract(r.text, { entities: ['person', 'location', 'organization', 'misc'] }, { includeSpans: true }),
    ),
  );
};

describe('the training pipeline', () => {
  it('learns entities on small data: loss falls and held-out F1 beats the untrained zero-shot base', async () => {
    const lastOfEpoch = new Map<number, ProgressEvent>();
    const result = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train,
      heldout,
      hyperparameters: hp,
      onProgress: (p) => void lastOfEpoch.set(p.epoch, p),
    });
    const losses = [...lastOfEpoch.values()].map((p) => p.loss);
    expect(losses.length).toBeGreaterThanOrEqual(3);
    expect(losses[losses.length - 1]!).toBeLessThan(losses[0]!);
    const base = spanPRF(
      heldout.map((r) => r.entities ?? []),
      heldout.map((r) => zeroShotSpans(r.text, ['person', 'location', 'organization', 'misc'])),
    );
    expect(result.metrics.f1).toBeGreaterThan(base.f1);
    expect(result.manifest).toMatchObject({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      schema: { entities: ['location', 'misc', 'organization', 'person'] },
    });
    expect(readManifest(result.bundle).metrics?.f1).toBe(result.metrics.f1);
    // The trained model predicts differently from the base on held-out text.
    const trained = predictions(result.bundle);
    const untrained = heldout.map((r) =>
      JSON.stringify(
        extractBaseModel.extract(
          r.text,
          { entities: ['person', 'location', 'organization', 'misc'] },
          { includeSpans: true },
        ),
      ),
    );
    expect(trained).not.toEqual(untrained);
  });

  it('resumes from a weights/<step> checkpoint to exactly the uninterrupted result', async () => {
    const checkpoints: Checkpoint[] = [];
    const whole = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train,
      heldout,
      hyperparameters: hp,
      onCheckpoint: async (c) => void checkpoints.push(c),
    });
    expect(checkpoints.map((c) => c.id)).toEqual([
      'weights/240',
      'sampler_weights/240',
      'weights/480',
      'sampler_weights/480',
      'weights/720',
      'sampler_weights/720',
    ]);
    const resumed = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train,
      heldout,
      hyperparameters: hp,
      resumeFrom: checkpoints[2]!.bytes,
    });
    expect(resumed.metrics).toEqual(whole.metrics);
    expect(predictions(resumed.bundle)).toEqual(predictions(whole.bundle));
    // A sampler checkpoint is itself servable.
    expect(() => loadModel(checkpoints[1]!.bytes)).not.toThrow();
  });

  it('trains a LoRA adapter under 15% of the parameters, and merging it gives identical outputs', async () => {
    const logs: string[] = [];
    const lora = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'lora',
      train,
      heldout,
      hyperparameters: hp,
      onLog: (_l, m) => logs.push(m),
    });
    const share = Number(/\(([\d.]+)% of full\)/.exec(logs[0]!)![1]);
    expect(share).toBeLessThanOrEqual(15);
    expect(lora.manifest.trainingType).toBe('lora');
    const merged = mergeAdapter(lora.bundle);
    expect(merged.byteLength).toBeGreaterThan(lora.bundle.byteLength);
    expect(predictions(merged)).toEqual(predictions(lora.bundle));
  });

  it('learns classification tasks, and falls back to zero-shot for labels it was not trained on', async () => {
    const rows = read(fixtureDataset('banking77/train-3-intents.jsonl'), 1000);
    const result = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train: rows.filter((_, i) => i % 5 !== 0),
      heldout: rows.filter((_, i) => i % 5 === 0),
      hyperparameters: hp,
    });
    expect(result.metrics.f1).toBeGreaterThan(0.8);
    expect(result.manifest.architecture?.classifications).toMatch(/pooled head/);
    const model = loadModel(result.bundle);
    expect(
      model.extract('I lost my card yesterday', {
        classifications: [{ task: 'banking77-intent', labels: ['card_arrival', 'lost_or_stolen_card'] }],
      }),
    ).toEqual({ 'banking77-intent': 'lost_or_stolen_card' });
    // No schema: the trained one is used. Unknown labels: zero-shot.
    expect(Object.keys(model.extract('What is the exchange rate?', {}))).toEqual(['banking77-intent']);
    expect(model.extract('Ada Lovelace', { entities: ['person'] })).toEqual({ entities: { person: ['Ada Lovelace'] } });
  });

  it('when the caller asks for rejection, then a threshold fitted on held-out rows is stored and serving applies it', async () => {
    const rows = read(fixtureDataset('banking77/train-3-intents.jsonl'), 1000);
    const intents = [...new Set(rows.map((r) => r.label))].sort();
    const unknown = intents[2]!;
    const known = rows.filter((r) => r.label !== unknown);
    const heldoutRows = [
      ...known.filter((_, i) => i % 4 === 0),
      ...rows.filter((r) => r.label === unknown).map((r) => ({ ...r, label: 'oos' })),
    ];
    const result = await trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train: known.filter((_, i) => i % 4 !== 0),
      heldout: heldoutRows,
      hyperparameters: { ...hp, nrEpochs: 2 },
      outOfScope: { label: 'oos' },
    });
    const cal = result.metrics.calibration?.['banking77-intent'];
    expect(cal).toEqual(
      expect.objectContaining({
        out_of_scope_label: 'oos',
        reject_below: expect.any(Number),
        temperature: expect.any(Number),
      }),
    );
    expect(cal!.heldout_out_of_scope_rows).toBe(rows.filter((r) => r.label === unknown).length);
    expect(cal!.heldout_in_scope_accuracy!).toBeGreaterThanOrEqual(
      cal!.heldout_in_scope_accuracy_without_rejection! - 0.015,
    );
    expect(readManifest(result.bundle).calibration?.['banking77-intent']?.reject_below).toBe(cal!.reject_below);
    // Serving answers what the threshold was chosen on: the same recall and accuracy on the same rows.
    const model = loadModel(result.bundle);
    const answers = heldoutRows.map((r) => (model.extract(r.text, {}) as Record<string, string>)['banking77-intent']);
    const share = (
      pick: (r: (typeof heldoutRows)[number], a: string) => boolean,
      of: (r: (typeof heldoutRows)[number]) => boolean,
    ) =>
      Number(
        (heldoutRows.filter((r, i) => of(r) && pick(r, answers[i]!)).length / heldoutRows.filter(of).length).toFixed(4),
      );
    expect(
      share(
        (_, a) => a === 'oos',
        (r) => r.label === 'oos',
      ),
    ).toBe(cal!.heldout_out_of_scope_recall);
    expect(
      share(
        (r, a) => a === r.label,
        (r) => r.label !== 'oos',
      ),
    ).toBe(cal!.heldout_in_scope_accuracy);
  });

  it('stops within one example when cancelled', async () => {
    const controller = new AbortController();
    const run = trainModel({
      baseModel: 'whetstone-extract-base',
      trainingType: 'full',
      train,
      heldout,
      hyperparameters: { ...hp, nrEpochs: 50 },
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    await expect(run).rejects.toThrow('training cancelled');
  });
});
