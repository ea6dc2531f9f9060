import type { BertCheckpoint } from '../checkpoints/load';
import { spanPRF, type Report, type Span } from '../eval/metrics';
import { bceWithLogits } from '../heads/losses';
import {
  decodeSpans,
  encodeText,
  headParameters,
  initSpanHead,
  labelVectors,
  spanLogits,
  type EncodedText,
  type SpanHeadConfig,
  type SpanHeadWeights,
} from '../heads/span-entities';
import { mergeLora, trainableCopy, trainableParameters, withLora } from '../models/bert/adapters';
import type { BertModel } from '../models/bert/modeling-bert';
import { Adam, clipGradNorm } from '../nn/adam';
import { Rng } from '../nn/rng';
import { trainingStep, type Tensor } from '../nn/tensor';
import type { WordPieceTokenizer } from '../tokenizers/tokenizer';

export interface EntityRow {
  text: string;
  entities?: Array<{ start: number; end: number; label: string }>;
}

export interface BertEntityTrainOptions {
  mode: 'full' | 'lora';
  epochs: number;
  /** AdamW's peak rate for the encoder (full) or the LoRA factors (lora). */
  learningRate: number;
  /** The head's peak rate. */
  headLearningRate: number;
  batchSize: number;
  seed: number;
  loraRank: number;
  loraAlpha: number;
  head: SpanHeadConfig;
  threshold: number;
  /** Weight of the positive (span, label) pairs in the loss: they are a few per thousand. */
  posWeight: number;
  onProgress?: (e: { step: number; totalSteps: number; epoch: number; loss: number }) => void;
  /** Called after each epoch with the model so far (for held-out figures). */
  onEpoch?: (epoch: number, model: BertEntityModel) => void;
  shouldStop?: () => boolean;
}

export const BERT_ENTITY_DEFAULTS: Omit<BertEntityTrainOptions, 'mode' | 'seed'> = {
  epochs: 3,
  learningRate: 1e-4,
  headLearningRate: 1e-3,
  batchSize: 16,
  loraRank: 8,
  loraAlpha: 16,
  head: { hidden: 384, dim: 256, maxWidth: 8, shapeDim: 32 },
  threshold: 0.5,
  posWeight: 10,
};

/** A trained (or zero-shot) label-conditioned entity extractor on a BERT checkpoint. */
export class BertEntityModel {
  /** Label vectors by label set: serving asks for the same labels call after call. */
  private readonly labelCache = new Map<string, Tensor>();

  constructor(
    readonly bert: BertModel,
    readonly tokenizer: WordPieceTokenizer,
    readonly head: SpanHeadWeights,
    readonly config: SpanHeadConfig,
    readonly labels: string[],
    readonly threshold: number,
  ) {}

  /** Forgets cached label vectors (the weights changed). */
  weightsChanged(): void {
    this.labelCache.clear();
  }

  /** Entities of each text for the given label names (the trained labels by default). */
  predict(texts: string[], labels: string[] = this.labels, threshold = this.threshold): Span[][] {
    return this.predictAt(texts, labels, [threshold])[0]!;
  }

  /** Entities of each text at each of several thresholds, from one pass of the encoder (choosing one on dev). */
  predictAt(texts: string[], labels: string[], thresholds: number[]): Span[][][] {
    const out: Span[][][] = thresholds.map(() => texts.map(() => []));
    if (!labels.length) return out;
    const key = labels.join('\u0000');
    const lv = this.labelCache.get(key) ?? labelVectors(this.bert, this.tokenizer, this.head, labels);
    if (this.labelCache.size > 64) this.labelCache.clear();
    this.labelCache.set(key, lv);
    const batch = 16;
    for (let i = 0; i < texts.length; i += batch) {
      const encs = texts.slice(i, i + batch).map((t) => encodeText(this.tokenizer, t));
      const spans = spanLogits(this.bert, this.head, this.config, encs, lv);
      thresholds.forEach((threshold, k) => {
        for (const f of decodeSpans(spans, labels.length, threshold)) {
          const e = encs[f.text]!;
          out[k]![i + f.text]!.push({
            start: e.wordOffsets[f.start]![0],
            end: e.wordOffsets[f.end]![1],
            label: labels[f.label]!,
          });
        }
      });
    }
    return out;
  }

  /** Span F1 on rows at each threshold. */
  evaluateAt(rows: EntityRow[], thresholds: number[], labels = this.labels): Report[] {
    const gold = rows.map((r) => (r.entities ?? []).map((e) => ({ start: e.start, end: e.end, label: e.label })));
    return this.predictAt(
      rows.map((r) => r.text),
      labels,
      thresholds,
    ).map((pred) => spanPRF(gold, pred));
  }

  /** The same model answering at another threshold. */
  withThreshold(threshold: number): BertEntityModel {
    return new BertEntityModel(this.bert, this.tokenizer, this.head, this.config, this.labels, threshold);
  }

  evaluate(rows: EntityRow[], labels = this.labels): Report {
    const gold = rows.map((r) => (r.entities ?? []).map((e) => ({ start: e.start, end: e.end, label: e.label })));
    return spanPRF(
      gold,
      this.predict(
        rows.map((r) => r.text),
        labels,
      ),
    );
  }

