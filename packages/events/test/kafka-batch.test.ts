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
  const created: string[][] = [];
  const joinListeners: (() => void)[] = [];
  const consumer = {
    events: { GROUP_JOIN: 'consumer.group_join' },
    on: (_event: string, listener: () => void) => {
      joinListeners.push(listener);
      return () => undefined;
    },
    connect: async () => undefined,
    subscribe: async () => undefined,
    run: async (config: Record<string, unknown>) => {
      runs.push(config);
      // kafkajs joins the group after run() returns.
      setImmediate(() => joinListeners.splice(0).forEach((l) => l()));
    },
    disconnect: async () => undefined,
  };
  const admin = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    createTopics: async ({ topics }: { topics: { topic: string }[] }) => void created.push(topics.map((t) => t.topic)),
  };
  const kafka = { consumer: () => consumer, producer: () => ({}), admin: () => admin } as unknown as Pick<
    Kafka,
    'consumer' | 'producer' | 'admin'
  >;
  return { kafka, runs, created };
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
  isRunning(): boolean;
  isStale(): boolean;
}) => Promise<void>;

const running = { isRunning: () => true, isStale: () => false };

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
    expect(runs[0]).toMatchObject({ eachBatchAutoResolve: false, eachBatch: expect.any(Function) });

    const resolved: string[] = [];
    await (runs[0]!.eachBatch as EachBatch)({
      batch: { topic: 'billing.usage.v1', messages: [message('41', 'a'), message('42', 'b')], lastOffset: () => '42' },
      resolveOffset: (o) => void resolved.push(o),
      heartbeat: async () => undefined,
      ...running,
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
        ...running,
      }),
    ).rejects.toThrow('database down');
    expect(resolved).toEqual([]);
  });

  it('when a consumer takes events one by one, then it still runs eachBatch, and each offset is resolved after its handler', async () => {
    const { kafka, runs } = fakeKafka();
    const seen: string[] = [];
    const resolved: string[] = [];
    await new KafkaTransport([], 'test', kafka).subscribe({
      group: 'g',
      topics: ['keys.v1'],
      logger,
      handler: async (e) => {
        expect(resolved).toHaveLength(seen.length);
        seen.push(e.id);
      },
    });
    expect(runs[0]).toMatchObject({ eachBatchAutoResolve: false });
    await (runs[0]!.eachBatch as EachBatch)({
      batch: { topic: 'keys.v1', messages: [message('1', 'd'), message('2', 'e')], lastOffset: () => '2' },
      resolveOffset: (o) => void resolved.push(o),
      heartbeat: async () => undefined,
      ...running,
    });
    expect(seen).toEqual(['d', 'e']);
    expect(resolved).toEqual(['1', '2']);
  });

  it('when a one-by-one handler fails mid-batch, then the offsets before it stay resolved and none after it, and the error reaches kafkajs', async () => {
    const { kafka, runs } = fakeKafka();
    const resolved: string[] = [];
    await new KafkaTransport([], 'test', kafka).subscribe({
      group: 'g',
      topics: ['keys.v1'],
      logger,
      handler: async (e) => {
        if (e.id === 'e') throw new Error('redis down');
      },
    });
    await expect(
      (runs[0]!.eachBatch as EachBatch)({
        batch: {
          topic: 'keys.v1',
          messages: [message('1', 'd'), message('2', 'e'), message('3', 'f')],
          lastOffset: () => '3',
        },
        resolveOffset: (o) => void resolved.push(o),
        heartbeat: async () => undefined,
        ...running,
      }),
    ).rejects.toThrow('redis down');
    expect(resolved).toEqual(['1']);
  });

  it("when the batch went stale (a rebalance), then the rest of it is left to the partition's new owner", async () => {
    const { kafka, runs } = fakeKafka();
    const seen: string[] = [];
    let stale = false;
    await new KafkaTransport([], 'test', kafka).subscribe({
      group: 'g',
      topics: ['keys.v1'],
      logger,
      handler: async (e) => {
        seen.push(e.id);
        stale = true;
      },
    });
    await (runs[0]!.eachBatch as EachBatch)({
      batch: { topic: 'keys.v1', messages: [message('1', 'd'), message('2', 'e')], lastOffset: () => '2' },
      resolveOffset: () => undefined,
      heartbeat: async () => undefined,
      isRunning: () => true,
      isStale: () => stale,
    });
    expect(seen).toEqual(['d']);
  });

  it('when topics are used, then each missing one is created once per process, before the first subscribe', async () => {
    const { kafka, created } = fakeKafka();
    const transport = new KafkaTransport([], 'test', kafka);
    const options = { group: 'g', logger, handler: async () => undefined };
    await transport.subscribe({ ...options, topics: ['keys.v1', 'datasets.v1'] });
    await transport.subscribe({ ...options, topics: ['keys.v1'] });
    expect(created).toEqual([['keys.v1', 'datasets.v1']]);
  });
});
