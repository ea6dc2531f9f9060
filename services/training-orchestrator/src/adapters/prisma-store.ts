import { create } from '@bufbuild/protobuf';
import { encodeEvent, Topics } from '@whetstone/events';
import { timestampNow } from '@bufbuild/protobuf/wkt';
import { JobDeletedSchema, JobStatus as PbJobStatus, JobStatusChangedSchema } from '@whetstone/proto/training/v1';
import type { CheckpointRow, DatasetSplit, EvaluationRow, JobRow, JobStore, LogRow } from '../application/training';
import { ARTIFACTS_BUCKET, MAX_ATTEMPTS, type JobStatus } from '../domain/job';
import { Prisma, type PrismaClient } from '../generated/prisma/client';

export const JOBS_TOPIC = Topics.trainingJobs;

type Tx = Prisma.TransactionClient;
type JobModel = Prisma.JobGetPayload<object>;

const toJob = (j: JobModel): JobRow => ({
  id: j.id,
  teamId: j.teamId,
  userId: j.userId,
  keyId: j.keyId,
  baseModel: j.baseModel,
  rootBaseModel: j.rootBaseModel,
  modelName: j.modelName,
  trainingType: j.trainingType as 'lora' | 'full',
  nrEpochs: j.nrEpochs,
  learningRate: j.learningRate,
  seed: j.seed,
  projectId: j.projectId,
  datasets: j.datasets as unknown as DatasetSplit[],
  status: j.status,
  metrics: (j.metrics as Record<string, unknown> | null) ?? null,
  progress: (j.progress as Record<string, unknown> | null) ?? null,
  failureReason: j.failureReason,
  attempts: j.attempts,
  resumeKey: j.resumeKey,
  artifactKey: j.artifactKey,
  artifactSize: j.artifactSize === null ? null : Number(j.artifactSize),
  costMicroCredits: j.costMicroCredits,
  leaseToken: j.leaseToken,
  createdAt: j.createdAt,
  startedAt: j.startedAt,
  finishedAt: j.finishedAt,
});

const toCheckpoint = (c: Prisma.CheckpointGetPayload<object>): CheckpointRow => ({
  id: c.id,
  jobId: c.jobId,
  checkpointId: c.checkpointId,
  type: c.type as 'training' | 'sampler',
  step: Number(c.step),
  key: c.key,
  sizeBytes: Number(c.sizeBytes),
  createdAt: c.createdAt,
});

async function emit(tx: Tx, row: ReturnType<typeof encodeEvent>): Promise<void> {
  await tx.outboxEvent.create({
    data: { topic: row.topic, key: row.key, type: row.type, payload: Buffer.from(row.payload), headers: row.headers },
  });
}

const PB_STATUS: Record<string, PbJobStatus> = {
  requested: PbJobStatus.REQUESTED,
  running: PbJobStatus.RUNNING,
  complete: PbJobStatus.COMPLETE,
  failed: PbJobStatus.FAILED,
  deployed: PbJobStatus.DEPLOYED,
  cancelled: PbJobStatus.CANCELLED,
};

async function statusChanged(
  tx: Tx,
  job: { id: string; teamId: string; artifactKey: string | null; rootBaseModel: string; modelName: string },
  from: string,
  to: JobStatus,
): Promise<void> {
  await emit(
    tx,
    encodeEvent(
      JOBS_TOPIC,
      JobStatusChangedSchema,
      create(JobStatusChangedSchema, {
        jobId: job.id,
        teamId: job.teamId,
        fromStatus: PB_STATUS[from] ?? PbJobStatus.UNSPECIFIED,
        toStatus: PB_STATUS[to] ?? PbJobStatus.UNSPECIFIED,
        artifactBucket: job.artifactKey ? ARTIFACTS_BUCKET : '',
        artifactKey: job.artifactKey ?? '',
        rootBaseModel: job.rootBaseModel,
        modelName: job.modelName,
        occurredAt: timestampNow(),
      }),
      job.id,
    ),
  );
}

