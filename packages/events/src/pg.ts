import { Pool } from 'pg';

/**
 * A pg Pool from a URL that may carry Prisma's `?schema=` parameter, which pg
 * does not understand; the schema is returned separately for qualified SQL.
 */
export function pgPoolFromUrl(url: string, max = 5): { pool: Pool; schema: string | undefined } {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? undefined;
  u.searchParams.delete('schema');
  const pool = new Pool({ connectionString: u.toString(), max });
  // An idle client's connection can be cut (database restart, shutdown); without a listener pg
  // re-emits that as an unhandled 'error' and the process dies. The next query reconnects.
  pool.on('error', () => undefined);
  return { pool, schema };
}

/** Quote an SQL identifier (schema names come from configuration, never from users). */
export function ident(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`);
  return `"${name}"`;
}
