import { loadGlove } from '../assets/load';
import { ClassifierTrainer } from '../classify/ngram-classifier';
import { EncoderTrainer, loadEncoderBase, type ClassTask, type EncoderConfig, type EncoderWeights } from '../encoder';
import { BUCKETS, FULL_BUCKETS, buildBundle } from './bundle';
import { calibrateTasks } from './calibrate';
import { EtaEstimator } from './eta';
import { evaluate, headline } from './evaluate';
import { prepare } from './rows';
import { decodeState, encodeState } from './train-state';
import type { Checkpoint, Metrics, TrainRequest, TrainResult, TrainingType } from './types';
import { AppError } from '@whetstone/errors';

/**
 * Encoder defaults; `learning_rate` is AdamW's peak rate. The classifiers' AdaGrad step scales with it: their
 * default step at the CLI's and API's default rate.
 */
export const ENCODER_DEFAULTS = { batchSize: 16, loraRank: 8, loraAlphaPerRank: 2 } as const;
const DEFAULT_LEARNING_RATE = 0.002;

/**
 * Internal, for benchmarks only (not part of the service contract, not documented for users): start the encoder
 * from these weights instead of the shipped pretrained base, e.g. a seeded initialisation to measure what
 * pretraining adds. Absent: `loadEncoderBase()`, as always.
 */
export interface InternalTrainOptions {
  encoderBase?: { config: EncoderConfig; weights: EncoderWeights };
}

/**
 * Trains the extraction model: the entity encoder when the rows have
 * entities or relations with given spans (its relation head), a classifier
 * per classification task. Progress as it goes, a
 * `weights/<step>` training state and a `sampler_weights/<step>` servable
 * bundle after every epoch, cancellation within one batch.
 */
export async function trainModel(req: TrainRequest & InternalTrainOptions): Promise<TrainResult> {
  const hp = req.hyperparameters;
  const resumed = req.resumeFrom ? decodeState(req.resumeFrom) : null;
  if (req.resumeFrom && !resumed)
    throw new AppError(
      'InvalidArgument',
      'CHECKPOINT_INVALID',
      'resumeFrom is not a training checkpoint (weights/<step>)',
    );
  const trainingType: TrainingType = resumed?.trainingType ?? req.trainingType;
  const buckets = BUCKETS[trainingType];
  const data = prepare(req.train);
  if (!data.hasEntities && !data.tasks.length && !data.pairs.length)
    throw new AppError(
      'InvalidArgument',
      'TRAINING_DATA_INVALID',
      'the training rows have neither entities, relations with given spans nor classifications',
    );
  if (data.pairs.length && !data.relationLabels.length)
    throw new AppError(
      'InvalidArgument',
      'TRAINING_DATA_INVALID',
      'every relation-classification row is labelled no-relation: at least one relation is needed',
    );
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
  const base = req.encoderBase ?? loadEncoderBase();
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
    data.hasEntities || data.pairs.length || classTasks.length || resumed?.encoder
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
          // The classifier's default step (by its n-grams, which a checkpoint keeps, and its task kind),
          // scaled as the job's rate is scaled from the default.
          learningRateScale: hp.learningRate / DEFAULT_LEARNING_RATE,
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
    encoder && relationLabels.length
      ? `relations (${relationLabels.join(', ')}${data.pairs.length ? `; ${data.pairs.length} given pairs` : ''})`
      : '',
    classifiers.size
      ? `${classifiers.size} classification task(s)${classTasks.length ? ` (n-gram branch, and the encoder's pooled head for ${classTasks.length} single-label)` : ''}`
      : '',
  ]
    .filter(Boolean)
    .join(' + ');
  log(
    'info',
    `training ${trainingType}${trainingType === 'lora' ? ` (rank ${rank}, alpha ${alpha})` : ''} on ${req.train.length} rows per epoch (${perEpoch} steps: rows, text chunks and each classifier's pass) for ${hp.nrEpochs} epochs: ${what}; ${trained.toLocaleString('en-US')} trained parameters (${share}% of full)`,
  );
  if (continuing) log('info', `resuming from epoch ${startEpoch}`);

  let step = startEpoch * perEpoch;
  const eta = new EtaEstimator(totalSteps, perEpoch, step, Date.now());
  // Steps count the encoder's texts and chunks and each classifier's pass; throughput is reported in rows.
  const rowsPerStep = req.train.length / Math.max(1, perEpoch);
  let lastReport = 0;
  let loss = 0;
  let latest: Metrics | undefined;
  const report = (epoch: number, force = false) => {
    const now = Date.now();
    eta.observe(step, now);
    if (!force && now - lastReport < 500) return;
    lastReport = now;
    const msPerStep = eta.trainingMsPerStep(step, now);
    req.onProgress?.({
      step,
      totalSteps,
      epoch,
      loss: Number(loss.toFixed(5)),
      learningRate: Number((encoder?.learningRate() ?? hp.learningRate).toPrecision(4)),
      examplesPerSecond: msPerStep ? Math.round((1000 * rowsPerStep) / msPerStep) : 0,
      etaSeconds: eta.etaSeconds(step, now),
      ...(latest ? { metrics: latest } : {}),
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
    // A running job shows its latest held-out figures; after the last epoch they are the final evaluation below.
    if (req.heldout.length && epoch < hp.nrEpochs) {
      const t0 = Date.now();
      const m = evaluate({ encoder: encoder?.model().merged() ?? null, classifiers: liveClassifiers() }, req.heldout);
      latest = { ...m, loss: Number(loss.toFixed(5)) };
      log('info', `epoch ${epoch} held-out: ${headline(m)} (scored in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      // The ETA counts scoring (every epoch but the last has it); examples per second count training alone.
      eta.exclude(Date.now() - t0);
      report(epoch, true);
    }
    if (req.onCheckpoint) {
      const t0 = Date.now();
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
      eta.exclude(Date.now() - t0);
    }
    eta.epochEnded(step, Date.now());
  }

  const finalEncoder = encoder?.model() ?? null;
  const finalClassifiers = liveClassifiers();
  const merged = { encoder: finalEncoder?.merged() ?? null, classifiers: finalClassifiers };
  const calibration = calibrateTasks(merged, req.heldout, req.outOfScope);
  const metrics: Metrics = {
    ...evaluate(merged, req.heldout),
    loss: Number(loss.toFixed(5)),
    ...(Object.keys(calibration).length ? { calibration } : {}),
  };
  log('info', `held-out: ${headline(metrics)} on ${req.heldout.length} rows`);
  for (const [task, c] of Object.entries(calibration))
    log(
      'info',
      `${task}: temperature ${c.temperature}, ECE ${c.ece_before} → ${c.ece_after} on ${c.heldout_rows} held-out rows${
        c.reject_below !== undefined
          ? `; rejects as ${c.out_of_scope_label} below ${c.reject_below} (held-out in-scope accuracy ${c.heldout_in_scope_accuracy} from ${c.heldout_in_scope_accuracy_without_rejection}, out-of-scope recall ${c.heldout_out_of_scope_recall} on ${c.heldout_out_of_scope_rows} rows)`
          : ''
      }`,
    );
  const { bytes, manifest } = buildBundle(req.baseModel, trainingType, hp, finalEncoder, finalClassifiers, metrics, {
    trainedShare: share,
    structures: data.structures,
    calibration,
  });
  return { bundle: bytes, manifest, metrics };
}