  /** The same model with LoRA folded into the weights. */
  merged(): BertEntityModel {
    return new BertEntityModel(
      mergeLora(this.bert),
      this.tokenizer,
      this.head,
      this.config,
      this.labels,
      this.threshold,
    );
  }
}

/** Gold (start word, end word, label) triples of a row, from character offsets; unaligned spans are dropped. */
function goldSpans(enc: EncodedText, row: EntityRow, labels: string[]): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (const e of row.entities ?? []) {
    const s = enc.wordOffsets.findIndex(([a]) => a === e.start);
    const t = enc.wordOffsets.findIndex(([, b]) => b === e.end);
    const l = labels.indexOf(e.label);
    if (s >= 0 && t >= s && l >= 0) out.push([s, t, l]);
  }
  return out;
}

/** Fine-tunes the encoder (full or LoRA) and the span head on entity rows; AdamW with warmup and linear decay. */
export function trainBertEntities(
  ckpt: BertCheckpoint,
  rows: EntityRow[],
  labels: string[],
  o: BertEntityTrainOptions,
): BertEntityModel {
  const rng = new Rng(o.seed);
  const bert =
    o.mode === 'full'
      ? trainableCopy(ckpt.model)
      : withLora(ckpt.model, { r: o.loraRank, alpha: o.loraAlpha, seed: o.seed });
  const headConfig = { ...o.head, hidden: ckpt.config.hidden_size };
  const head = initSpanHead(headConfig, o.seed + 1);
  const model = new BertEntityModel(bert, ckpt.tokenizer, head, headConfig, labels, o.threshold);
  const encParams = trainableParameters(bert);
  const headParams = headParameters(head);
  const encOpt = new Adam(encParams, { learningRate: o.learningRate, weightDecay: 0.01 });
  const headOpt = new Adam(headParams, { learningRate: o.headLearningRate, weightDecay: 0.01 });
  const encoded = rows.map((r) => encodeText(ckpt.tokenizer, r.text));
  const golds = rows.map((r, i) => goldSpans(encoded[i]!, r, labels));
  const order = rows.map((_, i) => i);
  const stepsPerEpoch = Math.ceil(rows.length / o.batchSize);
  const total = stepsPerEpoch * o.epochs;
  const warm = Math.max(1, Math.round(total * 0.1));
  let step = 0;
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    // Shuffle, then batch neighbours in length so padding stays small.
    rng.shuffle(order);
    const chunks: number[][] = [];
    for (let i = 0; i < order.length; i += o.batchSize * 8) {
      const block = order.slice(i, i + o.batchSize * 8).sort((a, b) => encoded[a]!.ids.length - encoded[b]!.ids.length);
      for (let j = 0; j < block.length; j += o.batchSize) chunks.push(block.slice(j, j + o.batchSize));
    }
    rng.shuffle(chunks);
    for (const idx of chunks) {
      if (o.shouldStop?.()) return model;
      const f = step < warm ? (step + 1) / warm : Math.max(0, (total - step) / (total - warm));
      const loss = trainingStep(() => {
        const lv = labelVectors(bert, ckpt.tokenizer, head, labels, rng);
        const batch = spanLogits(
          bert,
          head,
          headConfig,
          idx.map((i) => encoded[i]!),
          lv,
          rng,
        );
        const L = labels.length;
        const targets = new Uint8Array(batch.spans.length * L);
        const index = new Map<string, number>();
        batch.spans.forEach((s, k) => index.set(`${s.text}:${s.start}:${s.end}`, k));
        idx.forEach((row, b) => {
          for (const [s, t, l] of golds[row]!) {
            const k = index.get(`${b}:${s}:${t}`);
            if (k !== undefined) targets[k * L + l] = 1;
          }
        });
        const lossT = bceWithLogits(batch.logits, targets, o.posWeight);
        lossT.backward();
        return lossT.data[0]!;
      });
      const all: Tensor[] = [...encParams, ...headParams];
      clipGradNorm(all, 1);
      const rowsTouched =
        o.mode === 'full'
          ? touchedEmbeddingRows(
              bert,
              idx.map((i) => encoded[i]!),
              labels,
              ckpt.tokenizer,
            )
          : undefined;
      encOpt.step(o.learningRate * f, rowsTouched);
      headOpt.step(o.headLearningRate * f);
      step++;
      o.onProgress?.({ step, totalSteps: total, epoch, loss });
    }
    model.weightsChanged();
    o.onEpoch?.(epoch + 1, model);
  }
  return model;
}

/** The word-embedding rows a step used (its texts' and the label names' tokens): the table is updated lazily. */
function touchedEmbeddingRows(
  bert: BertModel,
  encs: EncodedText[],
  labels: string[],
  tok: WordPieceTokenizer,
): Map<Tensor, Int32Array> {
  const ids = new Set<number>();
  for (const e of encs) for (const id of e.ids) ids.add(id);
  for (const l of labels) for (const id of tok.encode(l.replace(/[_.]/g, ' ')).ids) ids.add(id);
  return new Map([[bert.weights.wordEmbeddings, Int32Array.from(ids)]]);
}
