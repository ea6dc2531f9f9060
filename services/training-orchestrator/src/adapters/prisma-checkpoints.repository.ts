import type { CheckpointRepository } from '../application/ports';
import type { Checkpoint, CheckpointType, Job } from '../domain/job';
import type { Prisma, PrismaClient } from '../generated/prisma/client';
import { toJob } from './prisma-jobs.repository';

const toCheckpoint = (c: Prisma.CheckpointGetPayload<object>): Checkpoint => ({
  id: c.id,
  jobId: c.jobId,
  checkpointId: c.checkpointId,
  type: c.type as CheckpointType,
  step: Number(c.step),
  key: c.key,
  sizeBytes: Number(c.sizeBytes),
  createdAt: c.createdAt,
});

export class PrismaCheckpointRepository implements CheckpointRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async put(row: Checkpoint): Promise<void> {
    await this.prisma.checkpoint.upsert({
      where: { jobId_checkpointId: { jobId: row.jobId, checkpointId: row.checkpointId } },
      create: {
        id: row.id,
        jobId: row.jobId,
        checkpointId: row.checkpointId,
        type: row.type,
        step: BigInt(row.step),
        key: row.key,
        sizeBytes: BigInt(row.sizeBytes),
        createdAt: row.createdAt,
      },
      update: { key: row.key, sizeBytes: BigInt(row.sizeBytes), createdAt: row.createdAt },
    });
  }

  async listByJob(jobId: string): Promise<Checkpoint[]> {
    const rows = await this.prisma.checkpoint.findMany({
      where: { jobId },
      orderBy: [{ step: 'desc' }, { createdAt: 'desc' }],
    });
    return rows.map(toCheckpoint);
  }

  async findByUuid(teamId: string, uuid: string): Promise<(Checkpoint & { job: Job }) | null> {
    const c = await this.prisma.checkpoint.findFirst({ where: { id: uuid, job: { teamId } }, include: { job: true } });
    return c ? { ...toCheckpoint(c), job: toJob(c.job) } : null;
  }
}
