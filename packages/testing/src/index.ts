import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { runPrisma } from '../../../tools/prisma/cli';
import { deployMigrations } from '../../../tools/prisma/migrate';

/** The Postgres server tests use: TEST_DATABASE_URL, else this machine's local server. */
export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
}

/** The Redis server tests use. */
export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

export interface TestSchema {
  /** The schema's name, unique to this test run. */
  name: string;
  /** A connection string whose `schema` parameter selects it (Prisma convention). */
  url: string;
  /** The server URL without a schema parameter. */
  serverUrl: string;
  drop(): Promise<void>;
}

/** Create a fresh, uniquely named Postgres schema so each test owns its rows. */
export async function createTestSchema(prefix: string): Promise<TestSchema> {
  const serverUrl = testDatabaseUrl();
  const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_t${randomBytes(4).toString('hex')}`;
  await withClient(serverUrl, (c) => c.query(`CREATE SCHEMA "${name}"`));
  const url = new URL(serverUrl);
  url.searchParams.set('schema', name);
  return {
    name,
    url: url.toString(),
    serverUrl,
    drop: () => withClient(serverUrl, (c) => c.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)).then(() => undefined),
  };
}

export async function withClient<T>(connectionString: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Poll `probe` until it returns a truthy value or the deadline passes. */
export async function eventually<T>(
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Prisma shadow databases that `work` created and left behind. Other test processes on the same server create and
 * drop their own shadows meanwhile, so a name counts only if it appeared during `work` and is still there after
 * `settleMs` (another run's shadow lives for the seconds its `migrate diff` takes; a leaked one stays).
 */
export async function shadowDatabasesLeftBy(
  serverUrl: string,
  work: () => unknown,
  settleMs = 15_000,
): Promise<string[]> {
  const names = () =>
    withClient(serverUrl, (c) =>
      c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'prisma_shadow_%'"),
    ).then((r) => new Set(r.rows.map((row) => row.datname)));
  const before = await names();
  await work();
  const deadline = Date.now() + settleMs;
  for (;;) {
    const left = [...(await names())].filter((n) => !before.has(n));
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Apply a Prisma migrations folder (`<dir>/<name>/migration.sql`, in name order) to the schema named by `url`'s
 * `schema` parameter, recorded in `_prisma_migrations` as `prisma migrate deploy` records it: the runner `pnpm start`
 * uses (tools/prisma/migrate.ts). One test per service still runs the real CLI.
 */
export async function applyMigrations(url: string, migrationsDir: string): Promise<void> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'public';
  parsed.searchParams.delete('schema');
  await deployMigrations(parsed.toString(), [{ schema, migrationsDir }]);
}
/**
 * `prisma migrate deploy` through the real CLI (tools/prisma/cli.ts) on a fresh schema: what it printed, its exit
 * status, and the tables it left in that schema. The CLI splits scripts into statements (a semicolon inside a comment
 * once broke it), where the product's own runner sends each script whole; this checks a service's migrations both ways.
 */
export async function migrateDeployWithCli(
  serviceDir: string,
  schema: TestSchema,
): Promise<{ output: string; status: number; tables: string[] }> {
  const run = runPrisma(serviceDir, ['migrate', 'deploy'], { ...process.env, DATABASE_URL: schema.url }, true);
  const tables = await withClient(schema.serverUrl, (c) =>
    c.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [
      schema.name,
    ]),
  );
  return { output: run.stderr + run.stdout, status: run.status, tables: tables.rows.map((r) => r.table_name) };
}
export * from './datasets';

/** A fresh schema with a service's migrations applied, and a client on it, closed together. */
export interface MigratedDatabase<C> {
  schema: TestSchema;
  prisma: C;
  close(): Promise<void>;
}

/**
 * Creates a uniquely named schema, applies `migrationsDir` to it and opens a
 * client with `connect` (a service's own Prisma client factory).
 */
export async function createMigratedDatabase<C extends { $disconnect(): Promise<void> }>(
  prefix: string,
  migrationsDir: string,
  connect: (url: string) => C,
): Promise<MigratedDatabase<C>> {
  const schema = await createTestSchema(prefix);
  await applyMigrations(schema.url, migrationsDir);
  const prisma = connect(schema.url);
  return {
    schema,
    prisma,
    async close() {
      await prisma.$disconnect();
      await schema.drop();
    },
  };
}
export * from './fake-upstreams';
export * from './rpc-error';
