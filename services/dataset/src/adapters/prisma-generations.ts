/** Synthetic generation jobs in the service's schema. */
import type { DatasetStore, GenerationRow } from '../application/ports';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

const toGenerationRow = (g: Prisma.GenerationJobGetPayload<object>): GenerationRow => ({
  id: g.id,
  teamId: g.teamId,
  datasetName: g.datasetName,
  request: g.request as unknown as GenerationRow['request'],
  status: g.status as GenerationRow['status'],
  generated: g.generated,
  requested: g.requested,
  versionNumber: g.versionNumber,
  error: g.error,
});

export function prismaGenerationStore(
  prisma: PrismaClient,
): Pick<DatasetStore, 'createGeneration' | 'getGeneration' | 'updateGeneration' | 'unfinishedGenerations'> {
  return {
    async createGeneration(row) {
      await prisma.generationJob.create({
        data: {
          id: row.id,
          teamId: row.teamId,
          datasetName: row.datasetName,
          request: row.request as unknown as Prisma.InputJsonValue,
          status: row.status,
          generated: row.generated,
          requested: row.requested,
        },
      });
    },
    async getGeneration(teamId, id) {
      const g = await prisma.generationJob.findFirst({ where: { id, teamId } });
      return g ? toGenerationRow(g) : null;
    },
    async updateGeneration(id, patch) {
      await prisma.generationJob.update({ where: { id }, data: patch });
    },
    async unfinishedGenerations() {
      const rows = await prisma.generationJob.findMany({ where: { status: { in: ['queued', 'running'] } } });
      return rows.map(toGenerationRow);
    },
  };
}
