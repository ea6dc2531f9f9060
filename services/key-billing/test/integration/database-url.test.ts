import { createRequire } from 'node:module';
import { Client } from 'pg';
import { createTestSchema, type TestSchema } from '@whetstone/testing';
import { poolConfigFor, schemaOf, withSchema } from '../../../../tools/prisma/connection';

// node-postgres' own reading of a connection string, the reference poolConfigFor's TLS settings must match.
const { parse } = createRequire(require.resolve('pg'))('pg-connection-string') as {
  parse: (url: string) => { ssl?: unknown };
};

describe('tools/prisma/connection: database URLs for managed Postgres', () => {
  it('when a server URL already has parameters, then withSchema merges the schema and keeps them', () => {
    const url = withSchema(
      'postgresql://u:p%40ss@db.example.com:6543/app?sslmode=verify-full&application_name=x',
      'key_billing',
    );
    const parsed = new URL(url);
    expect(parsed.searchParams.get('sslmode')).toBe('verify-full');
    expect(parsed.searchParams.get('application_name')).toBe('x');
    expect(schemaOf(url)).toBe('key_billing');
    expect(schemaOf(withSchema(url, 'dataset'))).toBe('dataset');
    expect(poolConfigFor(url)).toMatchObject({ host: 'db.example.com', port: 6543, user: 'u', password: 'p@ss' });
  });

  it.each([
    'postgresql://u@db/app?schema=s',
    'postgresql://u@db/app?schema=s&sslmode=disable',
    'postgresql://u@db/app?schema=s&sslmode=require',
    'postgresql://u@db/app?schema=s&sslmode=verify-full',
    'postgresql://u@db/app?schema=s&sslmode=no-verify',
  ])('when the URL is %s, then the pool gets the TLS settings node-postgres would', (url) => {
    const ours = poolConfigFor(url);
    expect(ours.ssl).toEqual(parse(url).ssl);
    expect(ours.options).toBe('-c search_path="s"');
  });

  describe('against the local Postgres (which has TLS off)', () => {
    let schema: TestSchema;
    beforeAll(async () => {
      schema = await createTestSchema('kb_dburl');
    });
    afterAll(() => schema.drop());

    it('when sslmode=require, then the connection is refused instead of falling back to plain text', async () => {
      const client = new Client(poolConfigFor(`${withSchema(schema.serverUrl, schema.name)}&sslmode=require`));
      client.on('error', () => undefined);
      await expect(client.connect()).rejects.toThrow(/does not support SSL/i);
    });

    it('when sslmode=disable, then it connects in plain text with the schema as its search_path', async () => {
      const client = new Client(poolConfigFor(`${withSchema(schema.serverUrl, schema.name)}&sslmode=disable`));
      await client.connect();
      try {
        const { rows } = await client.query<{ path: string; ssl: boolean }>(
          'SELECT current_setting($1) AS path, COALESCE((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS ssl',
          ['search_path'],
        );
        expect(rows[0]).toEqual({ path: `"${schema.name}"`, ssl: false });
      } finally {
        await client.end();
      }
    });
  });
});
