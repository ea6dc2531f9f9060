import { gunzipSync, gzipSync } from 'node:zlib';
import { loadGlove } from '../assets';
import { ClassifierTrainer, NgramClassifier, type ClassifierState } from '../classify/ngram-classifier';
import type { Example } from '../data';
import {
  EncoderTrainer,
  EntityEncoder,
  loadEncoderBase,
  type ClassTask,
  type EncoderAdapter,
  type EncoderTrainState,
  type EncoderWeights,
} from '../encoder';
import { isHeadOrNorm } from '../encoder/model';
import { classificationPRF, relationPRF, spanPRF, type Relation, type Report } from '../eval';
import { decodeTensors, encodeTensors, tensor } from '../nn';
import { normalizeSchema } from '../schema';
import { extractWith, zeroShotLabelScores, zeroShotRelations } from '../zeroshot/base-model';
import { zeroShotSpans } from '../zeroshot';
import type {
  CanonicalRow,
  Checkpoint,
  ExtractionModel,
  ExtractionSchema,
  Hyperparameters,
  Metrics,
  ModelManifest,
  TrainRequest,
  TrainResult,
  TrainingType,
} from './types';

export * from './types';

/**
 * Classifiers' hashed-table sizes (log2 buckets). `full` trains full-size
 * tables; `lora` trains tables 1/8 the size (12.5% of the parameters), stored
 * alone and mergeable into full-size tables with identical outputs (a
 * feature's small bucket is its full bucket's low bits). The entity encoder's
 * LoRA is a true low-rank adapter (../encoder).
 */
const BUCKETS: Record<TrainingType, number> = { full: 16, lora: 13 };
const FULL_BUCKETS = BUCKETS.full;

/** Version 3: the encoder's features gained character n-grams (a 2^15 hash table) and its tags a CRF; older bundles must be retrained. */
const BUNDLE_FORMAT = 'whetstone-bundle/3';
const STATE_FORMAT = 'whetstone-train-state/3';

/** Encoder defaults; `learning_rate` is AdamW's peak rate. The classifiers' AdaGrad step is 250× it. */
export const ENCODER_DEFAULTS = { batchSize: 16, loraRank: 8, loraAlphaPerRank: 2 } as const;
const CLASSIFIER_LR_SCALE = 250;

interface ClassificationTaskData {
  task: string;
  multiLabel: boolean;
  examples: { text: string; labels: string[] }[];
}

/**
 * Rows → encoder examples (entities, and relations where a row lists them)
 * and per-task classification examples (list, dict and banking77 `{label,
 * task}` forms).
 */
function prepare(rows: (CanonicalRow | Example)[]): {
  entities: Example[];
  encoderRows: Example[];
  tasks: ClassificationTaskData[];
  hasEntities: boolean;
  relationLabels: string[];
  structures: Record<string, Record<string, 'str' | 'list'>>;
} {
  const entities: Example[] = [];
  const encoderRows: Example[] = [];
  let rowClasses: { task: string; labels: string[] }[] = [];
  const tasks = new Map<string, ClassificationTaskData>();
  const relationLabels = new Set<string>();
  const structures: Record<string, Record<string, 'str' | 'list'>> = {};
  let hasEntities = false;
  const add = (text: string, task: string, labels: string[], multi: boolean) => {
    let t = tasks.get(task);
    if (!t) tasks.set(task, (t = { task, multiLabel: multi, examples: [] }));
    t.multiLabel ||= multi || labels.length > 1;
    t.examples.push({ text, labels });
    rowClasses.push({ task, labels });
  };
  for (const raw of rows) {
    const row = raw as Example & CanonicalRow;
    const text = row.text ?? '';
    if (!text) continue;
    rowClasses = [];
    let tagged: Example | null = null;
    const fields = row.structures
      ? structureSpans(text, row.structures as NonNullable<Example['structures']>, structures)
      : null;
    for (const c of fields?.choices ?? []) add(text, c.task, c.labels, c.multi);
    if (Array.isArray(row.entities) || Array.isArray(row.relations) || fields) {
      const spans = [
        ...(row.entities ?? []).map((e) => ({ start: e.start, end: e.end, label: e.label })),
        ...(fields?.spans ?? []),
      ];
      // An argument without a type takes the type of the gold entity at its offsets.
      const argument = (a: { start: number; end: number; label?: string }) => ({
        start: a.start,
        end: a.end,
        label: a.label ?? spans.find((e) => e.start === a.start && e.end === a.end)?.label ?? '',
      });
      const relations = Array.isArray(row.relations)
        ? row.relations.map((r) => ({ label: r.label, head: argument(r.head), tail: argument(r.tail) }))
        : undefined;
      tagged = { text, entities: spans, ...(relations ? { relations } : {}) };
      entities.push(tagged);
      if (spans.length) hasEntities = true;
      for (const r of relations ?? []) relationLabels.add(r.label);
    }
    if (typeof row.label === 'string') add(text, row.task ?? 'label', [row.label], false);
    if (Array.isArray(row.classifications))
      for (const c of row.classifications) add(text, c.task, c.labels, c.multi_label === true);
    else if (row.classifications && typeof row.classifications === 'object') {
      for (const [task, v] of Object.entries(row.classifications))
        add(text, task, Array.isArray(v) ? v : [v], Array.isArray(v));
    }
    // The encoder learns from the row's tags and relations, and from its classes (pooled head).
    if (tagged || rowClasses.length)
      encoderRows.push({ ...(tagged ?? { text }), ...(rowClasses.length ? { classifications: rowClasses } : {}) });
  }
  return {
    entities,
    encoderRows,
    tasks: [...tasks.values()],
    hasEntities,
    relationLabels: [...relationLabels].sort(),
    structures,
  };
}

