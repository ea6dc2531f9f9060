import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestSchema, withClient, type TestSchema } from '@whetstone/testing';
import { runPrisma } from '../../../../tools/prisma/cli';
import { deployMigrations, MigrationError, migrationsIn } from '../../../../tools/prisma/migrate';

const SERVICE_DIR = path.resolve(__dirname, '../..');
const MIGRATIONS = path.join(SERVICE_DIR, 'prisma', 'migrations');

/** `pnpm start`'s migration runner and the Prisma CLI must agree on what is applied, both ways. */
describe('tools/prisma/migrate.ts (the one-process runner pnpm start uses)', () => {
  const schemas: TestSchema[] = [];
  const fresh = async (prefix: string) => {
    const schema = await createTestSchema(prefix);
    schemas.push(schema);
    return schema;
  };
  afterAll(() => Promise.all(schemas.map((s) => s.drop())));

  it('when the runner migrates a fresh schema, then the Prisma CLI finds nothing pending and the schema up to date', async () => {
    const schema = await fresh('mr_runner_first');
    const [outcome] = await deployMigrations(schema.serverUrl, [{ schema: schema.name, migrationsDir: MIGRATIONS }]);
    expect(outcome!.applied).toEqual(migrationsIn(MIGRATIONS).map((m) => m.name));

    const env = { ...process.env, DATABASE_URL: schema.url };
    const status = runPrisma(SERVICE_DIR, ['migrate', 'status'], env, true);
    expect(status.stdout + status.stderr).toMatch(/Database schema is up to date/i);
    expect(status.status).toBe(0);
    const deploy = runPrisma(SERVICE_DIR, ['migrate', 'deploy'], env, true);
    expect(deploy.stdout + deploy.stderr).toMatch(/No pending migrations/i);

    const again = await deployMigrations(schema.serverUrl, [{ schema: schema.name, migrationsDir: MIGRATIONS }]);
    expect(again[0]!.applied).toEqual([]);
  }, 60_000);

  it('when the Prisma CLI migrated a schema, then the runner applies nothing', async () => {
    const schema = await fresh('mr_cli_first');
    const deploy = runPrisma(SERVICE_DIR, ['migrate', 'deploy'], { ...process.env, DATABASE_URL: schema.url }, true);
    expect(deploy.status).toBe(0);
    const [outcome] = await deployMigrations(schema.serverUrl, [{ schema: schema.name, migrationsDir: MIGRATIONS }]);
    expect(outcome!.applied).toEqual([]);
  }, 60_000);

  it('when several schemas are given, then each is migrated into its own schema and reported in order', async () => {
    const [a, b] = [await fresh('mr_multi_a'), await fresh('mr_multi_b')];
    const seen: string[] = [];
    await deployMigrations(
      a.serverUrl,
      [a, b].map((s) => ({ schema: s.name, migrationsDir: MIGRATIONS })),
      (o) => seen.push(o.schema),
    );
    expect(seen).toEqual([a.name, b.name]);
    for (const s of [a, b]) {
      const tables = await withClient(s.serverUrl, (c) =>
        c.query<{ n: string }>(
          "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = '_prisma_migrations'",
          [s.name],
        ),
      );
      expect(tables.rows[0]!.n).toBe('1');
    }
  });

  it('when a migration fails, then its row is left unfinished with the error, and the next run refuses to go on and names it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'whetstone-migrations-'));
    try {
      for (const [name, sql] of [
        ['20260101000000_ok', 'CREATE TABLE t (id int PRIMARY KEY);'],
        ['20260102000000_broken', 'CREATE TABLE u (id int PRIMARY KEY);\nINSERT INTO missing_table VALUES (1);'],
        ['20260103000000_later', 'CREATE TABLE v (id int);'],
      ] as const) {
        mkdirSync(path.join(dir, name));
        writeFileSync(path.join(dir, name, 'migration.sql'), sql);
      }
      const schema = await fresh('mr_failure');
      const target = [{ schema: schema.name, migrationsDir: dir }];
      await expect(deployMigrations(schema.serverUrl, target)).rejects.toThrow(
        /migration 20260102000000_broken failed: relation "missing_table" does not exist/,
      );
      const rows = await withClient(schema.serverUrl, (c) =>
        c.query<{ migration_name: string; finished: boolean; logs: string | null }>(
          `SELECT migration_name, finished_at IS NOT NULL AS finished, logs FROM "${schema.name}"."_prisma_migrations" ORDER BY started_at`,
        ),
      );
      expect(rows.rows.map((r) => [r.migration_name, r.finished])).toEqual([
        ['20260101000000_ok', true],
        ['20260102000000_broken', false],
      ]);
      expect(rows.rows[1]!.logs).toMatch(/missing_table/);
      // The failed script ran as one transaction: its first statement did not stay behind.
      const leftover = await withClient(schema.serverUrl, (c) =>
        c.query("SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'u'", [schema.name]),
      );
      expect(leftover.rowCount).toBe(0);

      const second = deployMigrations(schema.serverUrl, target);
      await expect(second).rejects.toBeInstanceOf(MigrationError);
      await expect(second).rejects.toThrow(/20260102000000_broken failed in an earlier run.*migrate resolve/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the migrate image is built, then its one-file runner migrates a service from its folder, reruns as a no-op, and a bad password fails without printing it', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'whetstone-migrate-image-'));
    try {
      const root = path.resolve(SERVICE_DIR, '../..');
      const built = spawnSync(process.execPath, [path.join(root, 'deploy/image/build-migrate.mjs'), out], {
        encoding: 'utf8',
      });
      expect(built.stderr).toBe('');
      expect(built.status).toBe(0);
      const schema = await fresh('mr_image');
      const run = (url: string) =>
        spawnSync(process.execPath, ['migrate.js', 'migrations/key-billing'], {
          cwd: out,
          env: { PATH: process.env.PATH, DATABASE_URL: url },
          encoding: 'utf8',
        });
      const first = run(schema.url);
      expect(first.stdout).toMatch(
        new RegExp(`schema ${schema.name}: applied ${migrationsIn(MIGRATIONS).length} migration`),
      );
      expect(first.status).toBe(0);
      const second = run(schema.url);
      expect(second.stdout).toMatch(/up to date, no pending migrations/);

      const wrong = new URL(schema.url);
      wrong.username = 'whetstone_nobody';
      wrong.password = 'hunter2-secret';
      const failed = run(wrong.toString());
      expect(failed.status).toBe(1);
      expect(failed.stderr).not.toContain('hunter2-secret');
      expect(failed.stderr.length).toBeGreaterThan(0);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
