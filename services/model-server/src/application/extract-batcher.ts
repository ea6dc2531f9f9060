import { extractionTokens, type ExtractionResult, type PredictOptions } from '@whetstone/ml';
import { parseSchema, runExtraction, type ExtractOutput } from './extract';
import type { ExtractionModels } from './extraction-models';
import type { ModelRef } from './ports';

export interface BatchingOptions {
  /**
   * How long a batch waits for more calls once traffic is concurrent (the previous batch of the model held more
   * than one call). A lone call is never held back: it runs at the next turn of the event loop.
   */
  windowMs: number;
  /** A batch closes once it holds this many texts (one call with more still runs, alone). */
  maxTexts: number;
}

interface Call {
  texts: string[];
  resolve: (out: ExtractOutput) => void;
  reject: (err: unknown) => void;
}

/** Calls waiting for one model with one schema and the same options: they can share a forward pass. */
interface Queue {
  key: string;
  ref: ModelRef;
  schemaJson: string;
  options: PredictOptions;
  calls: Call[];
  texts: number;
  /** Cancels the scheduled flush; unset when none is scheduled. */
  cancel: (() => void) | undefined;
}

/** Models whose concurrency we remember (calls in their last batch); beyond this the memory is reset. */
const MAX_TRACKED_MODELS = 10_000;

/**
 * Micro-batching of extraction calls. Calls for the same model, schema and
 * options that arrive together (in the same turn of the event loop, while a
 * batch runs, or within the window once traffic is concurrent) run as one
 * batch through the model's `extractMany`, which encodes their texts in one
 * forward pass: per text, fewer and larger matmuls. Each call still gets
 * exactly its own results, the same as running it alone.
 */
export class ExtractBatcher {
  private readonly queues = new Map<string, Queue>();
  private readonly lastBatchCalls = new Map<string, number>();

  constructor(
    private readonly models: ExtractionModels,
    private readonly options: BatchingOptions,
  ) {}

  /** Resolves with this call's results once its batch ran; MODEL_WARMING (and other load states) reject at once. */
  extract(ref: ModelRef, texts: string[], schemaJson: string, options: PredictOptions): Promise<ExtractOutput> {
    this.models.ready(ref);
    const key = `${ref.modelId}\n${options.threshold ?? 0}|${options.includeConfidence ? 1 : 0}|${options.includeSpans ? 1 : 0}\n${schemaJson}`;
    let queue = this.queues.get(key);
    if (!queue) {
      queue = { key, ref, schemaJson, options, calls: [], texts: 0, cancel: undefined };
      this.queues.set(key, queue);
    }
    const q = queue;
    return new Promise<ExtractOutput>((resolve, reject) => {
      q.calls.push({ texts, resolve, reject });
      q.texts += texts.length;
      if (q.texts >= this.options.maxTexts) this.flushSoon(q, 0);
      else if (!q.cancel)
        this.flushSoon(q, (this.lastBatchCalls.get(ref.modelId) ?? 0) > 1 ? this.options.windowMs : 0);
    });
  }

  private flushSoon(q: Queue, waitMs: number): void {
    q.cancel?.();
    if (waitMs > 0) {
      const timer = setTimeout(() => this.flush(q), waitMs);
      q.cancel = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(() => this.flush(q));
      q.cancel = () => clearImmediate(immediate);
    }
  }

  private flush(q: Queue): void {
    q.cancel = undefined;
    this.queues.delete(q.key);
    const calls = q.calls;
    if (this.lastBatchCalls.size > MAX_TRACKED_MODELS) this.lastBatchCalls.clear();
    this.lastBatchCalls.set(q.ref.modelId, calls.length);
    let results: ExtractionResult[];
    try {
      const model = this.models.ready(q.ref);
      results = runExtraction(
        model,
        calls.flatMap((c) => c.texts),
        parseSchema(q.schemaJson),
        q.options,
      );
    } catch (err) {
      // Every call of the batch shares the model and the schema, so they share the failure too.
      for (const c of calls) c.reject(err);
      return;
    }
    let from = 0;
    for (const c of calls) {
      const own = results.slice(from, from + c.texts.length);
      from += c.texts.length;
      c.resolve({ results: own, inputTokens: c.texts.reduce((n, t) => n + extractionTokens(t), 0) });
    }
  }
}
