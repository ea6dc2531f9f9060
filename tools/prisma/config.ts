/**
 * The one Prisma 6.19 recipe for every service's `prisma.config.ts`:
 * driver adapter (`@prisma/adapter-pg`) with the JS schema engine, plus the two
 * CLI-only workarounds that live in the config file (see docs in README.md).
 *
 * Prisma packages are resolved from the calling service's folder, because
 * they are that service's dependencies, not the workspace root's.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { poolConfigFor, type PoolConfigLike } from './connection';

/** Options for {@link servicePrismaConfig}. */
export interface ServicePrismaOptions {
  /** Schema file, relative to the service folder. */
  schema?: string;
  /** Migrations folder, relative to the service folder. */
  migrations?: string;
  /** Environment variable holding the Postgres URL (with `?schema=`). */
  urlVariable?: string;
}

/** pg and adapter-pg shapes this file uses; typed locally so tools/ needs no Prisma dependency. */
interface PgResultProto {
  addFields(fields: { dataTypeID: number }[]): void;
}
interface PgModule {
  Result: { prototype: PgResultProto };
  Client: new (config: PoolConfigLike) => {
    connect(): Promise<void>;
    query(sql: string): Promise<unknown>;
    end(): Promise<void>;
  };
}
interface AdapterLike {
  dispose(): Promise<void>;
}
interface PrismaPgFactory {
  connect(): Promise<AdapterLike>;
  connectToShadowDb(): Promise<AdapterLike>;
}
type PrismaPgClass = new (config: PoolConfigLike, options?: { schema?: string }) => PrismaPgFactory;

/**
 * Catalog types (`name`, `"char"` and their arrays) that introspection returns
 * but adapter-pg 6.19 rejects (prisma/orm#27403), mapped to text / text[].
 */
const CATALOG_OID_REMAP: Readonly<Record<number, number>> = { 18: 25, 19: 25, 24: 25, 194: 25, 1002: 1009, 1003: 1009 };

function remapCatalogOids(pg: PgModule): void {
  const proto = pg.Result.prototype as PgResultProto & { __whetstoneOidRemap?: true };
  if (proto.__whetstoneOidRemap) return;
  const original = proto.addFields;
  proto.addFields = function addFields(fields) {
    for (const field of fields) {
      const mapped = CATALOG_OID_REMAP[field.dataTypeID];
      if (mapped !== undefined) field.dataTypeID = mapped;
    }
    original.call(this, fields);
  };
  proto.__whetstoneOidRemap = true;
}

/**
 * adapter-pg 6.19's `connectToShadowDb()` keeps the connectionString (which
 * wins over `database`), so the "shadow" is the main database; it then drops
 * it while its pool is still open. This subclass builds the shadow from
 * discrete fields with a unique name and drops it WITH (FORCE) after dispose.
 */
function withShadowFix(PrismaPg: PrismaPgClass, pg: PgModule, url: string): PrismaPgClass {
  return class ShadowSafePrismaPg extends PrismaPg {
    override async connectToShadowDb(): Promise<AdapterLike> {
      const admin = poolConfigFor(url);
      const name = `prisma_shadow_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
      await withClient(pg, admin, `CREATE DATABASE "${name}"`);
      // Same schema name as the main database, so migrations replayed on the
      // shadow land where the datamodel expects them.
      const shadowConfig = poolConfigFor(url, { database: name, allowExitOnIdle: true });
      const schema = new URL(url).searchParams.get('schema');
      if (schema) await withClient(pg, shadowConfig, `CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '""')}"`);
      const shadow = await new PrismaPg(shadowConfig, schema ? { schema } : {}).connect();
      const dispose = shadow.dispose.bind(shadow);
      shadow.dispose = async () => {
        await dispose();
        await withClient(pg, admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      };
      return shadow;
    }
  };
}

async function withClient(pg: PgModule, config: PoolConfigLike, sql: string): Promise<void> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Build the Prisma config for the service in `serviceDir`. Use as the whole of
 * a service's `prisma.config.ts`: `export default servicePrismaConfig(__dirname)`.
 * DATABASE_URL is read only when a command connects, so `generate` runs without it.
 */
export function servicePrismaConfig(serviceDir: string, options: ServicePrismaOptions = {}): unknown {
  const fromService = createRequire(path.join(serviceDir, 'package.json'));
  const { defineConfig } = fromService('prisma/config') as { defineConfig: (config: object) => unknown };
  // pg as adapter-pg itself resolves it, so the prototype patched is the one in use.
  const fromAdapter = createRequire(fromService.resolve('@prisma/adapter-pg'));
  const pg = fromAdapter('pg') as PgModule;
  const { PrismaPg } = fromAdapter('@prisma/adapter-pg') as { PrismaPg: PrismaPgClass };
  const urlVariable = options.urlVariable ?? 'DATABASE_URL';

  return defineConfig({
    experimental: { adapter: true },
    engine: 'js',
    schema: path.join(serviceDir, options.schema ?? 'prisma/schema.prisma'),
    migrations: { path: path.join(serviceDir, options.migrations ?? 'prisma/migrations') },
    async adapter() {
      const url = process.env[urlVariable];
      if (!url) throw new Error(`${urlVariable} is not set`);
      remapCatalogOids(pg);
      const Adapter = withShadowFix(PrismaPg, pg, url);
      const schema = new URL(url).searchParams.get('schema') ?? undefined;
      // The engine never ends its pool; idle connections must not keep the CLI alive.
      return new Adapter({ ...poolConfigFor(url), allowExitOnIdle: true }, schema === undefined ? {} : { schema });
    },
  });
}
