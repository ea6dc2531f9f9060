/**
 * Messages between the trainer's main thread and its engine thread. The
 * engine computes on its own thread so the main thread's heartbeats, log
 * flushes and stop checks never wait behind a long synchronous step (model
 * build, a checkpoint's serialisation, the final evaluation).
 */
import type { WireError } from '@whetstone/errors';
import type { Progress } from '../domain/progress';
import type { LogLevel, Row, TrainHooks, TrainingEngine } from '../application/ports';

export type TrainInput = Parameters<TrainingEngine['train']>[0];
export type Checkpoint = Parameters<TrainHooks['onCheckpoint']>[0];
export type TrainOutput = Awaited<ReturnType<TrainingEngine['train']>>;

/** Main thread → engine thread. */
export type ToEngine =
  | { type: 'train'; id: number; input: TrainInput; resumeFrom?: Uint8Array }
  | { type: 'evaluate'; id: number; bundle: Uint8Array; rows: Row[]; baseModel: string }
  | { type: 'abort'; id: number }
  | { type: 'checkpoint-stored'; id: number; seq: number; error?: WireError };

/** Engine thread → main thread. */
export type FromEngine =
  | { type: 'log'; id: number; level: LogLevel; message: string }
  | { type: 'progress'; id: number; progress: Progress }
  | { type: 'checkpoint'; id: number; seq: number; checkpoint: Checkpoint }
  | { type: 'done'; id: number; value: TrainOutput | Record<string, unknown> }
  | { type: 'failed'; id: number; error: CrossError };

/** An error as it crosses the thread boundary: an AppError keeps its type; anything else keeps its class name. */
export type CrossError = { app: WireError } | { name: string; message: string };
