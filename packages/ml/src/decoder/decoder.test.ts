import { AppError } from '@whetstone/errors';
import type { Checkpoint, ProgressEvent } from '../pipeline/types';
import { Rng } from '../nn';
import { loadDecoderBase } from './base';
import { type DecoderTrainResult, evaluateDecoderBundle, trainDecoderLora } from './lora';
import { DecoderState, forward, LINEAR_MODULES } from './model';
import { loadDecoder, sampleToken } from './serve';
import { encodeChat, encodePrompt, type ChatMessage } from './tokenizer';

const NAMES = [
  'Ada',
  'Bob',
  'Cleo',
  'Dan',
  'Eve',
  'Finn',
  'Gus',
  'Hal',
  'Ivy',
  'Jo',
  'Kim',
  'Lou',
  'Max',
  'Ned',
  'Oz',
  'Pat',
];
const row = (name: string) => ({
  messages: [
    { role: 'user' as const, content: `hi, I am ${name}` },
    { role: 'assistant' as const, content: `Hello ${name}! How can I help?` },
  ],
});
const train = NAMES.slice(0, 12).map(row);
const heldout = NAMES.slice(12).map(row);
const hyperparameters = { nrEpochs: 4, learningRate: 1e-2, batchSize: 4, loraRank: 4, seed: 3 };

async function collect(stream: AsyncIterable<{ text: string }>): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.text;
  return out;
}

let trained: DecoderTrainResult;
const progress: ProgressEvent[] = [];
beforeAll(async () => {
  trained = await trainDecoderLora({ train, heldout, hyperparameters, onProgress: (e) => progress.push(e) });
}, 120_000);

describe('encodeChat', () => {
  it('when an assistant message has weight 0, then its tokens are not trained on and a weight-1 reply still is', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'no', weight: 0 },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'yes', weight: 1 },
    ];
    const { tokens, trainable } = encodeChat(messages);
    const unweighted = encodeChat(messages.map(({ role, content }) => ({ role, content })));
    expect(tokens).toEqual(unweighted.tokens);
    // 'no' and its <|end|> (3 tokens) are left out; 'yes' and its <|end|> (4) are in.
    expect(trainable.filter(Boolean)).toHaveLength(4);
    expect(unweighted.trainable.filter(Boolean)).toHaveLength(7);
  });
});

