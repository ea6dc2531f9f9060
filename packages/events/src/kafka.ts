import { Kafka, type Consumer, type KafkaMessage, type Producer } from 'kafkajs';
import { inConsumerSpan, type EventEnvelope } from './envelope';
import type { EventTransport, SubscribeOptions, Subscription } from './transport';

/**
 * The Kubernetes transport: one Kafka topic per event topic, message key =
 * aggregate id, envelope fields in headers. Kept thin on purpose; its tests
 * run only when KAFKA_BROKERS is set.
 */
export class KafkaTransport implements EventTransport {
  private readonly kafka: Kafka;
  private producer: Producer | undefined;
  private readonly consumers = new Set<Consumer>();

  /** `kafka` is for tests that stand in for the client; production passes brokers only. */
  constructor(brokers: string[], clientId: string, kafka?: Pick<Kafka, 'producer' | 'consumer'>) {
    this.kafka = (kafka ?? new Kafka({ clientId, brokers })) as Kafka;
  }

  async publish(events: EventEnvelope[]): Promise<void> {
    if (events.length === 0) return;
    if (!this.producer) {
      this.producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await this.producer.connect();
    }
    const byTopic = new Map<string, EventEnvelope[]>();
    for (const e of events) byTopic.set(e.topic, [...(byTopic.get(e.topic) ?? []), e]);
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
    const consumer = this.kafka.consumer({ groupId: options.group });
    this.consumers.add(consumer);
    await consumer.connect();
    for (const topic of options.topics) await consumer.subscribe({ topic, fromBeginning: !options.fromLatest });
    const consumerOf = { system: 'kafka', group: options.group };
    const batch = options.handleBatch;
    if (batch) {
      // One partition's fetched batch per call; kafkajs commits the offsets only after it resolves.
      await consumer.run({
        eachBatch: async ({ batch: fetched, resolveOffset, heartbeat }) => {
          if (fetched.messages.length === 0) return;
          const events = fetched.messages.map((m) => envelopeOf(fetched.topic, m));
          await inConsumerSpan(consumerOf, events, () => batch(events));
          resolveOffset(fetched.lastOffset());
          await heartbeat();
        },
      });
    } else {
      const handler = options.handler!;
      await consumer.run({
        eachMessage: ({ topic, message }) => {
          const event = envelopeOf(topic, message);
          return inConsumerSpan(consumerOf, [event], () => handler(event));
        },
      });
    }
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