/** The label (entity type or classification task) a structure field trains: `structure.field`. */
export const structureLabel = (structure: string, field: string) => `${structure}.${field}`;

/**
 * Structure instances as training signal: a field value written in the text
 * becomes an entity span labelled `structure.field` (its first unused
 * occurrence, exact case first); a value not in the text is one of the field's
 * choices and becomes a classification label of task `structure.field`. Field
 * types (`str` or `list`) are recorded for the manifest.
 */
function structureSpans(
  text: string,
  structures: NonNullable<Example['structures']>,
  types: Record<string, Record<string, 'str' | 'list'>>,
): {
  spans: { start: number; end: number; label: string }[];
  choices: { task: string; labels: string[]; multi: boolean }[];
} {
  const spans: { start: number; end: number; label: string }[] = [];
  const choices: { task: string; labels: string[]; multi: boolean }[] = [];
  const taken = (s: number, e: number) => spans.some((x) => s < x.end && e > x.start);
  const find = (value: string): number => {
    for (const hay of [text, text.toLowerCase()]) {
      const needle = hay === text ? value : value.toLowerCase();
      for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1))
        if (!taken(at, at + value.length)) return at;
    }
    return -1;
  };
  for (const [name, instances] of Object.entries(structures)) {
    const fieldTypes = (types[name] ??= {});
    for (const inst of instances)
      for (const [field, raw] of Object.entries(inst)) {
        const values = Array.isArray(raw) ? raw : [raw];
        if (Array.isArray(raw) || fieldTypes[field] === undefined)
          fieldTypes[field] = Array.isArray(raw) ? 'list' : (fieldTypes[field] ?? 'str');
        const label = structureLabel(name, field);
        const absent: string[] = [];
        for (const v of values) {
          const at = find(v);
          if (at >= 0) spans.push({ start: at, end: at + v.length, label });
          else absent.push(v);
        }
        if (absent.length) choices.push({ task: label, labels: absent, multi: Array.isArray(raw) });
      }
  }
  return { spans: spans.sort((a, b) => a.start - b.start), choices };
}

const b64 = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
const f32 = (s: string) => {
  const buf = Buffer.from(s, 'base64');
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
};

type TensorRecord = Record<string, { shape: number[]; data: Float32Array }>;

/** Weights and training states are gzip'd tensor files: a JSON header (`meta`) and raw float32 tensors. */
function packTensors<M>(meta: M, tensors: TensorRecord, compress = true): Uint8Array {
  const raw = encodeTensors({ meta, tensors });
  return compress ? new Uint8Array(gzipSync(raw, { level: 1 })) : raw;
}

/** Reads a tensor file, gzip'd (bundles) or not (training states, whose float data does not compress). */
function unpackTensors<M>(bytes: Uint8Array): { meta: M; tensors: TensorRecord } | null {
  try {
    const gzipped = bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
    return decodeTensors<M>(gzipped ? gunzipSync(Buffer.from(bytes)) : bytes);
  } catch {
    return null;
  }
}

type ClassifierStateJson = Omit<ClassifierState, 'weights' | 'bias' | 'gradSq' | 'biasSq'> &
  Record<'weights' | 'bias' | 'gradSq' | 'biasSq', string>;

