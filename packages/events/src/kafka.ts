import { Kafka, type Consumer, type KafkaMessage, type Producer } from 'kafkajs';
import { inConsumerSpan, type EventEnvelope } from './envelope';
import type { EventTransport, SubscribeOptions, Subscription } from './transport';

/** How long subscribe waits for the consumer to join its group before giving up. */
const JOIN_TIMEOUT_MS = 60_000;

/**
 * The Kubernetes transport: one Kafka topic per event topic, message key = aggregate id, envelope fields in
 * headers. Every consumer runs `eachBatch`: a batch handler gets each fetched partition batch whole; a per-event
 * handler walks the batch, resolving each offset after its handler settles (a failure redelivers from that event,
 * nothing after it is skipped). Handlers are idempotent per event id, as on the Postgres log. Topics are created
 * (once per process, when missing) from the names in topics.ts before first use, so a broker with topic
 * auto-creation off works too. Its contract tests (kafka.test.ts) run against a real one-node broker.
 */
export class KafkaTransport implements EventTransport {
  private readonly kafka: Kafka;
  private producer: Producer | undefined;
  private readonly consumers = new Set<Consumer>();
  private readonly ensured = new Map<string, Promise<void>>();

  /** `kafka` is for tests that stand in for the client; production passes brokers only. */
  constructor(brokers: string[], clientId: string, kafka?: Pick<Kafka, 'producer' | 'consumer' | 'admin'>) {
    this.kafka = (kafka ?? new Kafka({ clientId, brokers })) as Kafka;
  }

  async publish(events: EventEnvelope[]): Promise<void> {
    if (events.length === 0) return;
    const byTopic = new Map<string, EventEnvelope[]>();
    for (const e of events) byTopic.set(e.topic, [...(byTopic.get(e.topic) ?? []), e]);
    await this.ensureTopics([...byTopic.keys()]);
    if (!this.producer) {
      this.producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await this.producer.connect();
    }
    await this.producer.sendBatch({
      topicMessages: [...byTopic].map(([topic, list]) => ({
        topic,
        messages: list.map((e) => ({
          key: e.key,
          value: Buffer.from(e.payload),
          timestamp: String(e.occurredAt.getTime()),
          headers: { ...e.headers, 'whetstone-id': e.id, 'whetstone-type': e.type },
        })),
      })),
    });
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    await this.ensureTopics(options.topics);
    // Where each partition ends now: a new group's "latest" is resolved at its first fetch, after the join, and an
    // event published in between would be skipped. Seeking to these offsets keeps "published after subscribe".
    const ends = options.fromLatest ? await this.endOffsets(options.topics) : [];
    const consumer = this.kafka.consumer({ groupId: options.group });
    this.consumers.add(consumer);
    await consumer.connect();
    for (const topic of options.topics) await consumer.subscribe({ topic, fromBeginning: !options.fromLatest });
    const consumerOf = { system: 'kafka', group: options.group };
    const { handleBatch, handler, logger } = options;
    // Resolves when the consumer is in its group, so `fromLatest` means "published after subscribe returned".
    const joined = new Promise<void>((resolve) => {
      const off = consumer.on(consumer.events.GROUP_JOIN, () => {
        off();
        resolve();
      });
    });
    await consumer.run({
      // Offsets move only where a handler settled.
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch: fetched, resolveOffset, heartbeat, isRunning, isStale }) => {
        if (fetched.messages.length === 0) return;
        try {
          if (handleBatch) {
            const events = fetched.messages.map((m) => envelopeOf(fetched.topic, m));
            await inConsumerSpan(consumerOf, events, () => handleBatch(events));
            resolveOffset(fetched.lastOffset());
            await heartbeat();
            return;
          }
          for (const message of fetched.messages) {
            // A rebalance took the partition away: its new owner goes on from the last resolved offset.
            if (!isRunning() || isStale()) return;
            const event = envelopeOf(fetched.topic, message);
            await inConsumerSpan(consumerOf, [event], () => handler!(event));
            resolveOffset(message.offset);
            await heartbeat();
          }
        } catch (err) {
          // kafkajs seeks back to the first unresolved offset and delivers from there again.
          logger.warn({ err, group: options.group, topic: fetched.topic }, 'event handler failed; will redeliver');
          throw err;
        }
      },
    });
    for (const end of ends) consumer.seek(end);
    await withTimeout(joined, JOIN_TIMEOUT_MS, `consumer group ${options.group} did not join within 60 s`);
    return {
      stop: async () => {
        await consumer.disconnect();
        this.consumers.delete(consumer);
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.disconnect()));
    await this.producer?.disconnect();
  }

  /** The next offset of every partition of `topics` (the high watermark). */
  private async endOffsets(topics: string[]): Promise<{ topic: string; partition: number; offset: string }[]> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const perTopic = await Promise.all(
        topics.map(async (topic) =>
          (await admin.fetchTopicOffsets(topic)).map(({ partition, high }) => ({ topic, partition, offset: high })),
        ),
      );
      return perTopic.flat();
    } finally {
      await admin.disconnect();
    }
  }

  /** Creates the topics that do not exist yet (the broker's partition and replica defaults), once per process. */
  private async ensureTopics(topics: string[]): Promise<void> {
    const missing = topics.filter((t) => !this.ensured.has(t));
    if (missing.length > 0) {
      const created = (async () => {
        const admin = this.kafka.admin();
        await admin.connect();
        try {
          await admin.createTopics({ topics: missing.map((topic) => ({ topic })), waitForLeaders: true });
        } finally {
          await admin.disconnect();
        }
      })();
      for (const t of missing) this.ensured.set(t, created);
      // A failed attempt is forgotten, so the next call tries again.
      created.catch(() => missing.forEach((t) => this.ensured.delete(t)));
    }
    await Promise.all(topics.map((t) => this.ensured.get(t)));
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A Kafka message back to the envelope `publish` sent: id and type ride in headers. */
export function envelopeOf(topic: string, message: KafkaMessage): EventEnvelope {
  const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v ?? '')]));
  const { 'whetstone-id': id = '', 'whetstone-type': type = '', ...rest } = headers;
  return {
    id,
    type,
    topic,
    key: message.key?.toString() ?? '',
    payload: new Uint8Array(message.value ?? Buffer.alloc(0)),
    headers: rest,
    occurredAt: new Date(Number(message.timestamp)),
  };
}