describe('whetstone-decoder-base LoRA', () => {
  it('when fine-tuned on a small chat set, then its held-out loss is below the base model’s', () => {
    expect(trained.metrics.loss).toBeLessThan(trained.metrics.base_loss - 0.3);
    expect(trained.metrics.perplexity).toBeCloseTo(Math.exp(trained.metrics.loss), 6);
    expect(trained.manifest).toMatchObject({
      baseModel: 'whetstone-decoder-base',
      task: 'decoder',
      trainingType: 'lora',
      lora: { rank: 4, targets: [...LINEAR_MODULES] },
    });
    expect(trained.manifest.lora.trainedParameters / trained.manifest.lora.baseParameters).toBeLessThan(0.15);
  });

  it('when it trains, then each step reports its token accuracy and each epoch end the held-out loss, the last one the final metrics', () => {
    expect(progress.every((e) => e.tokenAccuracy! >= 0 && e.tokenAccuracy! <= 1)).toBe(true);
    const ends = progress.filter((e) => e.validation);
    const stepsPerEpoch = progress[0]!.totalSteps / hyperparameters.nrEpochs;
    expect(ends.map((e) => e.step)).toEqual([1, 2, 3, 4].map((k) => k * stepsPerEpoch));
    const last = ends.at(-1)!.validation!;
    expect(last.loss).toBeCloseTo(trained.metrics.loss, 5);
    expect(last.tokenAccuracy).toBeCloseTo(trained.metrics.token_accuracy, 5);
    expect(ends[0]!.validation!.loss).toBeGreaterThan(last.loss);
    expect(trained.metrics.token_accuracy).toBeGreaterThan(trained.metrics.base_token_accuracy);
    // Every row fits one 64-token window: its tokens but the last are read, once per epoch.
    const read = train.reduce((n, r) => n + encodeChat(r.messages).tokens.length - 1, 0);
    expect(trained.metrics.trained_tokens).toBe(read * hyperparameters.nrEpochs);
    expect(evaluateDecoderBundle(trained.bundle, heldout).token_accuracy).toBeCloseTo(
      trained.metrics.token_accuracy,
      5,
    );
  });

  it('when the adapter bundle is loaded, then it holds only the LoRA tensors and serving perplexity matches training metrics', () => {
    const decoder = loadDecoder(trained.bundle);
    expect(Object.keys(decoder.adapter!.tensors).every((k) => /\.(A|B)$/.test(k))).toBe(true);
    expect(trained.bundle.length).toBeLessThan(200_000);
    expect(decoder.perplexity(heldout).loss).toBeCloseTo(trained.metrics.loss, 4);
    expect(loadDecoder().perplexity(heldout).loss).toBeCloseTo(trained.metrics.base_loss, 4);
  });

  it('when the adapter is merged, then the logits equal the unmerged LoRA forward', () => {
    const { config, weights } = loadDecoderBase();
    const decoder = loadDecoder(trained.bundle);
    const ids = Int32Array.from(encodePrompt([{ role: 'user', content: 'hi, I am Pat' }]));
    const unmerged = forward(config, weights, ids, 1, ids.length, decoder.adapter!).data.slice(-config.vocab);
    const state = new DecoderState(config, decoder.weights);
    let merged: Float32Array = new Float32Array(0);
    for (const t of ids) merged = state.step(t);
    const maxDiff = Math.max(...Array.from(merged, (v, i) => Math.abs(v - unmerged[i]!)));
    expect(maxDiff).toBeLessThan(1e-4);
    expect(
      Math.max(
        ...Array.from(unmerged, (v, i) =>
          Math.abs(v - forward(config, weights, ids, 1, ids.length).data[(ids.length - 1) * config.vocab + i]!),
        ),
      ),
    ).toBeGreaterThan(1e-3);
  });

  it('when the fine-tuned decoder answers a held-out prompt greedily, then the reply moves towards the trained one and differs from the base', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'hi, I am Oz' }];
    const reply = await collect(loadDecoder(trained.bundle).generate(messages, { temperature: 0, max_tokens: 40 }));
    const baseReply = await collect(loadDecoder().generate(messages, { temperature: 0, max_tokens: 40 }));
    // A few seconds of LoRA on a 138k-parameter byte model: fragments of "Hello", not the exact sentence.
    expect(reply.toLowerCase()).toContain('hel');
    expect(reply).not.toBe(baseReply);
  });

  it('when max_tokens is set, then no more bytes than that are generated and the finish reason says length', async () => {
    const stream = loadDecoder().generate([{ role: 'user', content: 'tell me' }], {
      temperature: 1,
      max_tokens: 7,
      seed: 5,
    });
    const text = await collect(stream);
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(7);
    if (stream.finishReason() === 'length') expect(new TextEncoder().encode(text).length).toBeGreaterThan(0);
  });

  it('when a stop sequence appears, then generation ends before it and does not return it', async () => {
    const decoder = loadDecoder(trained.bundle);
    const messages: ChatMessage[] = [{ role: 'user', content: 'hi, I am Ned' }];
    const full = await collect(decoder.generate(messages, { temperature: 0, max_tokens: 30 }));
    expect(full.length).toBeGreaterThan(6);
    const stop = full.slice(4, 6);
    const stream = decoder.generate(messages, { temperature: 0, max_tokens: 30, stop: [stop] });
    const cut = await collect(stream);
    expect(cut).toBe(full.slice(0, full.indexOf(stop)));
    expect(stream.finishReason()).toBe('stop');
    expect(stream.stopSequence()).toBe(stop);
    const plain = decoder.generate(messages, { temperature: 0, max_tokens: 30 });
    await collect(plain);
    expect(plain.stopSequence()).toBeNull();
  });

  it('when sampling with the same seed, then the text is the same; top_p near 0 is greedy', async () => {
    const decoder = loadDecoder();
    const messages: ChatMessage[] = [{ role: 'user', content: 'a word' }];
    const a = await collect(decoder.generate(messages, { temperature: 1.2, max_tokens: 20, seed: 9 }));
    expect(await collect(decoder.generate(messages, { temperature: 1.2, max_tokens: 20, seed: 9 }))).toBe(a);
    const logits = Float32Array.of(0.1, 2, 1.9, -1);
    expect(sampleToken(logits, 1, 1e-6, new Rng(1))).toBe(1);
    expect(sampleToken(logits, 0, 1, new Rng(1))).toBe(1);
  });

  it('when training resumes from a weights/<step> checkpoint, then the adapter equals the uninterrupted run bit for bit', async () => {
    const small = { train: train.slice(0, 8), heldout, hyperparameters: { ...hyperparameters, nrEpochs: 2 } };
    const checkpoints: Checkpoint[] = [];
    const full = await trainDecoderLora({
      ...small,
      checkpointEvery: 1,
      onCheckpoint: async (c) => void checkpoints.push(c),
    });
    expect(checkpoints.map((c) => c.id)).toEqual([
      'weights/1',
      'sampler_weights/1',
      'weights/2',
      'sampler_weights/2',
      'weights/3',
      'sampler_weights/3',
      'weights/4',
      'sampler_weights/4',
    ]);
    const resumed = await trainDecoderLora({
      ...small,
      resumeFrom: checkpoints.find((c) => c.id === 'weights/3')!.bytes,
    });
    expect(Buffer.from(resumed.bundle).equals(Buffer.from(full.bundle))).toBe(true);

    // Another run (another seed: another job) continuing from the final state trains all its epochs from that adapter.
    const logs: string[] = [];
    const steps: number[] = [];
    await trainDecoderLora({
      ...small,
      hyperparameters: { ...small.hyperparameters, seed: 99 },
      resumeFrom: checkpoints.find((c) => c.id === 'weights/4')!.bytes,
      onLog: (_, m) => void logs.push(m),
      onProgress: (p) => void steps.push(p.step),
    });
    expect(logs.some((m) => m.includes('continuing from another run'))).toBe(true);
    expect(steps).toEqual([1, 2, 3, 4]);
    expect(evaluateDecoderBundle(full.bundle, heldout)).toEqual({ ...full.metrics, trained_tokens: undefined });
  }, 120_000);

  it('when rows are not chat examples, then training is rejected with row-level errors', async () => {
    const err = await trainDecoderLora({
      train: [{ text: 'x' }, { messages: [{ role: 'user', content: 'only a question' }] }],
      heldout,
      hyperparameters,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).fieldErrors.map((f) => f.field)).toEqual(['train.0.messages', 'train.1.messages']);
  });

  it('when the signal is aborted, then training stops with a Cancelled error', async () => {
    const controller = new AbortController();
    const err = await trainDecoderLora({
      train,
      heldout,
      hyperparameters,
      signal: controller.signal,
      onProgress: () => controller.abort(),
    }).catch((e: unknown) => e);
    expect((err as AppError).kind).toBe('Cancelled');
  });
});