interface StateMeta {
  format: typeof STATE_FORMAT;
  baseModel: string;
  trainingType: TrainingType;
  hyperparameters: Hyperparameters;
  epoch: number;
  encoder: {
    labels: string[];
    relations?: string[];
    tasks?: ClassTask[];
    epoch: number;
    step: number;
    adamT: number;
  } | null;
  classifiers: Record<string, ClassifierStateJson>;
}

interface TrainState {
  baseModel: string;
  trainingType: TrainingType;
  hyperparameters: Hyperparameters;
  epoch: number;
  encoder: (EncoderTrainState & { labels: string[]; relations?: string[]; tasks?: ClassTask[] }) | null;
  classifiers: Record<string, ClassifierState>;
}

function encodeState(s: TrainState): Uint8Array {
  const tensors: TensorRecord = {};
  if (s.encoder)
    for (const [name, t] of Object.entries(s.encoder.tensors)) {
      tensors[`t:${name}`] = { shape: t.shape, data: t.data };
      tensors[`m:${name}`] = { shape: t.shape, data: t.m };
      tensors[`v:${name}`] = { shape: t.shape, data: t.v };
      tensors[`e:${name}`] = { shape: t.shape, data: t.ema };
    }
  const meta: StateMeta = {
    format: STATE_FORMAT,
    baseModel: s.baseModel,
    trainingType: s.trainingType,
    hyperparameters: s.hyperparameters,
    epoch: s.epoch,
    encoder: s.encoder
      ? {
          labels: s.encoder.labels,
          relations: s.encoder.relations ?? [],
          tasks: s.encoder.tasks ?? [],
          epoch: s.encoder.epoch,
          step: s.encoder.step,
          adamT: s.encoder.adamT,
        }
      : null,
    classifiers: Object.fromEntries(
      Object.entries(s.classifiers).map(([k, c]) => [
        k,
        { ...c, weights: b64(c.weights), bias: b64(c.bias), gradSq: b64(c.gradSq), biasSq: b64(c.biasSq) },
      ]),
    ),
  };
  return packTensors(meta, tensors, false);
}

function decodeState(bytes: Uint8Array): TrainState | null {
  const file = unpackTensors<StateMeta>(bytes);
  if (!file || file.meta?.format !== STATE_FORMAT) return null;
  const { meta, tensors } = file;
  let encoder: TrainState['encoder'] = null;
  if (meta.encoder) {
    const named: EncoderTrainState['tensors'] = {};
    for (const [key, t] of Object.entries(tensors)) {
      if (!key.startsWith('t:')) continue;
      const name = key.slice(2);
      named[name] = {
        shape: t.shape,
        data: t.data,
        m: tensors[`m:${name}`]!.data,
        v: tensors[`v:${name}`]!.data,
        ema: tensors[`e:${name}`]!.data,
      };
    }
    encoder = { ...meta.encoder, tensors: named };
  }
  return {
    baseModel: meta.baseModel,
    trainingType: meta.trainingType,
    hyperparameters: meta.hyperparameters,
    epoch: meta.epoch,
    encoder,
    classifiers: Object.fromEntries(
      Object.entries(meta.classifiers).map(([k, c]) => [
        k,
        { ...c, weights: f32(c.weights), bias: f32(c.bias), gradSq: f32(c.gradSq), biasSq: f32(c.biasSq) },
      ]),
    ),
  };
}

interface BundleMeta {
  format: typeof BUNDLE_FORMAT;
  manifest: ModelManifest;
  /** True when the bundle stores a LoRA adapter (and smaller classifier tables) rather than whole weights. */
  adapter: boolean;
  /** The entity encoder: its labels and relations, and its adapter's rank and alpha in LoRA mode. Tensors `w:<name>` (weights) and `a:<name>` (adapter). */
  encoder: {
    labels: string[];
    relations?: string[];
    tasks?: ClassTask[];
    lora: { rank: number; alpha: number } | null;
  } | null;
  classifiers: Record<string, ReturnType<NgramClassifier['toJSON']>>;
}

function readBundle(bundle: Uint8Array): { meta: BundleMeta; tensors: TensorRecord } {
  const file = unpackTensors<BundleMeta>(bundle);
  if (!file) throw new Error('not a whetstone model bundle (expected a gzip’d tensor file)');
  if (file.meta?.format !== BUNDLE_FORMAT)
    throw new Error(`unknown bundle format ${String(file.meta?.format)}; retrain the model with this version`);
  return file;
}

