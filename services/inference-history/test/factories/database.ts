import path from 'node:path';
import { createMigratedDatabase, type MigratedDatabase } from '@whetstone/testing';
import { createPrismaClient, type PrismaClient } from '../../src/adapters/prisma-client';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../prisma/migrations');

/** A fresh history schema with migrations applied, and a Prisma client on it. */
export function createHistoryDatabase(prefix = 'hist'): Promise<MigratedDatabase<PrismaClient>> {
  return createMigratedDatabase(prefix, MIGRATIONS_DIR, (url) => createPrismaClient(url, { maxConnections: 4 }));
}
