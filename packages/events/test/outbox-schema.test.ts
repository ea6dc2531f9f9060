import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { applyMigrations, createTestSchema, type TestSchema } from '@whetstone/testing';
import { ensureOutbox } from '../src';

/**
 * The outbox table is declared once, by OUTBOX_DDL. Services that own their
 * schema with Prisma create it in their migrations, which are immutable history;
 * this test keeps every one of them identical to the declaration.
 */
const SERVICES = path.resolve(__dirname, '../../../services');
const producers = readdirSync(SERVICES).filter((name) => existsSync(path.join(SERVICES, name, 'prisma', 'migrations')));

async function outboxShape(pool: Pool, schema: string): Promise<string[]> {
  const columns = await pool.query<{ d: string }>(
    `SELECT column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS d
       FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'outbox_events' ORDER BY column_name`,
    [schema],
  );
  const indexes = await pool.query<{ d: string }>(
    `SELECT indexname || ' ' || regexp_replace(indexdef, '^.* USING ', '') AS d
       FROM pg_indexes WHERE schemaname = $1 AND tablename = 'outbox_events' ORDER BY indexname`,
    [schema],
  );
  return [...columns.rows.map((r) => r.d.replace(schema, '<schema>')), ...indexes.rows.map((r) => r.d)];
}

describe('the outbox table', () => {
  const schemas: TestSchema[] = [];
  let pool: Pool;
  let declared: string[];

  beforeAll(async () => {
    const canonical = await createTestSchema('outbox_decl');
    schemas.push(canonical);
    pool = new Pool({ connectionString: canonical.serverUrl, max: 2 });
    await ensureOutbox(pool, canonical.name);
    declared = await outboxShape(pool, canonical.name);
  });

  afterAll(async () => {
    await Promise.all(schemas.map((s) => s.drop()));
    await pool.end();
  });

  test('when the declaration is applied, then it has the columns the relay reads', () => {
    expect(declared.join('\n')).toMatch(/payload bytea NO/);
    expect(declared.join('\n')).toMatch(/published_at timestamp with time zone YES/);
  });

  test.each(producers)(
    'when %s migrations run, then its outbox_events is exactly the declared one',
    async (service) => {
      const schema = await createTestSchema(`outbox_${service}`);
      schemas.push(schema);
      await applyMigrations(schema.url, path.join(SERVICES, service, 'prisma', 'migrations'));
      expect(await outboxShape(pool, schema.name)).toEqual(declared);
    },
  );
});
