import { Pool } from 'pg';
import { testDatabaseUrl } from '@whetstone/testing';
import { createLogger } from '@whetstone/telemetry';
import { uuidv7 } from '@whetstone/errors';
import { inProcessIngestSignal } from '../../src/adapters/ingest-signal';
import { pgIngestSignal } from '../../src/adapters/pg-ingest-signal';

describe('read-your-writes across replicas', () => {
  const logger = createLogger({ service: 'history-test', level: 'silent' });
  const pools = [
    new Pool({ connectionString: testDatabaseUrl(), max: 2 }),
    new Pool({ connectionString: testDatabaseUrl(), max: 2 }),
  ];
  afterAll(() => Promise.all(pools.map((p) => p.end())));

  it('when one replica stores an id, then a read waiting on another replica is woken, not left to its deadline', async () => {
    const [a, b] = await Promise.all(pools.map((p) => pgIngestSignal(p, inProcessIngestSignal(), logger)));
    const id = uuidv7();
    const waiting = b!.expect(id);
    a!.ingested([id]);
    // The deadline is far beyond any test timeout: only the NOTIFY can make this resolve true in time.
    await expect(waiting.arrived(60_000)).resolves.toBe(true);
    waiting.cancel();
    await Promise.all([a!.stop(), b!.stop()]);
  }, 20_000);
});
