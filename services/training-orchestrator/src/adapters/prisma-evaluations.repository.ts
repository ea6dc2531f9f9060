import type { EvaluationRepository } from '../application/ports';
import type { Evaluation, EvaluationStatus } from '../domain/evaluation';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

const toEvaluation = (e: Prisma.EvaluationGetPayload<object>): Evaluation => ({
  id: e.id,
  teamId: e.teamId,
  jobId: e.jobId,
  datasetName: e.datasetName,
  status: e.status as EvaluationStatus,
  metrics: (e.metrics as Record<string, unknown> | null) ?? null,
  error: e.error,
  baseModel: e.baseModel,
  artifactKey: e.artifactKey,
  datasetBucket: e.datasetBucket,
  heldoutKey: e.heldoutKey,
  attempts: e.attempts,
  leaseToken: e.leaseToken,
  createdAt: e.createdAt,
});

const CLEAR_LEASE = { leaseOwner: null, leaseToken: null, leaseUntil: null };

/** Evaluations in Postgres, queued and leased like jobs (a queued one is running with no lease token). */
export class PrismaEvaluationRepository implements EvaluationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async create(e: Evaluation): Promise<void> {
    await this.prisma.evaluation.create({
      data: {
        id: e.id,
        teamId: e.teamId,
        jobId: e.jobId,
        datasetName: e.datasetName,
        status: e.status,
        baseModel: e.baseModel,
        artifactKey: e.artifactKey,
        datasetBucket: e.datasetBucket,
        heldoutKey: e.heldoutKey,
        createdAt: e.createdAt,
      },
    });
  }

  async get(teamId: string, id: string): Promise<Evaluation | null> {
    const e = await this.prisma.evaluation.findFirst({ where: { id, teamId } });
    return e ? toEvaluation(e) : null;
  }

  async getById(id: string): Promise<Evaluation | null> {
    const e = await this.prisma.evaluation.findUnique({ where: { id } });
    return e ? toEvaluation(e) : null;
  }

  async leaseNext(owner: string, token: string, leaseUntil: Date): Promise<Evaluation | null> {
    return this.prisma.$transaction(async (tx) => {
      const [candidate] = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM evaluations WHERE status = 'running' AND lease_token IS NULL
        ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
      if (!candidate) return null;
      const e = await tx.evaluation.update({
        where: { id: candidate.id },
        data: { leaseOwner: owner, leaseToken: token, leaseUntil, attempts: { increment: 1 } },
      });
      return toEvaluation(e);
    });
  }

  async renew(id: string, token: string, leaseUntil: Date): Promise<boolean> {
    const { count } = await this.prisma.evaluation.updateMany({
      where: { id, leaseToken: token, status: 'running' },
      data: { leaseUntil },
    });
    return count > 0;
  }

  async finish(
    id: string,
    token: string,
    result: { status: 'complete'; metrics: Record<string, unknown> } | { status: 'failed'; error: string },
  ): Promise<boolean> {
    const { count } = await this.prisma.evaluation.updateMany({
      where: { id, leaseToken: token, status: 'running' },
      data:
        result.status === 'complete'
          ? { status: 'complete', metrics: result.metrics as Prisma.InputJsonValue, ...CLEAR_LEASE }
          : { status: 'failed', error: result.error, ...CLEAR_LEASE },
    });
    return count > 0;
  }

  async release(id: string, token?: string): Promise<boolean> {
    const { count } = await this.prisma.evaluation.updateMany({
      where: { id, status: 'running', ...(token !== undefined ? { leaseToken: token } : {}) },
      data: CLEAR_LEASE,
    });
    return count > 0;
  }

  async expired(now: Date): Promise<Evaluation[]> {
    const rows = await this.prisma.evaluation.findMany({ where: { status: 'running', leaseUntil: { lt: now } } });
    return rows.map(toEvaluation);
  }
}