/** The bundle's encoder over the frozen base: stored weights override the base's, and an adapter is attached. */
function encoderOf(meta: BundleMeta, tensors: TensorRecord): EntityEncoder | null {
  if (!meta.encoder) return null;
  const base = loadEncoderBase();
  const weights: EncoderWeights = { ...base.weights };
  const adapterTensors: EncoderWeights = {};
  for (const [key, t] of Object.entries(tensors)) {
    if (key.startsWith('w:')) weights[key.slice(2)] = tensor(t.data, t.shape);
    else if (key.startsWith('a:')) adapterTensors[key.slice(2)] = tensor(t.data, t.shape);
  }
  const lora = meta.encoder.lora;
  const adapter: EncoderAdapter | null = lora
    ? { rank: lora.rank, alpha: lora.alpha, targets: [], tensors: adapterTensors }
    : null;
  return new EntityEncoder(
    base.config,
    loadGlove(),
    weights,
    adapter,
    meta.encoder.labels,
    meta.encoder.relations ?? [],
    meta.encoder.tasks ?? [],
  );
}

function classifiersOf(meta: BundleMeta): Map<string, NgramClassifier> {
  return new Map(
    Object.entries(meta.classifiers).map(([k, c]) => [
      k,
      NgramClassifier.fromJSON(c as Parameters<typeof NgramClassifier.fromJSON>[0]),
    ]),
  );
}

/**
 * A task's label probabilities: the n-gram classifier's, fused (normalised
 * geometric mean) with the encoder's pooled head when the encoder learned the
 * task; the n-gram classifier's alone for multi-label tasks.
 */
function taskScores(
  encoder: EntityEncoder | null,
  clf: NgramClassifier,
  text: string,
  task: string,
  labels: string[],
): { label: string; confidence: number }[] {
  const ngram = clf.predict(text).scores;
  if (clf.multiLabel || !encoder?.tasks.some((t) => t.task === task))
    return labels.map((label) => ({ label, confidence: ngram[label] ?? 0 }));
  const pooled = encoder.classify(text, task, labels);
  const fused = labels.map((label, i) =>
    Math.sqrt(Math.max(ngram[label] ?? 0, 1e-9) * Math.max(pooled[i]!.confidence, 1e-9)),
  );
  const sum = fused.reduce((a, b) => a + b, 0) || 1;
  return labels.map((label, i) => ({ label, confidence: fused[i]! / sum }));
}

const best = (scores: { label: string; confidence: number }[]) =>
  scores.reduce((a, b) => (b.confidence > a.confidence ? b : a)).label;

/**
 * Metrics on held-out rows: entities (span-exact) when the data has them, then
 * relations (label, argument spans and types exact; per label as
 * `relation/<label>`), then classification; the first present is the headline.
 */
