import { createLogger } from '@whetstone/telemetry';
import { eventually } from '@whetstone/testing';
import { KafkaTransport, type EventEnvelope } from '../src';

const brokers = process.env.KAFKA_BROKERS?.split(',').filter(Boolean) ?? [];
// No Kafka broker is installable on this machine kind; these run wherever KAFKA_BROKERS is set.
const describeKafka = brokers.length > 0 ? describe : describe.skip;

describeKafka('kafkajs transport (only with KAFKA_BROKERS)', () => {
  it('when an event is published, then a consumer group receives it with its id, type and headers', async () => {
    const transport = new KafkaTransport(brokers, 'whetstone-test');
    const topic = `whetstone-test-${Date.now()}`;
    const seen: EventEnvelope[] = [];
    const sub = await transport.subscribe({
      group: `g-${Date.now()}`,
      topics: [topic],
      logger: createLogger({ service: 't', level: 'silent' }),
      handler: async (e) => void seen.push(e),
    });
    await transport.publish([
      {
        id: 'e1',
        topic,
        key: 'k',
        type: 'test.Event',
        payload: new Uint8Array([1, 2]),
        headers: { traceparent: 'x' },
        occurredAt: new Date(),
      },
    ]);
    await eventually(async () => seen.length === 1, 30_000);
    expect(seen[0]).toMatchObject({ id: 'e1', type: 'test.Event', key: 'k', headers: { traceparent: 'x' } });
    await sub.stop();
    await transport.close();
  }, 60_000);
});
