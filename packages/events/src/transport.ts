import type { Logger } from '@whetstone/telemetry';
import type { EventEnvelope } from './envelope';

interface SubscribeCommon {
  /** Consumer group: each group receives every event once (at least once, in order per topic). */
  group: string;
  topics: string[];
  /**
   * Start at the current end of each topic instead of its beginning. For
   * ephemeral per-process groups, such as each gateway replica's cache invalidation.
   */
  fromLatest?: boolean;
  logger: Logger;
}

/** One event at a time: the offset moves past each event its handler settled. */
export type EventHandler = (event: EventEnvelope) => Promise<void>;

/**
 * A whole batch at once (the Postgres log's rows, a Kafka `eachBatch` of one
 * partition), so a consumer can apply it in one transaction. The offset moves
 * past the batch only when the handler resolves; if it throws, the whole batch
 * is delivered again, so it must be idempotent per event (and may meet the
 * same event twice within a batch after a producer's relay re-published it).
 */
export type BatchHandler = (events: EventEnvelope[]) => Promise<void>;

/**
 * How a consumer takes its events: `handler` one by one, or `handleBatch` in
 * batches. When both are given, every transport delivers batches.
 */
export type SubscribeOptions = SubscribeCommon &
  ({ handler: EventHandler; handleBatch?: BatchHandler } | { handleBatch: BatchHandler; handler?: EventHandler });

export interface Subscription {
  /** Stop delivering; waits for the handler in flight. */
  stop(): Promise<void>;
}

/** The port every producer relay and consumer speaks; Postgres log or Kafka behind it. */
export interface EventTransport {
  publish(events: EventEnvelope[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  close(): Promise<void>;
}
