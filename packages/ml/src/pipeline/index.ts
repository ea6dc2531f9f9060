import { gunzipSync, gzipSync } from 'node:zlib';
import { loadGlove } from '../assets';
import { ClassifierTrainer, NgramClassifier, type ClassifierState } from '../classify/ngram-classifier';
import type { Example } from '../data';
import { classificationPRF, spanPRF, type Report } from '../eval';
import { LinearTagger, TaggerTrainer, type TaggerState } from '../extract/linear-tagger';
import { normalizeSchema } from '../schema';
import { extractWith, zeroShotLabelScores } from '../zeroshot/base-model';
import { zeroShotSpans } from '../zeroshot';
import type { CanonicalRow, Checkpoint, ExtractionModel, ExtractionSchema, Hyperparameters, Metrics, ModelManifest, TrainRequest, TrainResult, TrainingType } from './types';

export * from './types';

/**
 * Hashed-table sizes (log2 buckets). `full` trains full-size tables; `lora`
 * trains an adapter whose tables are 1/8 the size (12.5% of the parameters)
 * over the frozen zero-shot base, stored alone, and mergeable into full-size
 * tables with identical outputs (a feature's small bucket is its full bucket's
 * low bits).
 */
const BUCKETS: Record<TrainingType, number> = { full: 16, lora: 13 };
const FULL_BUCKETS = BUCKETS.full;

const BUNDLE_FORMAT = 'whetstone-bundle/1';
const STATE_FORMAT = 'whetstone-train-state/1';

interface ClassificationTaskData {
  task: string;
  multiLabel: boolean;
  examples: { text: string; labels: string[] }[];
}

/** Rows → tagger examples and per-task classification examples (list, dict and banking77 `{label, task}` forms). */
function prepare(rows: (CanonicalRow | Example)[]): { entities: Example[]; tasks: ClassificationTaskData[]; hasEntities: boolean } {
  const entities: Example[] = [];
  const tasks = new Map<string, ClassificationTaskData>();
  let hasEntities = false;
  for (const raw of rows) {
    const row = raw as Example & CanonicalRow;
    const text = row.text ?? '';
    if (!text) continue;
    if (Array.isArray(row.entities)) {
      entities.push({ text, entities: row.entities.map((e) => ({ start: e.start, end: e.end, label: e.label })) });
      if (row.entities.length) hasEntities = true;
    }
    const add = (task: string, labels: string[], multi: boolean) => {
      let t = tasks.get(task);
      if (!t) tasks.set(task, (t = { task, multiLabel: multi, examples: [] }));
      t.multiLabel ||= multi || labels.length > 1;
      t.examples.push({ text, labels });
    };
    if (typeof row.label === 'string') add(row.task ?? 'label', [row.label], false);
    if (Array.isArray(row.classifications)) for (const c of row.classifications) add(c.task, c.labels, c.multi_label === true);
    else if (row.classifications && typeof row.classifications === 'object') {
      for (const [task, v] of Object.entries(row.classifications)) add(task, Array.isArray(v) ? v : [v], Array.isArray(v));
    }
  }
  return { entities, tasks: [...tasks.values()], hasEntities };
}

const b64 = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
const f32 = (s: string) => {
  const buf = Buffer.from(s, 'base64');
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
};
const pack = (value: unknown) => new Uint8Array(gzipSync(Buffer.from(JSON.stringify(value))));
const unpack = <T>(bytes: Uint8Array): T => JSON.parse(gunzipSync(Buffer.from(bytes)).toString('utf8')) as T;

interface StateJson {
  format: typeof STATE_FORMAT;
  baseModel: string;
  trainingType: TrainingType;
  hyperparameters: Hyperparameters;
  epoch: number;
  tagger: (Omit<TaggerState, 'weights' | 'totals' | 'stamps' | 'dense' | 'denseTotals' | 'denseStamps'> & Record<'weights' | 'totals' | 'stamps' | 'dense' | 'denseTotals' | 'denseStamps', string>) | null;
  classifiers: Record<string, Omit<ClassifierState, 'weights' | 'bias' | 'gradSq' | 'biasSq'> & Record<'weights' | 'bias' | 'gradSq' | 'biasSq', string>>;
}

