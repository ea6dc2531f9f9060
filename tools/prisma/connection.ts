/**
 * Turning a Prisma-style Postgres URL (`...?schema=name`) into pg pool
 * settings. Shared by the CLI recipe and by services' runtime clients.
 */

/** The subset of pg's PoolConfig this module produces. */
export interface PoolConfigLike {
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  options?: string | undefined;
  max?: number;
  allowExitOnIdle?: boolean;
}

/** The `schema` query parameter of a Prisma-style URL, or `public`. */
export function schemaOf(url: string): string {
  return new URL(url).searchParams.get('schema') ?? 'public';
}

/**
 * Discrete pg settings for `url`. The `schema` parameter becomes the
 * connection's search_path, because adapter-pg's own `schema` option only
 * qualifies the query compiler's SQL: unqualified migration SQL and raw
 * queries need the search_path to land in the service's schema.
 */
export function poolConfigFor(url: string, overrides: Partial<PoolConfigLike> = {}): PoolConfigLike {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  const config: PoolConfigLike = {
    host: decodeURIComponent(parsed.hostname) || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 5432,
    user: decodeURIComponent(parsed.username) || undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || undefined,
    options: schema ? `-c search_path="${schema.replace(/"/g, '""')}"` : undefined,
  };
  for (const key of Object.keys(config) as (keyof PoolConfigLike)[]) if (config[key] === undefined) delete config[key];
  return { ...config, ...overrides };
}
