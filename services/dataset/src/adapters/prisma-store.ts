import type { DatasetStore } from '../application/ports';
import type { PrismaClient } from '../generated/prisma/client';
import { prismaGenerationStore } from './prisma-generations';
import { prismaLeaseStore } from './prisma-leases';
import { prismaVersionStore } from './prisma-versions';

/** The DatasetStore port on Prisma: versions (with their outbox events), processing claims, generation jobs. */
export function prismaDatasetStore(prisma: PrismaClient): DatasetStore {
  const versions = prismaVersionStore(prisma);
  return { ...versions, ...prismaLeaseStore(prisma, versions.transition), ...prismaGenerationStore(prisma) };
}
