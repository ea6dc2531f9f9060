import type { ClassifierState } from '../classify/ngram-classifier';
import type { ClassTask, EncoderTrainState } from '../encoder';
import { b64, f32, packTensors, unpackTensors, type TensorRecord } from './tensor-pack';
import type { Hyperparameters, TrainingType } from './types';

/** A `weights/<step>` checkpoint's format, versioned with the bundle's; a state of another version cannot resume. */
const STATE_FORMAT = 'whetstone-train-state/3';

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

export function encodeState(s: TrainState): Uint8Array {
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

export function decodeState(bytes: Uint8Array): TrainState | null {
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