function encodeState(s: { baseModel: string; trainingType: TrainingType; hyperparameters: Hyperparameters; epoch: number; tagger: TaggerState | null; classifiers: Record<string, ClassifierState> }): Uint8Array {
  const json: StateJson = {
    format: STATE_FORMAT,
    baseModel: s.baseModel,
    trainingType: s.trainingType,
    hyperparameters: s.hyperparameters,
    epoch: s.epoch,
    tagger: s.tagger
      ? { ...s.tagger, weights: b64(s.tagger.weights), totals: b64(s.tagger.totals), stamps: b64(s.tagger.stamps), dense: b64(s.tagger.dense), denseTotals: b64(s.tagger.denseTotals), denseStamps: b64(s.tagger.denseStamps) }
      : null,
    classifiers: Object.fromEntries(Object.entries(s.classifiers).map(([k, c]) => [k, { ...c, weights: b64(c.weights), bias: b64(c.bias), gradSq: b64(c.gradSq), biasSq: b64(c.biasSq) }])),
  };
  return pack(json);
}

function decodeState(bytes: Uint8Array): { baseModel: string; trainingType: TrainingType; hyperparameters: Hyperparameters; epoch: number; tagger: TaggerState | null; classifiers: Record<string, ClassifierState> } | null {
  let json: StateJson;
  try {
    json = unpack<StateJson>(bytes);
  } catch {
    return null;
  }
  if (json.format !== STATE_FORMAT) return null;
  return {
    ...json,
    tagger: json.tagger
      ? { ...json.tagger, weights: f32(json.tagger.weights), totals: f32(json.tagger.totals), stamps: f32(json.tagger.stamps), dense: f32(json.tagger.dense), denseTotals: f32(json.tagger.denseTotals), denseStamps: f32(json.tagger.denseStamps) }
      : null,
    classifiers: Object.fromEntries(Object.entries(json.classifiers).map(([k, c]) => [k, { ...c, weights: f32(c.weights), bias: f32(c.bias), gradSq: f32(c.gradSq), biasSq: f32(c.biasSq) }])),
  };
}

interface BundleJson {
  format: typeof BUNDLE_FORMAT;
  manifest: ModelManifest;
  /** True when the tables are a LoRA-mode adapter (smaller than full size). */
  adapter: boolean;
  tagger: ReturnType<LinearTagger['toJSON']> | null;
  classifiers: Record<string, ReturnType<NgramClassifier['toJSON']>>;
}

/** Metrics on held-out rows: entities (span-exact) when the data has them, else classification; per label for both. */
export function evaluate(model: { tagger: LinearTagger | null; classifiers: Map<string, NgramClassifier> }, heldout: (CanonicalRow | Example)[]): Metrics {
  const data = prepare(heldout);
  const reports: Report[] = [];
  const perLabel: Metrics['per_label'] = {};
  if (model.tagger && data.entities.length) {
    const r = spanPRF(
      data.entities.map((e) => e.entities ?? []),
      data.entities.map((e) => model.tagger!.extract(e.text ?? '')),
    );
    reports.push(r);
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[l] = v;
  }
  for (const t of data.tasks) {
    const clf = model.classifiers.get(t.task);
    if (!clf) continue;
    const r = classificationPRF(
      t.examples.map((e) => e.labels),
      t.examples.map((e) => clf.predict(e.text).labels),
    );
    reports.push(r);
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[`${t.task}/${l}`] = v;
  }
  const main = reports[0] ?? { precision: 0, recall: 0, f1: 0 };
  const round = (x: number) => Number(x.toFixed(4));
  return {
    f1: round(main.f1),
    precision: round(main.precision),
    recall: round(main.recall),
    per_label: Object.fromEntries(Object.entries(perLabel).map(([l, v]) => [l, { precision: round(v.precision), recall: round(v.recall), f1: round(v.f1), support: v.support }])),
  };
}

/**
 * Trains the extraction model: an entity tagger when the rows have entities,
 * a classifier per classification task. Progress every few hundred examples,
 * a `weights/<step>` training state and a `sampler_weights/<step>` servable
 * bundle after every epoch, cancellation within one example.
 */
