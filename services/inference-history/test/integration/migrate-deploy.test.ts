import path from 'node:path';
import { createTestSchema, shadowDatabasesLeftBy, withClient, type TestSchema } from '@whetstone/testing';
import { createMigration, runPrisma } from '../../../../tools/prisma/cli';

const SERVICE_DIR = path.resolve(__dirname, '../..');

describe('prisma migrate deploy through tools/prisma/cli.ts', () => {
  let schema: TestSchema;
  beforeAll(async () => {
    schema = await createTestSchema('hist_migrate');
  });
  afterAll(() => schema.drop());

  it('when deploy runs twice on a fresh schema, then every table lands in that schema and the second run applies nothing', async () => {
    const env = { ...process.env, DATABASE_URL: schema.url };
    const first = runPrisma(SERVICE_DIR, ['migrate', 'deploy'], env, true);
    expect(first.stderr + first.stdout).toMatch(/successfully applied/i);
    expect(first.status).toBe(0);

    const tables = await withClient(schema.serverUrl, (c) =>
      c.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema.name],
      ),
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['_prisma_migrations', 'inference_records', 'outbox_events']),
    );

    const second = runPrisma(SERVICE_DIR, ['migrate', 'deploy'], env, true);
    expect(second.status).toBe(0);
    expect(second.stdout + second.stderr).toMatch(/No pending migrations/i);
  }, 60_000);

  it('when the schema matches the migrations, then `migrate diff` (shadow database) writes nothing and leaves no shadow database behind', async () => {
    let created: unknown;
    const left = await shadowDatabasesLeftBy(
      schema.serverUrl,
      () => (created = createMigration(SERVICE_DIR, 'unused', { ...process.env, DATABASE_URL: schema.url })),
    );
    expect(created).toBeNull();
    expect(left).toEqual([]);
  }, 60_000);
});
