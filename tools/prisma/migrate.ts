/**
 * `prisma migrate deploy` for every service's schema in one process, with one connection.
 *
 * `pnpm start` used to run the Prisma CLI once per service: a Node process, the schema engine and a connection each
 * time, about 0.6–1.0 s per service with nothing to do. This applies the same folders the same way and records them
 * in the same `_prisma_migrations` table, so the CLI (the chart's migration Jobs, `migrate diff`, `migrate status`)
 * and this runner agree on what is applied (`test/integration/prisma-migrate.test.ts` holds both to that):
 *
 * - the folders under `prisma/migrations`, in name order, each `migration.sql` run as one simple-protocol query,
 *   which Postgres runs as one implicit transaction, as the schema engine does;
 * - a row per migration: `checksum` is the SHA-256 of the script, `started_at` before it runs, `finished_at` and
 *   `applied_steps_count = 1` after; a failure leaves the row unfinished with its error in `logs`, and both this
 *   runner and the CLI then refuse to go on until someone resolves it (`prisma migrate resolve`);
 * - Prisma's advisory lock (72707369) around the whole run, so a CLI run and this one never interleave.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { poolConfigFor } from './connection';

/** The lock the Prisma schema engine takes on Postgres for `migrate deploy`. */
const PRISMA_MIGRATE_LOCK = 72707369;

/** The table as the Prisma schema engine creates it. */
const MIGRATIONS_TABLE_DDL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** One schema to bring up to date: its name and its service's `prisma/migrations` folder. */
export interface MigrationTarget {
  schema: string;
  migrationsDir: string;
}

export interface MigrationOutcome {
  schema: string;
  /** Names of the migrations this run applied, in order; empty when the schema was up to date. */
  applied: string[];
  ms: number;
}

/** A migration that failed now or earlier and blocks the rest; says which and what to do. */
export class MigrationError extends Error {
  constructor(
    readonly schema: string,
    readonly migration: string,
    detail: string,
  ) {
    super(`schema ${schema}: migration ${migration} ${detail}`);
    this.name = 'MigrationError';
  }
}

/** The migration folders of `dir` in the order they apply (folders without a migration.sql are skipped, as Prisma does). */
export function migrationsIn(dir: string): { name: string; script: string }[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => ({ name, script: readFileSync(path.join(dir, name, 'migration.sql'), 'utf8') }));
}

/** The checksum Prisma stores for a script. */
export function checksumOf(script: string): string {
  return createHash('sha256').update(script).digest('hex');
}

/**
 * Brings every target's schema up to date over one connection to `serverUrl` (any `schema` parameter in it is
 * ignored: each target names its own). Stops at the first failure with a {@link MigrationError}; schemas before it
 * stay migrated.
 */
export async function deployMigrations(
  serverUrl: string,
  targets: MigrationTarget[],
  onSchema: (outcome: MigrationOutcome) => void = () => undefined,
): Promise<MigrationOutcome[]> {
  const client = new Client({ ...poolConfigFor(serverUrl), application_name: 'whetstone-migrate' });
  // An 'error' event on an idle client (the server going away) would otherwise be thrown out of the process.
  client.on('error', () => undefined);
  await client.connect();
  const outcomes: MigrationOutcome[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
    for (const target of targets) {
      const t0 = Date.now();
      const applied = await deploySchema(client, target);
      const outcome = { schema: target.schema, applied, ms: Date.now() - t0 };
      outcomes.push(outcome);
      onSchema(outcome);
    }
    return outcomes;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

async function deploySchema(client: Client, target: MigrationTarget): Promise<string[]> {
  const quoted = `"${target.schema.replace(/"/g, '""')}"`;
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
  await client.query(`SET search_path TO ${quoted}`);
  await client.query(MIGRATIONS_TABLE_DDL);
  const rows = await client.query<{ migration_name: string; finished_at: Date | null; rolled_back_at: Date | null }>(
    'SELECT migration_name, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
  );
  const failed = rows.rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed) {
    throw new MigrationError(
      target.schema,
      failed.migration_name,
      'failed in an earlier run and blocks the rest; fix the database, then mark it with ' +
        '`prisma migrate resolve --applied|--rolled-back <name>` (tools/prisma/cli.ts)',
    );
  }
  const done = new Set(rows.rows.filter((r) => r.finished_at !== null).map((r) => r.migration_name));
  const applied: string[] = [];
  for (const migration of migrationsIn(target.migrationsDir)) {
    if (done.has(migration.name)) continue;
    const id = randomUUID();
    await client.query(
      'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
      [id, checksumOf(migration.script), migration.name],
    );
    try {
      await client.query(migration.script);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await client.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, message]);
      throw new MigrationError(target.schema, migration.name, `failed: ${message}`);
    }
    await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [
      id,
    ]);
    applied.push(migration.name);
  }
  return applied;
}