export async function trainModel(req: TrainRequest): Promise<TrainResult> {
  const hp = req.hyperparameters;
  const resumed = req.resumeFrom ? decodeState(req.resumeFrom) : null;
  if (req.resumeFrom && !resumed) throw new Error('resumeFrom is not a training checkpoint (weights/<step>)');
  const trainingType: TrainingType = resumed?.trainingType ?? req.trainingType;
  const buckets = BUCKETS[trainingType];
  const data = prepare(req.train);
  if (!data.hasEntities && !data.tasks.length) throw new Error('the training rows have neither entities nor classifications');
  const glove = loadGlove();
  const log = req.onLog ?? (() => undefined);

  // A checkpoint from this job continues to nr_epochs; one from another job (base_model) trains nr_epochs more.
  const continuing = Boolean(resumed && resumed.hyperparameters.seed === hp.seed && resumed.hyperparameters.nrEpochs === hp.nrEpochs);
  const startEpoch = continuing ? resumed!.epoch : 0;
  const tagger = data.hasEntities || resumed?.tagger
    ? new TaggerTrainer(data.entities, { seed: hp.seed, bucketsLog2: buckets, embeddings: glove }, resumed?.tagger ? { ...resumed.tagger, epoch: continuing ? resumed.tagger.epoch : 0 } : undefined)
    : null;
  const classifiers = new Map<string, ClassifierTrainer>();
  for (const t of data.tasks) {
    const prior = resumed?.classifiers[t.task];
    classifiers.set(t.task, new ClassifierTrainer(t.examples, { seed: hp.seed, bucketsLog2: buckets, multiLabel: t.multiLabel, learningRate: hp.learningRate > 0 ? hp.learningRate * 10 : 0.5 }, prior ? { ...prior, epoch: continuing ? prior.epoch : 0 } : undefined));
  }
  const perEpoch = (tagger?.size ?? 0) + [...classifiers.values()].reduce((n, c) => n + c.size, 0);
  const totalSteps = perEpoch * hp.nrEpochs;
  const scale = 2 ** (FULL_BUCKETS - buckets);
  const fullParams =
    (tagger ? tagger.hashedParameterCount * scale + tagger.parameterCount - tagger.hashedParameterCount : 0) +
    [...classifiers.values()].reduce((n, c) => n + c.hashedParameterCount * scale + c.parameterCount - c.hashedParameterCount, 0);
  const trained = (tagger?.parameterCount ?? 0) + [...classifiers.values()].reduce((n, c) => n + c.parameterCount, 0);
  log('info', `training ${trainingType} on ${perEpoch} examples per epoch for ${hp.nrEpochs} epochs (${tagger ? 'entities' : ''}${tagger && classifiers.size ? ' + ' : ''}${classifiers.size ? `${classifiers.size} classification task(s)` : ''}); ${trained.toLocaleString('en-US')} trained parameters (${((100 * trained) / fullParams).toFixed(1)}% of full)`);
  if (continuing) log('info', `resuming from epoch ${startEpoch}`);

  const started = Date.now();
  let step = startEpoch * perEpoch;
  let lastReport = 0;
  let loss = 0;
  const report = (epoch: number, force = false) => {
    const now = Date.now();
    if (!force && now - lastReport < 500) return;
    lastReport = now;
    const elapsed = Math.max(1e-3, (now - started) / 1000);
    const rate = (step - startEpoch * perEpoch) / elapsed;
    req.onProgress?.({ step, totalSteps, epoch, loss: Number(loss.toFixed(5)), learningRate: hp.learningRate, examplesPerSecond: Math.round(rate), etaSeconds: rate > 0 ? Math.round((totalSteps - step) / rate) : 0 });
  };

  for (let epoch = startEpoch + 1; epoch <= hp.nrEpochs; epoch++) {
    const losses: number[] = [];
    const hooks = (base: number) => ({
      ...(req.signal ? { signal: req.signal } : {}),
      onExample: (done: number, running: number) => {
        step = base + done;
        // Before the epoch ends, progress shows the epoch's running loss.
        loss = (losses.reduce((a, b) => a + b, 0) + running) / (losses.length + 1);
        if (done % 200 === 0) report(epoch);
      },
    });
    if (tagger) losses.push((await tagger.runEpochAsync(hooks(step))) / Math.max(1, tagger.size));
    for (const c of classifiers.values()) losses.push(await c.runEpochAsync(hooks(step)));
    if (req.signal?.aborted) throw new Error('training cancelled');
    loss = losses.reduce((a, b) => a + b, 0) / Math.max(1, losses.length);
    report(epoch, true);
    log('info', `epoch ${epoch}/${hp.nrEpochs}: loss ${loss.toFixed(4)}`);
    if (req.onCheckpoint) {
      const state = encodeState({
        baseModel: req.baseModel,
        trainingType,
        hyperparameters: hp,
        epoch,
        tagger: tagger?.snapshot() ?? null,
        classifiers: Object.fromEntries([...classifiers].map(([k, c]) => [k, c.snapshot()])),
      });
      await req.onCheckpoint({ id: `weights/${step}`, type: 'training', step, bytes: state } satisfies Checkpoint);
      const partial = buildBundle(req.baseModel, trainingType, hp, tagger?.model() ?? null, new Map([...classifiers].map(([k, c]) => [k, c.model()])), null);
      await req.onCheckpoint({ id: `sampler_weights/${step}`, type: 'sampler', step, bytes: partial.bytes });
    }
  }

  const finalTagger = tagger?.model() ?? null;
  const finalClassifiers = new Map([...classifiers].map(([k, c]) => [k, c.model()]));
  const metrics = { ...evaluate({ tagger: finalTagger, classifiers: finalClassifiers }, req.heldout), loss: Number(loss.toFixed(5)) };
  log('info', `held-out: f1 ${metrics.f1} precision ${metrics.precision} recall ${metrics.recall} on ${req.heldout.length} rows`);
  const { bytes, manifest } = buildBundle(req.baseModel, trainingType, hp, finalTagger, finalClassifiers, metrics);
  return { bundle: bytes, manifest, metrics };
}