/** Jobs, logs, checkpoints and evaluations; every status change and its event commit together. */
export function prismaJobStore(prisma: PrismaClient): JobStore {
  const store: JobStore = {
    async create(row) {
      await prisma.$transaction(async (tx) => {
        await tx.job.create({
          data: {
            id: row.id,
            teamId: row.teamId,
            userId: row.userId,
            keyId: row.keyId,
            baseModel: row.baseModel,
            rootBaseModel: row.rootBaseModel,
            modelName: row.modelName,
            trainingType: row.trainingType,
            nrEpochs: row.nrEpochs,
            learningRate: row.learningRate,
            seed: row.seed,
            projectId: row.projectId,
            datasets: row.datasets as unknown as Prisma.InputJsonValue,
            status: 'requested',
            resumeKey: row.resumeKey,
            createdAt: row.createdAt,
          },
        });
        await statusChanged(tx, row, '', 'requested');
      });
    },
    async get(teamId, id) {
      const j = await prisma.job.findFirst({ where: { id, teamId } });
      return j ? toJob(j) : null;
    },
    async getById(id) {
      const j = await prisma.job.findUnique({ where: { id } });
      return j ? toJob(j) : null;
    },
    async list(teamId, filter) {
      const where: Prisma.JobWhereInput = {
        teamId,
        ...(filter.status ? { status: filter.status as JobStatus } : {}),
        ...(filter.projectId ? { projectId: filter.projectId } : {}),
      };
      const [rows, total] = await Promise.all([
        prisma.job.findMany({ where, orderBy: { createdAt: 'desc' }, take: filter.limit, skip: filter.offset }),
        prisma.job.count({ where }),
      ]);
      return { rows: rows.map(toJob), total };
    },
    async lease(owner, token, leaseMs) {
      return prisma.$transaction(async (tx) => {
        const [candidate] = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM jobs WHERE status = 'requested' ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
        if (!candidate) return null;
        const job = await tx.job.update({
          where: { id: candidate.id },
          data: {
            status: 'running',
            leaseOwner: owner,
            leaseToken: token,
            leaseUntil: new Date(Date.now() + leaseMs),
            attempts: { increment: 1 },
            startedAt: new Date(),
          },
        });
        await statusChanged(tx, job, 'requested', 'running');
        return toJob(job);
      });
    },
    async renew(id, token, leaseMs, progress) {
      const { count } = await prisma.job.updateMany({
        where: { id, leaseToken: token, status: 'running' },
        data: {
          leaseUntil: new Date(Date.now() + leaseMs),
          ...(progress ? { progress: progress as Prisma.InputJsonValue } : {}),
        },
      });
      return count > 0;
    },
    async move(id, from, to, patch = {}, token) {
      return prisma.$transaction(async (tx) => {
        const job = await tx.job.findUnique({ where: { id } });
        if (!job || !from.includes(job.status) || (token !== undefined && job.leaseToken !== token)) return false;
        const { clearLease, metrics, artifactSize, ...rest } = patch;
        const updated = await tx.job.update({
          where: { id },
          data: {
            ...rest,
            status: to,
            ...(metrics ? { metrics: metrics as Prisma.InputJsonValue } : {}),
            ...(artifactSize !== undefined && artifactSize !== null ? { artifactSize: BigInt(artifactSize) } : {}),
            ...(clearLease ? { leaseOwner: null, leaseToken: null, leaseUntil: null } : {}),
          },
        });
        await statusChanged(tx, updated, job.status, to);
        return true;
      });
    },
    async expired() {
      return (await prisma.job.findMany({ where: { status: 'running', leaseUntil: { lt: new Date() } } })).map(toJob);
    },
    async requeue(id, resumeKey) {
      return prisma.$transaction(async (tx) => {
        const job = await tx.job.findUnique({ where: { id } });
        if (!job || job.status !== 'running' || job.attempts >= MAX_ATTEMPTS + 1) return false;
        await tx.job.update({
          where: { id },
          data: { status: 'requested', resumeKey, leaseOwner: null, leaseToken: null, leaseUntil: null },
        });
        await statusChanged(tx, job, 'running', 'requested');
        return true;
      });
    },
    async delete(teamId, id) {
      return prisma.$transaction(async (tx) => {
        const { count } = await tx.job.deleteMany({ where: { id, teamId } });
        if (!count) return false;
        await tx.evaluation.deleteMany({ where: { jobId: id } });
        await emit(tx, encodeEvent(JOBS_TOPIC, JobDeletedSchema, create(JobDeletedSchema, { jobId: id, teamId }), id));
        return true;
      });
    },
    async appendLogs(jobId, source, lines) {
      if (lines.length)
        await prisma.jobLog.createMany({
          data: lines.map((l) => ({ jobId, source, level: l.level, message: l.message })),
        });
    },
    async logs(jobId, afterId) {
      const rows = await prisma.jobLog.findMany({
        where: { jobId, ...(afterId ? { id: { gt: BigInt(afterId) } } : {}) },
        orderBy: { id: 'asc' },
        take: 5000,
      });
      return rows.map((l): LogRow => ({
        id: String(l.id),
        jobId: l.jobId,
        timestamp: l.timestamp,
        level: l.level,
        message: l.message,
        source: l.source,
      }));
    },
    async putCheckpoint(row) {
      await prisma.checkpoint.upsert({
        where: { jobId_checkpointId: { jobId: row.jobId, checkpointId: row.checkpointId } },
        create: {
          id: row.id,
          jobId: row.jobId,
          checkpointId: row.checkpointId,
          type: row.type,
          step: BigInt(row.step),
          key: row.key,
          sizeBytes: BigInt(row.sizeBytes),
        },
        update: { key: row.key, sizeBytes: BigInt(row.sizeBytes), createdAt: new Date() },
      });
    },
    async checkpoints(jobId) {
      return (
        await prisma.checkpoint.findMany({ where: { jobId }, orderBy: [{ step: 'desc' }, { createdAt: 'desc' }] })
      ).map(toCheckpoint);
    },
    async checkpointByUuid(teamId, uuid) {
      const c = await prisma.checkpoint.findFirst({ where: { id: uuid, job: { teamId } }, include: { job: true } });
      return c ? { ...toCheckpoint(c), job: toJob(c.job) } : null;
    },
    async createEvaluation(row) {
      await prisma.evaluation.create({
        data: { id: row.id, teamId: row.teamId, jobId: row.jobId, datasetName: row.datasetName, status: row.status },
      });
    },
    async updateEvaluation(id, patch) {
      await prisma.evaluation.update({
        where: { id },
        data: {
          ...(patch.status ? { status: patch.status } : {}),
          ...(patch.metrics ? { metrics: patch.metrics as Prisma.InputJsonValue } : {}),
          ...(patch.error !== undefined ? { error: patch.error } : {}),
        },
      });
    },
    async getEvaluation(teamId, id) {
      const e = await prisma.evaluation.findFirst({ where: { id, teamId } });
      return e
        ? ({
            ...e,
            status: e.status as EvaluationRow['status'],
            metrics: (e.metrics as Record<string, unknown> | null) ?? null,
          } satisfies EvaluationRow)
        : null;
    },
  };
  return store;
}
