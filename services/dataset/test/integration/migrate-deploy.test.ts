import path from 'node:path';
import { createTestSchema, withClient, type TestSchema } from '@whetstone/testing';
import { runPrisma } from '../../../../tools/prisma/cli';

const SERVICE_DIR = path.resolve(__dirname, '../..');

/**
 * The Prisma CLI applies every migration as written (the product's own migrator runs each script whole; the CLI
 * splits scripts into statements, so a semicolon inside a comment once broke it for a developer).
 */
describe('prisma migrate deploy through tools/prisma/cli.ts', () => {
  let schema: TestSchema;
  beforeAll(async () => {
    schema = await createTestSchema('dataset_migrate');
  });
  afterAll(() => schema.drop());

  it('when deploy runs on a fresh schema, then every migration applies and the tables land in that schema', async () => {
    const run = runPrisma(SERVICE_DIR, ['migrate', 'deploy'], { ...process.env, DATABASE_URL: schema.url }, true);
    expect(run.stderr + run.stdout).toMatch(/successfully applied/i);
    expect(run.status).toBe(0);
    const tables = await withClient(schema.serverUrl, (c) =>
      c.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [
        schema.name,
      ]),
    );
    expect(tables.rows.map((r) => r.table_name)).toContain('files');
  });
});
