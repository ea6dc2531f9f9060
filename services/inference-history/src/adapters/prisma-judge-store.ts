import type { JudgeStore } from '../application/ports';
import { judgingOff, type JudgeKind, type JudgeSettings } from '../domain/judge';
import type { PrismaClient } from '../generated/prisma/client';
import { fromRow } from './prisma-history-store';

type SettingsRow = NonNullable<Awaited<ReturnType<PrismaClient['judgeSettings']['findUnique']>>>;

const settingsOf = (row: SettingsRow): JudgeSettings => ({
  projectId: row.projectId,
  enabled: row.enabled,
  sampleRate: row.sampleRate,
  kind: row.kind as JudgeKind,
  judgeModel: row.judgeModel,
  updatedAt: row.updatedAt,
});

/**
 * The claim: due pending records, locked with SKIP LOCKED so that replicas take different ones, each counted as an
 * attempt and pushed a lease ahead in the same statement (no separate "running" state to get stuck in).
 */
const CLAIM_SQL = `UPDATE inference_records r
  SET judge_attempts = r.judge_attempts + 1, judge_next_at = now() + ($2::int * interval '1 millisecond')
  WHERE r.id IN (
    SELECT id FROM inference_records
    WHERE judge_status = 'pending' AND judge_next_at <= now()
    ORDER BY judge_next_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED)
  RETURNING r.id, r.judge_attempts AS attempts`;

/** Judge settings and the judge queue in history's schema. */
export function prismaJudgeStore(prisma: PrismaClient): JudgeStore {
  return {
    async getSettings(teamId, projectId) {
      const row = await prisma.judgeSettings.findUnique({ where: { projectId } });
      return row && row.teamId === teamId ? settingsOf(row) : null;
    },
    async saveSettings(teamId, s) {
      const data = {
        teamId,
        enabled: s.enabled,
        sampleRate: s.sampleRate,
        kind: s.kind,
        judgeModel: s.judgeModel,
        updatedAt: s.updatedAt ?? new Date(),
      };
      const row = await prisma.judgeSettings.upsert({
        where: { projectId: s.projectId },
        create: { projectId: s.projectId, ...data },
        update: data,
      });
      return settingsOf(row);
    },
    async claim(limit, leaseMs) {
      const claimed = await prisma.$queryRawUnsafe<{ id: string; attempts: number }[]>(CLAIM_SQL, limit, leaseMs);
      if (!claimed.length) return [];
      const rows = await prisma.inferenceRecord.findMany({ where: { id: { in: claimed.map((c) => c.id) } } });
      const projectIds = [...new Set(rows.flatMap((r) => (r.projectId ? [r.projectId] : [])))];
      const settings = await prisma.judgeSettings.findMany({ where: { projectId: { in: projectIds } } });
      const byProject = new Map(settings.map((s) => [s.projectId, s]));
      const attempts = new Map(claimed.map((c) => [c.id, Number(c.attempts)]));
      return rows.map((row) => {
        const s = row.projectId ? byProject.get(row.projectId) : undefined;
        return {
          record: fromRow(row),
          attempts: attempts.get(row.id) ?? 1,
          settings: s && s.teamId === row.teamId ? settingsOf(s) : judgingOff(row.projectId ?? ''),
        };
      });
    },
    async saveVerdict(inferenceId, v, at) {
      await prisma.inferenceRecord.updateMany({
        where: { id: inferenceId, judgeStatus: 'pending' },
        data: {
          judgeStatus: 'scored',
          llmajScore: v.score,
          judgeRationale: v.rationale,
          judgeKind: v.kind,
          judgeModel: v.model,
          judgeError: null,
          judgeNextAt: null,
          judgedAt: at,
        },
      });
    },
    async retryLater(inferenceId, error, retryAt) {
      await prisma.inferenceRecord.updateMany({
        where: { id: inferenceId, judgeStatus: 'pending' },
        data: { judgeError: error, judgeNextAt: retryAt },
      });
    },
    async fail(inferenceId, error, at) {
      await prisma.inferenceRecord.updateMany({
        where: { id: inferenceId, judgeStatus: 'pending' },
        data: { judgeStatus: 'failed', judgeError: error, judgeNextAt: null, judgedAt: at },
      });
    },
  };
}