function buildBundle(baseModel: string, trainingType: TrainingType, hp: Hyperparameters, tagger: LinearTagger | null, classifiers: Map<string, NgramClassifier>, metrics: Metrics | null): { bytes: Uint8Array; manifest: ModelManifest } {
  const manifest: ModelManifest = {
    format: 'whetstone-model/1',
    baseModel,
    task: 'extraction',
    trainingType,
    schema: {
      entities: tagger?.entityTypes ?? [],
      classifications: [...classifiers].map(([task, c]) => ({ task, labels: c.labels, multi_label: c.multiLabel })),
      relations: [],
    },
    tokenizer: 'whetstone-words/1',
    hyperparameters: hp,
    metrics,
    createdAt: new Date().toISOString(),
  };
  const json: BundleJson = {
    format: BUNDLE_FORMAT,
    manifest,
    adapter: trainingType === 'lora',
    tagger: tagger ? tagger.toJSON() : null,
    classifiers: Object.fromEntries([...classifiers].map(([k, c]) => [k, c.toJSON()])),
  };
  return { bytes: pack(json), manifest };
}

/** Reads a bundle's manifest without loading its weights' models. */
export function readManifest(bundle: Uint8Array): ModelManifest {
  return unpack<BundleJson>(bundle).manifest;
}

/** Expands a table whose buckets are the low bits of full-size buckets. */
function expand(weights: Float32Array, fromLog2: number, toLog2: number, width: number): Float32Array {
  const out = new Float32Array((1 << toLog2) * width);
  const mask = (1 << fromLog2) - 1;
  for (let b = 0; b < 1 << toLog2; b++) out.set(weights.subarray((b & mask) * width, ((b & mask) + 1) * width), b * width);
  return out;
}

/**
 * Merges a LoRA-mode adapter into full-size tables for serving: every feature
 * reads the same weight as before, so outputs are identical. A full bundle is
 * returned unchanged.
 */
