import type { JobFilter, JobPatch, JobRepository, JobTransition } from '../application/ports';
import type { DatasetSplit, FineTuningSource, Job, TrainingType } from '../domain/job';
import type { JobStatus } from '../domain/job-status';
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import { appendOutbox, jobDeletedRow, statusChangedRow, trainingUsageRow } from './prisma-outbox';

type JobModel = Prisma.JobGetPayload<object>;

export const toJob = (j: JobModel): Job => ({
  id: j.id,
  teamId: j.teamId,
  userId: j.userId,
  keyId: j.keyId,
  baseModel: j.baseModel,
  rootBaseModel: j.rootBaseModel,
  modelName: j.modelName,
  trainingType: j.trainingType as TrainingType,
  nrEpochs: j.nrEpochs,
  learningRate: j.learningRate,
  seed: j.seed,
  projectId: j.projectId,
  outOfScopeLabel: j.outOfScopeLabel,
  fineTuning: (j.fineTuning as FineTuningSource | null) ?? null,
  datasets: j.datasets as unknown as DatasetSplit[],
  status: j.status,
  metrics: (j.metrics as Record<string, unknown> | null) ?? null,
  progress: (j.progress as Record<string, unknown> | null) ?? null,
  failureReason: j.failureReason,
  attempts: j.attempts,
  resumeKey: j.resumeKey,
  artifactKey: j.artifactKey,
  artifactSize: j.artifactSize === null ? null : Number(j.artifactSize),
  manifestKey: j.manifestKey,
  costMicroCredits: j.costMicroCredits,
  leaseToken: j.leaseToken,
  createdAt: j.createdAt,
  startedAt: j.startedAt,
  finishedAt: j.finishedAt,
});

function patchData(patch: JobPatch): Prisma.JobUpdateInput {
  const { clearLease, expireLease, metrics, artifactSize, ...rest } = patch;
  return {
    ...rest,
    ...(metrics ? { metrics: metrics as Prisma.InputJsonValue } : {}),
    ...(artifactSize !== undefined ? { artifactSize: BigInt(artifactSize) } : {}),
    ...(clearLease ? { leaseOwner: null, leaseToken: null, leaseUntil: null } : {}),
    ...(expireLease ? { leaseUntil: null } : {}),
  };
}

/** Jobs in Postgres; every status change and its events commit together. */
export class PrismaJobRepository implements JobRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async create(job: Job): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      await tx.job.create({
        data: {
          id: job.id,
          teamId: job.teamId,
          userId: job.userId,
          keyId: job.keyId,
          baseModel: job.baseModel,
          rootBaseModel: job.rootBaseModel,
          modelName: job.modelName,
          trainingType: job.trainingType,
          nrEpochs: job.nrEpochs,
          learningRate: job.learningRate,
          seed: job.seed,
          projectId: job.projectId,
          outOfScopeLabel: job.outOfScopeLabel,
          ...(job.fineTuning ? { fineTuning: job.fineTuning as unknown as Prisma.InputJsonValue } : {}),
          datasets: job.datasets as unknown as Prisma.InputJsonValue,
          status: job.status,
          resumeKey: job.resumeKey,
          createdAt: job.createdAt,
        },
      });
      await appendOutbox(tx, statusChangedRow(job, null, job.status, job.createdAt));
    });
  }

  async get(teamId: string, id: string): Promise<Job | null> {
    const j = await this.prisma.job.findFirst({ where: { id, teamId } });
    return j ? toJob(j) : null;
  }

  async getById(id: string): Promise<Job | null> {
    const j = await this.prisma.job.findUnique({ where: { id } });
    return j ? toJob(j) : null;
  }

  async list(teamId: string, filter: JobFilter) {
    const where: Prisma.JobWhereInput = {
      teamId,
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.projectId ? { projectId: filter.projectId } : {}),
      ...(filter.fineTuningOnly ? { fineTuning: { not: Prisma.DbNull } } : {}),
      ...(filter.after
        ? {
            OR: [
              { createdAt: { lt: filter.after.createdAt } },
              { createdAt: filter.after.createdAt, id: { lt: filter.after.id } },
            ],
          }
        : {}),
    };
    const [rows, total] = await Promise.all([
      this.prisma.job.findMany({
        where,
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: filter.limit,
        skip: filter.after ? 0 : filter.offset,
      }),
      this.prisma.job.count({ where }),
    ]);
    return { rows: rows.map(toJob), total };
  }

  async leaseNext(owner: string, token: string, leaseUntil: Date): Promise<Job | null> {
    return this.prisma.$transaction(async (tx) => {
      const [candidate] = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM jobs WHERE status = 'requested' ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
      if (!candidate) return null;
      const now = new Date();
      const job = await tx.job.update({
        where: { id: candidate.id },
        data: {
          status: 'running',
          leaseOwner: owner,
          leaseToken: token,
          leaseUntil,
          attempts: { increment: 1 },
          startedAt: now,
        },
      });
      await appendOutbox(tx, statusChangedRow(job, 'requested', 'running', now));
      return toJob(job);
    });
  }

  async renew(id: string, token: string, leaseUntil: Date, progress?: Record<string, unknown>): Promise<boolean> {
    const { count } = await this.prisma.job.updateMany({
      where: { id, leaseToken: token, status: 'running' },
      data: { leaseUntil, ...(progress ? { progress: progress as Prisma.InputJsonValue } : {}) },
    });
    return count > 0;
  }

  async reclaim(id: string, token: string, leaseUntil: Date): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const [row] = await tx.$queryRaw<{ status: JobStatus }[]>`
        SELECT status FROM jobs WHERE id = ${id}::uuid AND lease_token = ${token} FOR UPDATE`;
      if (row?.status !== 'requested') return false;
      const job = await tx.job.update({ where: { id }, data: { status: 'running', leaseUntil } });
      await appendOutbox(tx, statusChangedRow(job, 'requested', 'running', new Date()));
      return true;
    });
  }

  async transition(id: string, change: JobTransition): Promise<Job | null> {
    return this.prisma.$transaction(async (tx) => {
      const [row] = await tx.$queryRaw<{ status: JobStatus; lease_token: string | null }[]>`
        SELECT status, lease_token FROM jobs WHERE id = ${id}::uuid FOR UPDATE`;
      if (!row || !change.from.includes(row.status)) return null;
      if (change.token !== undefined && row.lease_token !== change.token) return null;
      const updated = await tx.job.update({
        where: { id },
        data: { ...patchData(change.patch ?? {}), status: change.to },
      });
      await appendOutbox(tx, statusChangedRow(updated, row.status, change.to, new Date()));
      if (change.usage) await appendOutbox(tx, trainingUsageRow(change.usage));
      return toJob(updated);
    });
  }

  async expired(now: Date): Promise<Job[]> {
    const rows = await this.prisma.job.findMany({ where: { status: 'running', leaseUntil: { lt: now } } });
    return rows.map(toJob);
  }

  async delete(teamId: string, id: string): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.job.deleteMany({ where: { id, teamId } });
      if (!count) return false;
      await tx.evaluation.deleteMany({ where: { jobId: id } });
      await appendOutbox(tx, jobDeletedRow(id, teamId));
      return true;
    });
  }
}
