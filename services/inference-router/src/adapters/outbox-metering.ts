import type { GroupCommitOutbox } from '@whetstone/events';
import type { InferenceRecord, Metering } from '../application/ports';
import { meteringRows } from './metering-events';

export { INFERENCES_TOPIC, meteringRows, USAGE_TOPIC } from './metering-events';

/**
 * Metering through the outbox with group commit: `record` resolves once the
 * call's UsageRecorded and InferenceCompleted rows are committed, sharing one
 * INSERT with whatever other calls queued meanwhile. Never drops: a full queue
 * makes callers wait, then refuses them with a retryable 503 (not metered).
 */
export class OutboxMetering implements Metering {
  constructor(private readonly outbox: Pick<GroupCommitOutbox, 'append' | 'close'>) {}

  record(inference: InferenceRecord): Promise<void> {
    return this.outbox.append(meteringRows(inference));
  }

  /** Commit what is queued and refuse new records (shutdown). */
  close(): Promise<void> {
    return this.outbox.close();
  }
}