export function mergeAdapter(bundle: Uint8Array): Uint8Array {
  const json = unpack<BundleJson>(bundle);
  if (!json.adapter) return bundle;
  const tagger = json.tagger as (Record<string, unknown> & { bucketsLog2: number; tags: string[]; weights: string }) | null;
  const classifiers = json.classifiers as Record<string, Record<string, unknown> & { bucketsLog2: number; labels: string[]; weights: string }>;
  const merged: BundleJson = {
    ...json,
    adapter: false,
    tagger: tagger ? { ...tagger, bucketsLog2: FULL_BUCKETS, weights: b64(expand(f32(tagger.weights), tagger.bucketsLog2, FULL_BUCKETS, tagger.tags.length)) } : null,
    classifiers: Object.fromEntries(Object.entries(classifiers).map(([k, c]) => [k, { ...c, bucketsLog2: FULL_BUCKETS, weights: b64(expand(f32(c.weights), c.bucketsLog2, FULL_BUCKETS, c.labels.length)) }])),
  };
  return pack(merged);
}

/** The manifest's trained schema as a request schema (used when a project call sends none). */
function manifestSchema(m: ModelManifest): ExtractionSchema {
  return {
    ...(m.schema.entities.length ? { entities: m.schema.entities } : {}),
    ...(m.schema.classifications.length ? { classifications: m.schema.classifications } : {}),
  };
}

/**
 * A servable model from a bundle: trained labels and tasks use the trained
 * weights; any other label, relations and structures fall back to the
 * zero-shot base, so one model serves any schema.
 */
export function loadModel(bundle: Uint8Array): ExtractionModel {
  const json = unpack<BundleJson>(bundle);
  if (json.format !== BUNDLE_FORMAT) throw new Error(`unknown bundle format ${String(json.format)}`);
  const tagger = json.tagger ? LinearTagger.fromJSON(json.tagger as Parameters<typeof LinearTagger.fromJSON>[0], loadGlove()) : null;
  const classifiers = new Map(Object.entries(json.classifiers).map(([k, c]) => [k, NgramClassifier.fromJSON(c as Parameters<typeof NgramClassifier.fromJSON>[0])]));
  const trainedTypes = new Set(tagger?.entityTypes ?? []);
  const manifest = json.manifest;
  return {
    manifest,
    extract(text, schema, options = {}) {
      const given = schema && Object.keys(schema).length ? schema : manifestSchema(manifest);
      const explicit = options.threshold && options.threshold > 0 ? options.threshold : 0;
      return extractWith(text, normalizeSchema(given), options, {
        entities: (t, labels, threshold) => {
          const mine = tagger ? tagger.extract(t, explicit).filter((s) => labels.includes(s.label)) : [];
          const others = labels.filter((l) => !trainedTypes.has(l));
          const zero = others.length ? zeroShotSpans(t, others, threshold).filter((z) => !mine.some((m) => z.start < m.end && z.end > m.start)) : [];
          return [...mine, ...zero].sort((a, b) => a.start - b.start);
        },
        classify: (t, task) => {
          const clf = classifiers.get(task.task);
          if (!clf || !task.labels.every((l) => clf.labels.includes(l))) return zeroShotLabelScores(t, task.labels, task.multi_label);
          const scores = clf.predict(t).scores;
          const picked = task.labels.map((label) => ({ label, confidence: scores[label] ?? 0 }));
          if (clf.multiLabel || task.multi_label) return picked;
          const sum = picked.reduce((n, s) => n + s.confidence, 0) || 1;
          return picked.map((s) => ({ label: s.label, confidence: s.confidence / sum }));
        },
      });
    },
  };
}



/** Scores a bundle on held-out rows (span-exact entities, per-task classification). */
export function evaluateBundle(bundle: Uint8Array, rows: (CanonicalRow | Example)[]): Metrics {
  const json = unpack<BundleJson>(bundle);
  if (json.format !== BUNDLE_FORMAT) throw new Error(`unknown bundle format ${String(json.format)}`);
  const tagger = json.tagger ? LinearTagger.fromJSON(json.tagger as Parameters<typeof LinearTagger.fromJSON>[0], loadGlove()) : null;
  const classifiers = new Map(Object.entries(json.classifiers).map(([k, c]) => [k, NgramClassifier.fromJSON(c as Parameters<typeof NgramClassifier.fromJSON>[0])]));
  return evaluate({ tagger, classifiers }, rows);
}