export function evaluate(
  model: { encoder: EntityEncoder | null; classifiers: Map<string, NgramClassifier> },
  heldout: (CanonicalRow | Example)[],
): Metrics {
  const data = prepare(heldout);
  const reports: Report[] = [];
  const perLabel: Metrics['per_label'] = {};
  if (model.encoder && data.hasEntities) {
    const r = spanPRF(
      data.entities.map((e) => e.entities ?? []),
      data.entities.map((e) => model.encoder!.extract(e.text ?? '')),
    );
    reports.push(r);
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[l] = v;
  }
  const annotated = data.entities.filter((e) => e.relations);
  if (model.encoder?.relationLabels.length && annotated.length) {
    const r = relationPRF(
      annotated.map((e) => e.relations as Relation[]),
      annotated.map((e) => model.encoder!.extractRelations(e.text ?? '')),
    );
    reports.push(r);
    for (const [l, v] of Object.entries(r.perLabel)) perLabel[`relation/${l}`] = v;
  }
  for (const t of data.tasks) {
    const clf = model.classifiers.get(t.task);
    if (!clf) continue;
    const r = classificationPRF(
      t.examples.map((e) => e.labels),
      t.examples.map((e) =>
        clf.multiLabel
          ? clf.predict(e.text).labels
          : [best(taskScores(model.encoder, clf, e.text, t.task, clf.labels))],
      ),
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
    per_label: Object.fromEntries(
      Object.entries(perLabel).map(([l, v]) => [
        l,
        { precision: round(v.precision), recall: round(v.recall), f1: round(v.f1), support: v.support },
      ]),
    ),
  };
}

/**
 * Trains the extraction model: the entity encoder when the rows have
 * entities, a classifier per classification task. Progress as it goes, a
 * `weights/<step>` training state and a `sampler_weights/<step>` servable
 * bundle after every epoch, cancellation within one batch.
 */
export async function trainModel(req: TrainRequest): Promise<TrainResult> {
  const hp = req.hyperparameters;
  const resumed = req.resumeFrom ? decodeState(req.resumeFrom) : null;
  if (req.resumeFrom && !resumed) throw new Error('resumeFrom is not a training checkpoint (weights/<step>)');
  const trainingType: TrainingType = resumed?.trainingType ?? req.trainingType;
  const buckets = BUCKETS[trainingType];
  const data = prepare(req.train);
  if (!data.hasEntities && !data.tasks.length)
    throw new Error('the training rows have neither entities nor classifications');
  const glove = loadGlove();
  const log = req.onLog ?? (() => undefined);

  // A checkpoint from this job continues to nr_epochs; one from another job (base_model) trains nr_epochs more.
  const continuing = Boolean(
    resumed && resumed.hyperparameters.seed === hp.seed && resumed.hyperparameters.nrEpochs === hp.nrEpochs,
  );
  const startEpoch = continuing ? resumed!.epoch : 0;
  const rank = hp.loraRank ?? ENCODER_DEFAULTS.loraRank;
  const alpha = hp.loraAlpha ?? rank * ENCODER_DEFAULTS.loraAlphaPerRank;
  const entityLabels = [
    ...new Set([
      ...(resumed?.encoder?.labels ?? []),
      ...[...new Set(data.entities.flatMap((e) => (e.entities ?? []).map((s) => s.label)))].sort(),
    ]),
  ];
  const relationLabels = [...new Set([...(resumed?.encoder?.relations ?? []), ...data.relationLabels])];
  // Single-label tasks also train the encoder's pooled head (labels continue a checkpoint's, then new ones).
  const classTasks: ClassTask[] = data.tasks
    .filter((t) => !t.multiLabel)
    .map((t) => {
      const prior = resumed?.encoder?.tasks?.find((p) => p.task === t.task)?.labels ?? [];
      return {
        task: t.task,
        labels: [...new Set([...prior, ...[...new Set(t.examples.flatMap((e) => e.labels))].sort()])],
      };
    });
  const base = loadEncoderBase();
  const priorEncoder = resumed?.encoder
    ? continuing
      ? resumed.encoder
      : {
          ...resumed.encoder,
          epoch: 0,
          step: 0,
          adamT: 0,
          tensors: Object.fromEntries(
            Object.entries(resumed.encoder.tensors).map(([k, t]) => [
              k,
              { ...t, data: t.ema, m: new Float32Array(t.data.length), v: new Float32Array(t.data.length) },
            ]),
          ),
        }
    : undefined;
  const encoder =
    data.hasEntities || classTasks.length || resumed?.encoder
      ? new EncoderTrainer(
          data.encoderRows,
          base.config,
          glove,
          base.weights,
          {
            mode: trainingType,
            labels: entityLabels,
            epochs: hp.nrEpochs,
            learningRate: hp.learningRate,
            batchSize: hp.batchSize ?? ENCODER_DEFAULTS.batchSize,
            seed: hp.seed,
            loraRank: rank,
            loraAlpha: alpha,
            relationLabels,
            tasks: classTasks,
          },
          priorEncoder,
        )
      : null;
  const classifiers = new Map<string, ClassifierTrainer>();
  for (const t of data.tasks) {
    const prior = resumed?.classifiers[t.task];
    classifiers.set(
      t.task,
      new ClassifierTrainer(
        t.examples,
        {
          seed: hp.seed,
          bucketsLog2: buckets,
          multiLabel: t.multiLabel,
          learningRate: hp.learningRate * CLASSIFIER_LR_SCALE,
        },
        prior ? { ...prior, epoch: continuing ? prior.epoch : 0 } : undefined,
      ),
    );
  }
  const perEpoch = (encoder?.size ?? 0) + [...classifiers.values()].reduce((n, c) => n + c.size, 0);
  const totalSteps = perEpoch * hp.nrEpochs;
  const scale = 2 ** (FULL_BUCKETS - buckets);
  const counts = encoder?.parameterCounts ?? { trained: 0, total: 0 };
  const fullParams =
    counts.total +
    [...classifiers.values()].reduce(
      (n, c) => n + c.hashedParameterCount * scale + c.parameterCount - c.hashedParameterCount,
      0,
    );
  const trained = counts.trained + [...classifiers.values()].reduce((n, c) => n + c.parameterCount, 0);
  const share = Number(((100 * trained) / Math.max(1, fullParams)).toFixed(1));
  const what = [
    entityLabels.length ? `entities (${entityLabels.join(', ')})` : '',
    encoder && relationLabels.length ? `relations (${relationLabels.join(', ')})` : '',
    classifiers.size
      ? `${classifiers.size} classification task(s)${classTasks.length ? ` (n-gram branch, and the encoder's pooled head for ${classTasks.length} single-label)` : ''}`
      : '',
  ]
    .filter(Boolean)
    .join(' + ');
  log(
    'info',
    `training ${trainingType}${trainingType === 'lora' ? ` (rank ${rank}, alpha ${alpha})` : ''} on ${perEpoch} examples per epoch for ${hp.nrEpochs} epochs: ${what}; ${trained.toLocaleString('en-US')} trained parameters (${share}% of full)`,
  );
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
    req.onProgress?.({
      step,
      totalSteps,
      epoch,
      loss: Number(loss.toFixed(5)),
      learningRate: Number((encoder?.learningRate() ?? hp.learningRate).toPrecision(4)),
      examplesPerSecond: Math.round(rate),
      etaSeconds: rate > 0 ? Math.round((totalSteps - step) / rate) : 0,
    });
  };

  const snapshotClassifiers = () => Object.fromEntries([...classifiers].map(([k, c]) => [k, c.snapshot()]));
  const liveClassifiers = () => new Map([...classifiers].map(([k, c]) => [k, c.model()]));
  for (let epoch = startEpoch + 1; epoch <= hp.nrEpochs; epoch++) {
    const losses: number[] = [];
    const hooks = (base: number) => ({
      ...(req.signal ? { signal: req.signal } : {}),
      onExample: (done: number, running: number) => {
        step = base + done;
        // Before the epoch ends, progress shows the epoch's running loss.
        loss = (losses.reduce((a, b) => a + b, 0) + running) / (losses.length + 1);
        report(epoch);
      },
    });
    try {
      if (encoder) losses.push(await encoder.runEpochAsync(hooks(step)));
      for (const c of classifiers.values()) losses.push(await c.runEpochAsync(hooks(step)));
    } catch (err) {
      if (req.signal?.aborted) throw new Error('training cancelled');
      throw err;
    }
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
        encoder: encoder
          ? { ...encoder.snapshot(), labels: entityLabels, relations: relationLabels, tasks: classTasks }
          : null,
        classifiers: snapshotClassifiers(),
      });
      await req.onCheckpoint({ id: `weights/${step}`, type: 'training', step, bytes: state } satisfies Checkpoint);
      const partial = buildBundle(req.baseModel, trainingType, hp, encoder?.model() ?? null, liveClassifiers(), null, {
        structures: data.structures,
      });
      await req.onCheckpoint({ id: `sampler_weights/${step}`, type: 'sampler', step, bytes: partial.bytes });
    }
  }

  const finalEncoder = encoder?.model() ?? null;
  const finalClassifiers = liveClassifiers();
  const metrics = {
    ...evaluate({ encoder: finalEncoder?.merged() ?? null, classifiers: finalClassifiers }, req.heldout),
    loss: Number(loss.toFixed(5)),
  };
  log(
    'info',
    `held-out: f1 ${metrics.f1} precision ${metrics.precision} recall ${metrics.recall} on ${req.heldout.length} rows`,
  );
  const { bytes, manifest } = buildBundle(req.baseModel, trainingType, hp, finalEncoder, finalClassifiers, metrics, {
    trainedShare: share,
    structures: data.structures,
  });
  return { bundle: bytes, manifest, metrics };
}

