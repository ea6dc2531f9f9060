/**
 * Turning a Prisma-style Postgres URL (`...?schema=name`) into pg pool
 * settings. Shared by the CLI recipe and by services' runtime clients. It
 * imports nothing, so the runtime images carry it as one compiled file.
 */
import { readFileSync } from 'node:fs';

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
  ssl?: boolean | { rejectUnauthorized?: boolean; ca?: string; cert?: string; key?: string };
  application_name?: string;
}

/** A service's URL: `serverUrl` with its `schema` parameter set and every other parameter (sslmode…) kept. */
export function withSchema(serverUrl: string, schema: string): string {
  const url = new URL(serverUrl);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/**
 * TLS settings from libpq-style parameters, read as node-postgres reads a
 * connection string (pg-connection-string without `uselibpqcompat`):
 * `disable` is plain, `no-verify` encrypts without checking the certificate,
 * any other sslmode encrypts and verifies; `sslrootcert`, `sslcert` and
 * `sslkey` are files. Undefined when the URL says nothing about TLS.
 */
function sslFrom(params: URLSearchParams): PoolConfigLike['ssl'] {
  const mode = params.get('sslmode');
  const files = { ca: params.get('sslrootcert'), cert: params.get('sslcert'), key: params.get('sslkey') };
  if (!mode && !files.ca && !files.cert && !files.key) return undefined;
  if (mode === 'disable') return false;
  const ssl: Exclude<PoolConfigLike['ssl'], boolean | undefined> = {};
  for (const [field, file] of Object.entries(files)) if (file) ssl[field as 'ca'] = readFileSync(file, 'utf8');
  if (mode === 'no-verify') ssl.rejectUnauthorized = false;
  return ssl;
}

/** A positive integer parameter, or undefined when absent or not one. */
function positiveInt(value: string | null): number | undefined {
  const n = Number(value);
  return value && Number.isInteger(n) && n > 0 ? n : undefined;
}

/** The `schema` query parameter of a Prisma-style URL, or `public`. */
export function schemaOf(url: string): string {
  return new URL(url).searchParams.get('schema') ?? 'public';
}

/**
 * Discrete pg settings for `url`. The `schema` parameter becomes the
 * connection's search_path, because adapter-pg's own `schema` option only
 * qualifies the query compiler's SQL: unqualified migration SQL and raw
 * queries need the search_path to land in the service's schema. `sslmode`
 * (with its certificate files) and `application_name` are kept, so managed
 * Postgres over TLS works.
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
    ssl: sslFrom(parsed.searchParams),
    application_name: parsed.searchParams.get('application_name') ?? undefined,
    // Prisma's own pool-size parameter: an operator (or a test system sharing one Postgres) caps connections here.
    max: positiveInt(parsed.searchParams.get('connection_limit')),
  };
  for (const key of Object.keys(config) as (keyof PoolConfigLike)[]) if (config[key] === undefined) delete config[key];
  return { ...config, ...overrides };
}
