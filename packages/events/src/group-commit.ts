import { AppError, Reasons } from '@whetstone/errors';
import { Counter, Gauge, Histogram, type Logger, type Registry } from '@whetstone/telemetry';
import type { Pool } from 'pg';
import { appendOutbox, type OutboxRow } from './outbox-relay';

export interface GroupCommitOptions {
  pool: Pick<Pool, 'query'>;
  /** The producer's schema, holding `outbox_events`. */
  schema: string;
  logger: Pick<Logger, 'warn'>;
  /**
   * How long an idle writer waits after the first append before it commits, to
   * gather more. 0 (the default) commits at once; appends that arrive while a
   * commit runs go into the next one either way.
   */
  windowMs?: number;
  /** Most rows in one INSERT (default 1000). */
  maxBatchRows?: number;
  /** Rows queued for the next commit above which new appends wait for room (default 10,000). */
  maxQueuedRows?: number;
  /** Appends waiting for room above which new ones are refused at once (default 1,000). */
  maxWaiting?: number;
  /** How long an append waits for room before it is refused (default 2,000 ms). */
  maxWaitMs?: number;
  /** Where the metrics go, and their name prefix (e.g. `inference_router_metering`). */
  metrics?: { registry: Registry; prefix: string };
}

interface Pending {
  rows: OutboxRow[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Rejection of an append that was never queued: nothing was written, so the caller may retry. */
const overloaded = (why: string) =>
  new AppError('Unavailable', Reasons.OVERLOADED, `The service is busy (${why}); retry shortly.`, {
    retryAfterSeconds: 1,
  });

/**
 * Appends outbox rows durably with group commit: every append resolves once
 * its rows are committed, and the rows of concurrent appends share one INSERT
 * (one transaction, so one WAL flush). The writer commits as soon as it is
 * idle; what arrives while a commit runs goes into the next one. Nothing is
 * ever dropped: an append either resolves (durable) or rejects (not written).
 *
 * Back-pressure: past `maxQueuedRows` queued, appends wait in order for room;
 * past `maxWaiting` waiters, or after `maxWaitMs`, they are refused with a
 * retryable 503 (`OVERLOADED`, Retry-After 1).
 */
export class GroupCommitOutbox {
  private readonly queue: Pending[] = [];
  private queuedRows = 0;
  private readonly waiting: { pending: Pending; timer: NodeJS.Timeout }[] = [];
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly metrics: ReturnType<typeof groupCommitMetrics> | undefined;

  constructor(private readonly options: GroupCommitOptions) {
    this.metrics = options.metrics && groupCommitMetrics(options.metrics.registry, options.metrics.prefix);
  }

  /** Resolves when `rows` are committed; rejects if they were not (and then none of them were). */
  append(rows: OutboxRow[]): Promise<void> {
    if (this.closed) return Promise.reject(overloaded('shutting down'));
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const pending = { rows, resolve, reject };
      if (this.waiting.length === 0 && this.fits(rows.length)) this.enqueue(pending);
      else this.wait(pending);
    });
  }

  /** Refuse new appends and wait until everything queued or waiting is committed (or failed). */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      this.enqueue(w.pending);
    }
    while (this.running) await this.running;
  }

  private fits(rows: number): boolean {
    return this.queuedRows === 0 || this.queuedRows + rows <= (this.options.maxQueuedRows ?? 10_000);
  }

  private enqueue(pending: Pending): void {
    this.queue.push(pending);
    this.queuedRows += pending.rows.length;
    this.metrics?.queued.set(this.queuedRows);
    this.running ??= this.run();
  }

  private wait(pending: Pending): void {
    if (this.waiting.length >= (this.options.maxWaiting ?? 1_000)) {
      this.metrics?.rejected.inc();
      pending.reject(overloaded('metering queue full'));
      return;
    }
    this.metrics?.waits.inc();
    const entry = {
      pending,
      timer: setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(entry), 1);
        this.metrics?.rejected.inc();
        pending.reject(overloaded('metering queue full'));
      }, this.options.maxWaitMs ?? 2_000),
    };
    this.waiting.push(entry);
  }

  /** Let waiters in, in order, while their rows fit. */
  private admitWaiters(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.pending.rows.length)) {
      const { pending, timer } = this.waiting.shift()!;
      clearTimeout(timer);
      this.enqueue(pending);
    }
  }

  /** The single committer: one batch at a time until the queue is empty. */
  private async run(): Promise<void> {
    try {
      const window = this.options.windowMs ?? 0;
      await new Promise((resolve) => (window > 0 ? setTimeout(resolve, window) : setImmediate(resolve)));
      while (this.queue.length > 0) {
        const batch = this.takeBatch();
        this.admitWaiters();
        await this.commit(batch);
      }
    } finally {
      this.running = undefined;
    }
  }

  private takeBatch(): Pending[] {
    const max = this.options.maxBatchRows ?? 1_000;
    const batch: Pending[] = [];
    let rows = 0;
    while (this.queue.length > 0 && (batch.length === 0 || rows + this.queue[0]!.rows.length <= max)) {
      const next = this.queue.shift()!;
      batch.push(next);
      rows += next.rows.length;
    }
    this.queuedRows -= rows;
    this.metrics?.queued.set(this.queuedRows);
    return batch;
  }

  private async commit(batch: Pending[]): Promise<void> {
    const rows = batch.flatMap((p) => p.rows);
    const t0 = performance.now();
    try {
      await appendOutbox(this.options.pool, this.options.schema, rows);
    } catch (err) {
      this.metrics?.failures.inc();
      this.options.logger.warn({ err, rows: rows.length }, 'outbox group commit failed; its callers get 503');
      const failure = new AppError(
        'Unavailable',
        Reasons.DEPENDENCY_UNAVAILABLE,
        'Could not record the request; retry shortly.',
        {
          retryAfterSeconds: 1,
          cause: err,
        },
      );
      for (const p of batch) p.reject(failure);
      return;
    }
    this.metrics?.batchRows.observe(rows.length);
    this.metrics?.commitSeconds.observe((performance.now() - t0) / 1000);
    for (const p of batch) p.resolve();
  }
}

function groupCommitMetrics(registry: Registry, prefix: string) {
  const registers = [registry];
  return {
    queued: new Gauge({
      name: `${prefix}_queued_rows`,
      help: 'Outbox rows waiting for the next group commit',
      registers,
    }),
    batchRows: new Histogram({
      name: `${prefix}_commit_batch_rows`,
      help: 'Outbox rows per group commit (one INSERT, one transaction)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
      registers,
    }),
    commitSeconds: new Histogram({
      name: `${prefix}_commit_seconds`,
      help: 'Duration of one group commit',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    waits: new Counter({ name: `${prefix}_backpressure_waits_total`, help: 'Appends that waited for room', registers }),
    rejected: new Counter({
      name: `${prefix}_backpressure_rejections_total`,
      help: 'Appends refused with 503 because the queue stayed full',
      registers,
    }),
    failures: new Counter({
      name: `${prefix}_commit_failures_total`,
      help: 'Group commits that failed (their callers got 503; nothing was written)',
      registers,
    }),
  };
}