function buildBundle(
  baseModel: string,
  trainingType: TrainingType,
  hp: Hyperparameters,
  encoder: EntityEncoder | null,
  classifiers: Map<string, NgramClassifier>,
  metrics: Metrics | null,
  extra: { trainedShare?: number; structures: Record<string, Record<string, 'str' | 'list'>> },
): { bytes: Uint8Array; manifest: ModelManifest } {
  const { trainedShare } = extra;
  const base = loadEncoderBase();
  const manifest: ModelManifest = {
    format: 'whetstone-model/1',
    baseModel,
    task: 'extraction',
    trainingType,
    schema: {
      entities: encoder ? [...encoder.trainedLabels] : [],
      classifications: [...classifiers].map(([task, c]) => ({ task, labels: c.labels, multi_label: c.multiLabel })),
      relations: encoder ? [...encoder.relationLabels] : [],
      ...(Object.keys(extra.structures).length ? { structures: extra.structures } : {}),
    },
    tokenizer: 'whetstone-words/1',
    architecture: {
      entities: encoder
        ? `encoder: GloVe-100 + hashed features (2^${base.config.hashLog2}×${base.config.hashDim}), width-3 window, ${base.config.layers} pre-LN transformer layers (D=${base.config.dim}, ${base.config.heads} heads), label-name BIO head`
        : null,
      ...(encoder?.relationLabels.length
        ? { relations: 'encoder span pairs (head, tail, the words between, order) against relation-name vectors' }
        : {}),
      classifications: classifiers.size
        ? `hashed word uni+bigram linear model${encoder?.tasks.length ? ", fused with the encoder's pooled head (label-name vectors) for single-label tasks" : ''}`
        : null,
      ...(encoder?.adapter
        ? {
            lora: {
              rank: encoder.adapter.rank,
              alpha: encoder.adapter.alpha,
              targets: ['in', 'qkv', 'o', 'fc1', 'fc2', 'hash'],
              trained_share_percent: trainedShare ?? null,
            },
          }
        : {}),
    },
    hyperparameters: hp,
    metrics,
    createdAt: new Date().toISOString(),
  };
  const tensors: TensorRecord = {};
  if (encoder) {
    // The relation head is stored only when trained (otherwise it is the base's).
    const stored = (name: string) =>
      (!encoder.adapter || isHeadOrNorm(name)) && (encoder.relationLabels.length > 0 || !name.startsWith('rel.'));
    for (const [name, t] of Object.entries(encoder.weights))
      if (stored(name)) tensors[`w:${name}`] = { shape: [...t.shape], data: t.data };
    if (encoder.adapter)
      for (const [name, t] of Object.entries(encoder.adapter.tensors))
        tensors[`a:${name}`] = { shape: [...t.shape], data: t.data };
  }
  const meta: BundleMeta = {
    format: BUNDLE_FORMAT,
    manifest,
    adapter: trainingType === 'lora',
    encoder: encoder
      ? {
          labels: [...encoder.trainedLabels],
          relations: [...encoder.relationLabels],
          tasks: [...encoder.tasks],
          lora: encoder.adapter ? { rank: encoder.adapter.rank, alpha: encoder.adapter.alpha } : null,
        }
      : null,
    classifiers: Object.fromEntries([...classifiers].map(([k, c]) => [k, c.toJSON()])),
  };
  return { bytes: packTensors(meta, tensors), manifest };
}

