import { startKafkaBroker, type KafkaBroker } from '@whetstone/testing/src/kafka-broker';
import { KafkaTransport } from '../src';
import { describeTransportContract } from './transport.contract';

// The same contract events.test.ts holds the Postgres log to, against a real broker: a one-node KRaft Kafka
// started from Maven Central's jars (tools/kafka), or the broker KAFKA_BROKERS names (e.g. the Tilt dev
// cluster's Kafka, port-forwarded). kafka-batch.test.ts checks the eachBatch wiring against a stand-in client.
let broker: KafkaBroker | undefined;
const configured = process.env.KAFKA_BROKERS?.split(',').filter(Boolean) ?? [];

afterAll(async () => {
  await broker?.stop();
});

describeTransportContract(
  configured.length > 0 ? `Kafka at ${configured.join(',')}` : 'Kafka (one-node KRaft broker)',
  async () => {
    let brokers = configured;
    if (brokers.length === 0) {
      broker = await startKafkaBroker();
      brokers = [broker.brokers];
    }
    const transport = new KafkaTransport(brokers, `whetstone-contract-${process.pid}`);
    return { transport, close: () => transport.close() };
  },
  45_000,
);
