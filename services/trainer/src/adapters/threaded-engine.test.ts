import { readFileSync } from 'node:fs';
import { AppError } from '@whetstone/errors';
import { datasetFile } from '@whetstone/testing';
import type { Progress } from '../domain/progress';
import type { TrainHooks } from '../application/ports';
import { ThreadedEngine } from './threaded-engine';

const rows = (file: string, n: number) =>
  readFileSync(datasetFile(file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(0, n)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const input = (train: Record<string, unknown>[], nrEpochs = 2) => ({
  baseModel: 'whetstone-extract-base',
  trainingType: 'lora' as const,
  train,
  heldout: rows('wikigold/dev.jsonl', 20),
  hyperparameters: { nrEpochs, learningRate: 0.002, seed: 13 },
});

function recorder(signal = new AbortController().signal) {
  const seen = { logs: [] as string[], progress: [] as Progress[], checkpoints: [] as string[] };
  const hooks: TrainHooks = {
    signal,
    onLog: (_level, message) => seen.logs.push(message),
    onProgress: (p) => seen.progress.push(p),
    onCheckpoint: async (c) => {
      await new Promise((r) => setTimeout(r, 5));
      seen.checkpoints.push(`${c.id}:${c.bytes.length > 0}`);
    },
  };
  return { seen, hooks };
}

describe('ThreadedEngine: packages/ml on its own thread', () => {
  const engine = new ThreadedEngine();
  afterAll(() => engine.close());

  it('trains through the thread: logs, progress, checkpoints stored before training goes on, a bundle and metrics', async () => {
    const { seen, hooks } = recorder();
    const result = await engine.train(input(rows('wikigold/train.jsonl', 120)), hooks);
    expect(result.bundle.length).toBeGreaterThan(1000);
    expect(result.metrics).toEqual(expect.objectContaining({ f1: expect.any(Number) }));
    expect(seen.checkpoints).toEqual(
      expect.arrayContaining([expect.stringMatching(/^weights\/\d+:true$/), expect.stringMatching(/^sampler_weights/)]),
    );
    expect(seen.checkpoints).toHaveLength(4);
    expect(seen.progress.at(-1)).toMatchObject({ step: seen.progress.at(-1)!.totalSteps });
    expect(seen.logs.some((l) => /held-out: micro span F1/.test(l))).toBe(true);
    // After the first of two epochs, progress carries that epoch's held-out figures.
    expect(seen.progress.find((p) => p.epoch === 2)?.metrics).toEqual(
      expect.objectContaining({ f1: expect.any(Number), headline: 'entity_span_micro_f1' }),
    );

    const scored = await engine.evaluate(result.bundle, rows('wikigold/dev.jsonl', 20), 'whetstone-extract-base');
    expect(scored).toEqual(expect.objectContaining({ f1: expect.any(Number), precision: expect.any(Number) }));
  }, 120_000);

  it('keeps the engine’s typed errors: rows it cannot train on fail as a non-retryable AppError', async () => {
    const { hooks } = recorder();
    const failure = await engine.train(input([{ text: 'no labels here' }]), hooks).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AppError);
    expect(failure).toMatchObject({ retryable: false });
  }, 60_000);

  it('stops when its signal is aborted, and the same thread trains again afterwards', async () => {
    const stop = new AbortController();
    const { seen, hooks } = recorder(stop.signal);
    const running = engine.train(input(rows('wikigold/train.jsonl', 400), 30), {
      ...hooks,
      onProgress: (p) => {
        seen.progress.push(p);
        stop.abort();
      },
    });
    await expect(running).rejects.toThrow(/cancelled/);
    const again = await engine.train(input(rows('wikigold/train.jsonl', 60), 1), recorder().hooks);
    expect(again.bundle.length).toBeGreaterThan(0);
  }, 120_000);
});
