import { PrismaPg } from '@prisma/adapter-pg';
import { poolConfigFor, schemaOf } from '../../../../tools/prisma/connection';
import { PrismaClient } from '../generated/prisma/client';

export type { PrismaClient };

/**
 * A Prisma client on the service's own schema. The adapter's `schema` option
 * qualifies Prisma's SQL; the pool's search_path (from poolConfigFor) covers raw SQL.
 */
export function createPrismaClient(databaseUrl: string, options: { maxConnections?: number } = {}): PrismaClient {
  const config = poolConfigFor(databaseUrl);
  const pool = { ...config, max: options.maxConnections ?? config.max ?? 10 };
  return new PrismaClient({ adapter: new PrismaPg(pool, { schema: schemaOf(databaseUrl) }) });
}