/** Reads a bundle's manifest. */
export function readManifest(bundle: Uint8Array): ModelManifest {
  return readBundle(bundle).meta.manifest;
}

/** Expands a table whose buckets are the low bits of full-size buckets. */
function expand(weights: Float32Array, fromLog2: number, toLog2: number, width: number): Float32Array {
  const out = new Float32Array((1 << toLog2) * width);
  const mask = (1 << fromLog2) - 1;
  for (let b = 0; b < 1 << toLog2; b++)
    out.set(weights.subarray((b & mask) * width, ((b & mask) + 1) * width), b * width);
  return out;
}

/**
 * Merges a LoRA bundle into whole weights for serving: the encoder's
 * `W + (alpha/rank)·A·B` folded into each adapted matrix, the classifiers'
 * small tables expanded to full size. Outputs are identical (to float
 * rounding). A full bundle is returned unchanged.
 */
export function mergeAdapter(bundle: Uint8Array): Uint8Array {
  const { meta, tensors } = readBundle(bundle);
  if (!meta.adapter) return bundle;
  const classifiers = meta.classifiers as Record<
    string,
    Record<string, unknown> & { bucketsLog2: number; labels: string[]; weights: string }
  >;
  const merged: BundleMeta = {
    ...meta,
    adapter: false,
    encoder: meta.encoder ? { ...meta.encoder, lora: null } : null,
    classifiers: Object.fromEntries(
      Object.entries(classifiers).map(([k, c]) => [
        k,
        {
          ...c,
          bucketsLog2: FULL_BUCKETS,
          weights: b64(expand(f32(c.weights), c.bucketsLog2, FULL_BUCKETS, c.labels.length)),
        },
      ]),
    ),
  };
  const encoder = encoderOf(meta, tensors)?.merged();
  const out: TensorRecord = {};
  if (encoder)
    for (const [name, t] of Object.entries(encoder.weights)) out[`w:${name}`] = { shape: [...t.shape], data: t.data };
  return packTensors(merged, out);
}

