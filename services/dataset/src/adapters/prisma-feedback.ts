/** Feedback examples per (team, project) in the service's schema. */
import type { FeedbackStore } from '../application/ports';
import type { FeedbackIssue, FeedbackRow } from '../domain/feedback';

const pendingOf = async (
  tx: Pick<PrismaClient, 'feedbackExample'>,
  projects: Iterable<{ teamId: string; projectId: string }>,
) => {
  const out = [];
  for (const p of projects)
    out.push({ ...p, pending: await tx.feedbackExample.count({ where: { ...p, pending: true } }) });
  return out;
};
import type { PrismaClient } from '../generated/prisma/client';

export function prismaFeedbackStore(prisma: PrismaClient): FeedbackStore {
  return {
    saveFeedback: (verdicts) =>
      prisma.$transaction(async (tx) => {
        const projects = new Map<string, { teamId: string; projectId: string }>();
        for (const v of verdicts) {
          // A redelivered or out-of-order older verdict never replaces a newer one.
          await tx.$executeRaw`
            INSERT INTO feedback_examples
              (inference_id, team_id, project_id, task, verdict, rows, issues, submitted_at, pending, updated_at)
            VALUES (${v.inferenceId}, ${v.teamId}, ${v.projectId}, ${v.task}, ${v.verdict},
              ${JSON.stringify(v.rows)}::jsonb, ${JSON.stringify(v.issues)}::jsonb, ${v.submittedAt}, true, now())
            ON CONFLICT (inference_id) DO UPDATE SET
              task = EXCLUDED.task, verdict = EXCLUDED.verdict, rows = EXCLUDED.rows, issues = EXCLUDED.issues,
              submitted_at = EXCLUDED.submitted_at, pending = true, updated_at = now()
            WHERE feedback_examples.team_id = EXCLUDED.team_id
              AND feedback_examples.submitted_at < EXCLUDED.submitted_at`;
          // Every project of the batch, changed or not: a batch redelivered after a failed cut cuts it again.
          projects.set(`${v.teamId}/${v.projectId}`, { teamId: v.teamId, projectId: v.projectId });
        }
        return pendingOf(tx, projects.values());
      }),
    removeFeedback: (deletions) =>
      prisma.$transaction(async (tx) => {
        const projects = new Map<string, { teamId: string; projectId: string }>();
        for (const d of deletions) {
          // Only a verdict held for that team; one submitted after the deletion cannot exist (history refuses it).
          const held = await tx.$executeRaw`
            UPDATE feedback_examples SET verdict = 'deleted', rows = '[]'::jsonb, issues = '[]'::jsonb,
              submitted_at = ${d.deletedAt}, pending = true, updated_at = now()
            WHERE inference_id = ${d.inferenceId} AND team_id = ${d.teamId} AND submitted_at < ${d.deletedAt}`;
          if (held) projects.set(`${d.teamId}/${d.projectId}`, { teamId: d.teamId, projectId: d.projectId });
        }
        return pendingOf(tx, projects.values());
      }),
    async snapshot(teamId, projectId) {
      const rows = await prisma.feedbackExample.findMany({
        where: { teamId, projectId },
        orderBy: { inferenceId: 'asc' },
        select: { inferenceId: true, verdict: true, rows: true, issues: true, submittedAt: true },
      });
      return rows.map((r) => ({
        inferenceId: r.inferenceId,
        verdict: r.verdict === 'incorrect' || r.verdict === 'deleted' ? r.verdict : 'correct',
        submittedAt: r.submittedAt,
        rows: r.rows as unknown as FeedbackRow[],
        issues: r.issues as unknown as FeedbackIssue[],
      }));
    },
    pendingCount: (teamId, projectId) => prisma.feedbackExample.count({ where: { teamId, projectId, pending: true } }),
    async markVersioned(teamId, projectId, examples) {
      // Only the verdicts as they were read: one replaced since then stays pending for the next version.
      await prisma.$executeRaw`
        UPDATE feedback_examples f SET pending = false
        FROM unnest(${examples.map((e) => e.inferenceId)}::text[], ${examples.map((e) => e.submittedAt)}::timestamptz[])
          AS v(inference_id, submitted_at)
        WHERE f.team_id = ${teamId} AND f.project_id = ${projectId}
          AND f.inference_id = v.inference_id AND f.submitted_at = v.submitted_at`;
    },
  };
}
