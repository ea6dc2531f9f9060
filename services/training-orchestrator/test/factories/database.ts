import path from 'node:path';
import { applyMigrations, createTestSchema, type TestSchema } from '@whetstone/testing';
import { createPrismaClient, type PrismaClient } from '../../src/adapters/prisma-client';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../prisma/migrations');

/** A fresh training-orchestrator schema with migrations applied, and a Prisma client on it. */
export async function createOrchestratorDatabase(
  prefix = 'orch',
): Promise<{ schema: TestSchema; prisma: PrismaClient; close(): Promise<void> }> {
  const schema = await createTestSchema(prefix);
  await applyMigrations(schema.url, MIGRATIONS_DIR);
  const prisma = createPrismaClient(schema.url, { maxConnections: 4 });
  return {
    schema,
    prisma,
    async close() {
      await prisma.$disconnect();
      await schema.drop();
    },
  };
}
