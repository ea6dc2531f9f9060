/**
 * The engine thread's entry point: runs packages/ml (through mlEngine) for
 * the main thread, one message at a time, and answers with logs, progress,
 * checkpoints (acknowledged once stored) and the result.
 */
import { parentPort } from 'node:worker_threads';
import { AppError } from '@whetstone/errors';
import { mlEngine } from './ml-engine';
import type { CrossError, FromEngine, ToEngine } from './engine-protocol';

const port = parentPort;
if (!port) throw new Error('engine-thread must run as a worker thread');

const running = new Map<number, AbortController>();
const stored = new Map<string, { resolve(): void; reject(err: Error): void }>();
let nextSeq = 0;

const send = (message: FromEngine) => port.postMessage(message);

function crossError(err: unknown): CrossError {
  if (err instanceof AppError) return { app: err.toJSON() };
  return err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) };
}

async function run(message: Extract<ToEngine, { type: 'train' | 'evaluate' }>): Promise<void> {
  const { id } = message;
  try {
    if (message.type === 'evaluate') {
      send({ type: 'done', id, value: await mlEngine.evaluate(message.bundle, message.rows, message.baseModel) });
      return;
    }
    const controller = new AbortController();
    running.set(id, controller);
    const value = await mlEngine.train(message.input, {
      ...(message.resumeFrom ? { resumeFrom: message.resumeFrom } : {}),
      signal: controller.signal,
      onLog: (level, text) => send({ type: 'log', id, level, message: text }),
      onProgress: (progress) => send({ type: 'progress', id, progress }),
      onCheckpoint: (checkpoint) =>
        new Promise<void>((resolve, reject) => {
          const seq = ++nextSeq;
          stored.set(`${id}/${seq}`, { resolve, reject });
          send({ type: 'checkpoint', id, seq, checkpoint });
        }),
    });
    send({ type: 'done', id, value });
  } catch (err) {
    send({ type: 'failed', id, error: crossError(err) });
  } finally {
    running.delete(id);
  }
}

port.on('message', (message: ToEngine) => {
  if (message.type === 'abort') running.get(message.id)?.abort();
  else if (message.type === 'checkpoint-stored') {
    const waiter = stored.get(`${message.id}/${message.seq}`);
    stored.delete(`${message.id}/${message.seq}`);
    if (message.error) waiter?.reject(AppError.fromJSON(message.error));
    else waiter?.resolve();
  } else void run(message);
});
