import type { Kafka, KafkaMessage } from 'kafkajs';
import { createLogger } from '@whetstone/telemetry';
import { KafkaTransport, type EventEnvelope } from '../src';

const logger = createLogger({ service: 'kafka-batch-test', level: 'silent' });

/**
 * The kafkajs wiring without a broker (none installs here): a stand-in client
 * records what the transport asks `consumer.run` to do, and the test plays
 * the part of kafkajs calling it. The broker round trip is kafka.test.ts's job.
 */
function fakeKafka() {
  const runs: Record<string, unknown>[] = [];
  const consumer = {
    connect: async () => undefined,
    subscribe: async () => undefined,
    run: async (config: Record<string, unknown>) => void runs.push(config),
    disconnect: async () => undefined,
  };
  const kafka = { consumer: () => consumer, producer: () => ({}) } as unknown as Pick<Kafka, 'consumer' | 'producer'>;
  return { kafka, runs };
}

const message = (offset: string, id: string): KafkaMessage =>
  ({
    key: Buffer.from('team-1'),
    value: Buffer.from([1, 2, 3]),
    timestamp: '1764000000000',
    offset,
    attributes: 0,
    headers: { 'whetstone-id': Buffer.from(id), 'whetstone-type': Buffer.from('test.Usage'), traceparent: 'tp' },
  }) as KafkaMessage;

type EachBatch = (payload: {
  batch: { topic: string; messages: KafkaMessage[]; lastOffset(): string };
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
}) => Promise<void>;

describe('KafkaTransport batch consumption (eachBatch, no broker)', () => {
  it('when a consumer takes batches, then each fetched batch reaches it whole, as envelopes, and only then is its offset resolved', async () => {
    const { kafka, runs } = fakeKafka();
    const transport = new KafkaTransport([], 'test', kafka);
    const batches: EventEnvelope[][] = [];
    await transport.subscribe({
      group: 'g',
      topics: ['billing.usage.v1'],
      logger,
      handleBatch: async (b) => void batches.push(b),
    });
    expect(Object.keys(runs[0]!)).toEqual(['eachBatch']);

    const resolved: string[] = [];
    await (runs[0]!.eachBatch as EachBatch)({
      batch: { topic: 'billing.usage.v1', messages: [message('41', 'a'), message('42', 'b')], lastOffset: () => '42' },
      resolveOffset: (o) => void resolved.push(o),
      heartbeat: async () => undefined,
    });
    expect(batches).toHaveLength(1);
    expect(batches[0]).toEqual([
      expect.objectContaining({
        id: 'a',
        type: 'test.Usage',
        key: 'team-1',
        topic: 'billing.usage.v1',
        headers: { traceparent: 'tp' },
      }),
      expect.objectContaining({ id: 'b', payload: new Uint8Array([1, 2, 3]), occurredAt: new Date(1764000000000) }),
    ]);
    expect(resolved).toEqual(['42']);
  });

  it('when the batch handler fails, then no offset is resolved and the error reaches kafkajs, which redelivers the batch', async () => {
    const { kafka, runs } = fakeKafka();
    const transport = new KafkaTransport([], 'test', kafka);
    await transport.subscribe({
      group: 'g',
      topics: ['billing.usage.v1'],
      logger,
      handleBatch: async () => {
        throw new Error('database down');
      },
    });
    const resolved: string[] = [];
    await expect(
      (runs[0]!.eachBatch as EachBatch)({
        batch: { topic: 'billing.usage.v1', messages: [message('7', 'c')], lastOffset: () => '7' },
        resolveOffset: (o) => void resolved.push(o),
        heartbeat: async () => undefined,
      }),
    ).rejects.toThrow('database down');
    expect(resolved).toEqual([]);
  });

  it('when a consumer takes events one by one, then the transport runs eachMessage', async () => {
    const { kafka, runs } = fakeKafka();
    const seen: EventEnvelope[] = [];
    await new KafkaTransport([], 'test', kafka).subscribe({
      group: 'g',
      topics: ['keys.v1'],
      logger,
      handler: async (e) => void seen.push(e),
    });
    await (runs[0]!.eachMessage as (p: { topic: string; message: KafkaMessage }) => Promise<void>)({
      topic: 'keys.v1',
      message: message('1', 'd'),
    });
    expect(seen.map((e) => e.id)).toEqual(['d']);
  });
});
