import type { Logger } from '@whetstone/telemetry';
import type { EventEnvelope } from './envelope';

export interface SubscribeOptions {
  /** Consumer group: each group receives every event once (at least once, in order per topic). */
  group: string;
  topics: string[];
  handler: (event: EventEnvelope) => Promise<void>;
  /**
   * Optional: a transport that reads in batches (the Postgres event log) hands
   * over a whole batch at once, so a consumer can apply it in one transaction.
   * It must be equivalent to calling `handler` on each event in order.
   */
  handleBatch?: (events: EventEnvelope[]) => Promise<void>;
  /**
   * Start at the current end of each topic instead of its beginning. For
   * ephemeral per-process groups, such as each gateway replica's cache invalidation.
   */
  fromLatest?: boolean;
  logger: Logger;
}

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
