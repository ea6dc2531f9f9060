import path from 'node:path';
import { createTestSchema, migrateDeployWithCli, type TestSchema } from '@whetstone/testing';

/** The Prisma CLI applies every migration as written (packages/testing, `migrateDeployWithCli`). */
describe('prisma migrate deploy through tools/prisma/cli.ts', () => {
  let schema: TestSchema;
  beforeAll(async () => {
    schema = await createTestSchema('router_migrate');
  });
  afterAll(() => schema.drop());

  it('when deploy runs on a fresh schema, then every migration applies and the tables land in that schema', async () => {
    const deployed = await migrateDeployWithCli(path.resolve(__dirname, '../..'), schema);
    expect(deployed.output).toMatch(/successfully applied/i);
    expect(deployed.status).toBe(0);
    expect(deployed.tables).toContain('chat_batch_requests');
  });
});
