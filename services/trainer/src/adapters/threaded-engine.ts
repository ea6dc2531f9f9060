import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { AppError } from '@whetstone/errors';
import type { Logger, TrainHooks, TrainingEngine } from '../application/ports';
import type { CrossError, FromEngine, ToEngine, TrainOutput } from './engine-protocol';

/** After a stop, the engine has this long to notice it (it checks once per batch) before its thread is ended. */
export const ABORT_GRACE_MS = 5_000;

interface Call {
  hooks?: TrainHooks;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

function fromCross(error: CrossError): Error {
  if ('app' in error) return AppError.fromJSON(error.app);
  const err = error.name === 'SyntaxError' ? new SyntaxError(error.message) : new Error(error.message);
  err.name = error.name;
  return err;
}

/**
 * The ML engine on its own thread, so that this thread stays free for
 * heartbeats, log flushes and stop checks however long a synchronous step of
 * the engine takes, even on a saturated machine. One thread is kept for the
 * trainer's life (the engine's assets stay loaded); it is replaced if it
 * dies or must be ended after a stop it did not notice in time.
 */
export class ThreadedEngine implements TrainingEngine {
  private worker: Worker | null = null;
  private readonly calls = new Map<number, Call>();
  private nextId = 0;

  constructor(private readonly logger?: Logger) {}

  train(input: Parameters<TrainingEngine['train']>[0], hooks: TrainHooks): Promise<TrainOutput> {
    const { resumeFrom } = hooks;
    return this.call<TrainOutput>((id) => ({ type: 'train', id, input, ...(resumeFrom ? { resumeFrom } : {}) }), hooks);
  }

  evaluate(bundle: Uint8Array, rows: Record<string, unknown>[], baseModel: string): Promise<Record<string, unknown>> {
    return this.call((id) => ({ type: 'evaluate', id, bundle, rows, baseModel }));
  }

  /** Ends the engine thread; calls in flight fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private call<T>(message: (id: number) => ToEngine, hooks?: TrainHooks): Promise<T> {
    const id = ++this.nextId;
    const worker = this.thread();
    return new Promise<T>((resolve, reject) => {
      this.calls.set(id, { ...(hooks ? { hooks } : {}), resolve: resolve as (v: unknown) => void, reject });
      if (hooks?.signal.aborted) return this.abort(id, worker);
      hooks?.signal.addEventListener('abort', () => this.abort(id, worker), { once: true });
      worker.postMessage(message(id));
    });
  }

  private abort(id: number, worker: Worker): void {
    worker.postMessage({ type: 'abort', id } satisfies ToEngine);
    setTimeout(() => {
      if (!this.calls.has(id) || this.worker !== worker) return;
      this.logger?.warn({ graceMs: ABORT_GRACE_MS }, 'the engine did not stop in time; ending its thread');
      void this.close();
    }, ABORT_GRACE_MS).unref();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    // Under tsx (development, tests) the thread loads TypeScript the same way; built code runs as is.
    const ext = path.extname(__filename);
    const worker = new Worker(path.join(__dirname, `engine-thread${ext}`), {
      execArgv: ext === '.ts' ? ['--require', 'tsx/cjs'] : [],
    });
    worker.on('message', (m: FromEngine) => this.onMessage(worker, m));
    worker.on('error', (err) => this.logger?.error({ err }, 'the engine thread failed'));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      const lost = [...this.calls.values()];
      this.calls.clear();
      for (const c of lost)
        c.reject(
          c.hooks?.signal.aborted
            ? new Error('training cancelled')
            : new Error(`the engine thread exited (code ${code})`),
        );
    });
    this.worker = worker;
    return worker;
  }

  private onMessage(worker: Worker, m: FromEngine): void {
    const call = this.calls.get(m.id);
    if (!call) return;
    switch (m.type) {
      case 'log':
        return call.hooks?.onLog(m.level, m.message);
      case 'progress':
        return call.hooks?.onProgress(m.progress);
      case 'checkpoint': {
        const stored = (error?: unknown) =>
          worker.postMessage({
            type: 'checkpoint-stored',
            id: m.id,
            seq: m.seq,
            ...(error === undefined ? {} : { error: toWire(error) }),
          } satisfies ToEngine);
        void Promise.resolve()
          .then(() => call.hooks?.onCheckpoint(m.checkpoint))
          .then(() => stored(), stored);
        return;
      }
      case 'done':
        this.calls.delete(m.id);
        return call.resolve(m.value);
      case 'failed':
        this.calls.delete(m.id);
        return call.reject(fromCross(m.error));
    }
  }
}

function toWire(error: unknown) {
  return (
    error instanceof AppError ? error : new AppError('Internal', 'INTERNAL', 'storing the checkpoint failed')
  ).toJSON();
}
