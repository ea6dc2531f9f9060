import type { JobLogRepository } from '../application/ports';
import type { LogEntry, LogLine, StepMetrics } from '../domain/job';
import type { PrismaClient } from '../generated/prisma/client';

/** Most entries one read returns. */
const PAGE = 5_000;

export class PrismaJobLogRepository implements JobLogRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async append(jobId: string, source: string, lines: LogLine[]): Promise<void> {
    if (!lines.length) return;
    await this.prisma.jobLog.createMany({
      data: lines.map((l) => ({
        jobId,
        source,
        level: l.level,
        message: l.message,
        ...(l.metrics ? { metrics: { ...l.metrics } } : {}),
      })),
    });
  }

  async list(jobId: string, afterId?: string): Promise<LogEntry[]> {
    const after = afterId && /^\d+$/.test(afterId) ? { id: { gt: BigInt(afterId) } } : {};
    const rows = await this.prisma.jobLog.findMany({ where: { jobId, ...after }, orderBy: { id: 'asc' }, take: PAGE });
    return rows.map((l) => ({
      id: String(l.id),
      jobId: l.jobId,
      timestamp: l.timestamp,
      level: l.level,
      message: l.message,
      source: l.source,
      ...(l.metrics ? { metrics: l.metrics as unknown as StepMetrics } : {}),
    }));
  }
}
