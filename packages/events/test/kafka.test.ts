import { KafkaTransport } from '../src';
import { describeTransportContract } from './transport.contract';

const brokers = process.env.KAFKA_BROKERS?.split(',').filter(Boolean) ?? [];

// The same contract events.test.ts holds the Postgres log to, against a real broker. No Kafka broker installs on
// this machine kind, so here it is skipped; set KAFKA_BROKERS (e.g. the Tilt dev cluster's Kafka, port-forwarded)
// to run it. Without a broker, kafka-batch.test.ts checks the eachBatch wiring against a stand-in client.
if (brokers.length > 0) {
  describeTransportContract(
    `Kafka at ${brokers.join(',')}`,
    async () => {
      const transport = new KafkaTransport(brokers, `whetstone-contract-${process.pid}`);
      return { transport, close: () => transport.close() };
    },
    45_000,
  );
} else {
  describe.skip('EventTransport contract: Kafka (set KAFKA_BROKERS to run)', () => {
    it('needs a broker', () => undefined);
  });
}