/** The manifest's trained schema as a request schema (used when a project call sends none). */
function manifestSchema(m: ModelManifest): ExtractionSchema {
  const structures = m.schema.structures ?? {};
  const isField = (label: string) =>
    Object.entries(structures).some(([name, fields]) =>
      Object.keys(fields).some((f) => structureLabel(name, f) === label),
    );
  const entities = m.schema.entities.filter((l) => !isField(l));
  const classifications = m.schema.classifications.filter((c) => !isField(c.task));
  const choices = (label: string) => m.schema.classifications.find((c) => c.task === label)?.labels;
  return {
    ...(entities.length ? { entities } : {}),
    ...(classifications.length ? { classifications } : {}),
    ...(m.schema.relations.length ? { relations: m.schema.relations } : {}),
    ...(Object.keys(structures).length
      ? {
          structures: Object.fromEntries(
            Object.entries(structures).map(([name, fields]) => [
              name,
              Object.fromEntries(
                Object.entries(fields).map(([f, type]) => [
                  f,
                  choices(structureLabel(name, f)) ? { type, choices: choices(structureLabel(name, f))! } : type,
                ]),
              ),
            ]),
          ),
        }
      : {}),
  };
}

/**
 * A servable model from a bundle (a LoRA adapter is merged on load): trained
 * labels, tasks and relations use the trained weights; any other label or
 * relation, and structures, fall back to the zero-shot base, so one model
 * serves any schema.
 */
export function loadModel(bundle: Uint8Array): ExtractionModel {
  const { meta, tensors } = readBundle(bundle);
  const encoder = encoderOf(meta, tensors)?.merged() ?? null;
  const classifiers = classifiersOf(meta);
  const trainedTypes = new Set(encoder?.trainedLabels ?? []);
  const manifest = meta.manifest;
  return {
    manifest,
    extract(text, schema, options = {}) {
      const given = schema && Object.keys(schema).length ? schema : manifestSchema(manifest);
      const explicit = options.threshold && options.threshold > 0 ? options.threshold : 0;
      return extractWith(text, normalizeSchema(given), options, {
        entities: (t, labels, threshold) => {
          const known = labels.filter((l) => trainedTypes.has(l));
          const mine = encoder && known.length ? encoder.extract(t, known, explicit) : [];
          const others = labels.filter((l) => !trainedTypes.has(l));
          const zero = others.length
            ? zeroShotSpans(t, others, threshold).filter((z) => !mine.some((m) => z.start < m.end && z.end > m.start))
            : [];
          return [...mine, ...zero].sort((a, b) => a.start - b.start);
        },
        classify: (t, task) => {
          const clf = classifiers.get(task.task);
          if (!clf || !task.labels.every((l) => clf.labels.includes(l)))
            return zeroShotLabelScores(t, task.labels, task.multi_label);
          const picked = taskScores(encoder, clf, t, task.task, task.labels);
          if (clf.multiLabel || task.multi_label) return picked;
          const sum = picked.reduce((n, s) => n + s.confidence, 0) || 1;
          return picked.map((s) => ({ label: s.label, confidence: s.confidence / sum }));
        },
        // Trained structure fields: spans of `structure.field` from the encoder, choices from its classifier.
        structureField: (t, structure, field) => {
          const label = structureLabel(structure, field.name);
          const clf = classifiers.get(label);
          if (field.choices.length && clf && field.choices.every((c) => clf.labels.includes(c)))
            return { scores: taskScores(encoder, clf, t, label, field.choices) };
          if (!field.choices.length && encoder && trainedTypes.has(label))
            return { spans: encoder.extract(t, [label], explicit) };
          return null;
        },
        // Trained relation names from the encoder, any other from the zero-shot base.
        relations: (t, names, threshold) => {
          const known = encoder ? names.filter((r) => encoder.relationLabels.includes(r)) : [];
          const others = names.filter((r) => !known.includes(r));
          const mine = known.length
            ? encoder!
                .extractRelations(t, known, encoder!.trainedLabels, explicit)
                .map((r) => ({ relation: r.label, head: r.head, tail: r.tail, confidence: r.confidence }))
            : [];
          return [...mine, ...(others.length ? zeroShotRelations(t, others, threshold) : [])];
        },
      });
    },
  };
}

/** Scores a bundle on held-out rows (span-exact entities, relations, per-task classification). */
export function evaluateBundle(bundle: Uint8Array, rows: (CanonicalRow | Example)[]): Metrics {
  const { meta, tensors } = readBundle(bundle);
  return evaluate({ encoder: encoderOf(meta, tensors)?.merged() ?? null, classifiers: classifiersOf(meta) }, rows);
}
