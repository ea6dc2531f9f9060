import { appendOutbox, type OutboxRow } from '@whetstone/events';
import type { Logger } from '@whetstone/telemetry';
import type { Pool } from 'pg';
import type { InferenceRecord, Metering } from '../application/ports';
import { meteringRows } from './metering-events';

export { INFERENCES_TOPIC, meteringRows, USAGE_TOPIC } from './metering-events';

/**
 * Writes metering events to the outbox off the response path: records are
 * queued in memory and flushed in one INSERT every few milliseconds (or at
 * `maxBatch`). A failed flush is retried with the next one; `close()` flushes
 * what is left. A process killed with SIGKILL loses at most one interval.
 */
export class OutboxMetering implements Metering {
  private queue: OutboxRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly schema: string,
    private readonly logger: Pick<Logger, 'warn' | 'error'>,
    private readonly options: { intervalMs?: number; maxBatch?: number; maxQueued?: number } = {},
  ) {}

  record(inference: InferenceRecord): void {
    this.queue.push(...meteringRows(inference));
    if (this.queue.length >= (this.options.maxBatch ?? 500)) void this.flush();
    else if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.options.intervalMs ?? 10);
  }

  /** Write everything queued now. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(async () => {
      while (this.queue.length) {
        const batch = this.queue.splice(0, 1000);
        try {
          await appendOutbox(this.pool, this.schema, batch);
        } catch (err) {
          // Keep the rows for the next flush; beyond the bound the oldest are dropped, loudly.
          this.queue.unshift(...batch);
          const max = this.options.maxQueued ?? 200_000;
          if (this.queue.length > max)
            this.logger.error(
              { dropped: this.queue.splice(0, this.queue.length - max).length },
              'metering queue overflow: dropped the oldest events',
            );
          this.logger.warn({ err, queued: this.queue.length }, 'metering flush failed; will retry');
          if (!this.timer) this.timer = setTimeout(() => void this.flush(), 500);
          return;
        }
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
