import { Pool } from 'pg';

/**
 * A pg Pool from a URL that may carry Prisma's `?schema=` parameter, which pg
 * does not understand; the schema is returned separately for qualified SQL.
 */
export function pgPoolFromUrl(url: string, max = 5): { pool: Pool; schema: string | undefined } {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? undefined;
  // Prisma's pool-size parameter caps this pool too (never above `max`); pg does not know it.
  const limit = Number(u.searchParams.get('connection_limit'));
  for (const prismaOnly of ['schema', 'connection_limit']) u.searchParams.delete(prismaOnly);
  const pool = new Pool({
    connectionString: u.toString(),
    max: Number.isInteger(limit) && limit > 0 ? Math.min(max, limit) : max,
  });
  handleConnectionLoss(pool);
  return { pool, schema };
}

/**
 * A connection can be cut at any time (database restart, failover, `pg_terminate_backend`). pg reports
 * that as an 'error' event: on the pool for an idle client, and on the client itself when it is checked
 * out between queries (a transaction awaiting its caller, a LISTEN connection). Without a listener the
 * event is unhandled and the process dies (57P01 killed the router this way). The query in flight, or
 * the next one, fails instead; the pool drops the broken client on release and opens a new one for the
 * next query, so the service reconnects by itself. Every pg Pool a service creates goes through this.
 */
export function handleConnectionLoss(pool: Pool): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
}

/** Quote an SQL identifier (schema names come from configuration, never from users). */
export function ident(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`);
  return `"${name}"`;
}
