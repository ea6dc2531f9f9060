import type { TrainedModels } from '../application/ports';
import type { TrainedModel } from '../domain/trained-model';
import type { PrismaClient } from '../generated/prisma/client';

type Row = Awaited<ReturnType<PrismaClient['trainedModel']['findFirst']>> & object;

const toModel = (r: Row): TrainedModel => ({
  jobId: r.jobId,
  teamId: r.teamId,
  servable: r.servable,
  statusLabel: r.statusLabel,
  baseModel: r.baseModel,
  modelName: r.modelName,
  bundle: r.bundleBucket !== null && r.bundleKey ? { bucket: r.bundleBucket, key: r.bundleKey } : null,
  completedAt: r.completedAt,
  updatedAt: r.updatedAt,
});

/**
 * The read model of training jobs in the router's schema (`trained_models`).
 * Upserts are idempotent and ordered by the event's occurred_at in one
 * statement, so a redelivered or late event never overwrites a newer state, and
 * a deleted job (a tombstone row) is never brought back.
 */
export function prismaTrainedModels(prisma: PrismaClient): TrainedModels {
  return {
    async get(teamId, jobId) {
      const r = await prisma.trainedModel.findFirst({ where: { jobId, teamId, deletedAt: null } });
      return r ? toModel(r) : null;
    },
    async listServable(teamId) {
      const rows = await prisma.trainedModel.findMany({
        where: { teamId, servable: true, deletedAt: null },
        orderBy: [{ completedAt: 'desc' }, { jobId: 'asc' }],
      });
      return rows.map(toModel);
    },
    async upsert(m) {
      const updated = await prisma.$executeRaw`
        INSERT INTO trained_models (job_id, team_id, servable, status_label, base_model, model_name,
                                    bundle_bucket, bundle_key, completed_at, updated_at)
        VALUES (${m.jobId}::uuid, ${m.teamId}, ${m.servable}, ${m.statusLabel}, ${m.baseModel}, ${m.modelName},
                ${m.bundle?.bucket ?? null}, ${m.bundle?.key ?? null}, ${m.completedAt}, ${m.updatedAt})
        ON CONFLICT (job_id) DO UPDATE SET
          servable = EXCLUDED.servable,
          status_label = EXCLUDED.status_label,
          base_model = CASE WHEN EXCLUDED.base_model = '' THEN trained_models.base_model ELSE EXCLUDED.base_model END,
          model_name = CASE WHEN EXCLUDED.model_name = '' THEN trained_models.model_name ELSE EXCLUDED.model_name END,
          bundle_bucket = EXCLUDED.bundle_bucket,
          bundle_key = EXCLUDED.bundle_key,
          completed_at = COALESCE(trained_models.completed_at, EXCLUDED.completed_at),
          updated_at = EXCLUDED.updated_at
        WHERE trained_models.deleted_at IS NULL AND trained_models.updated_at <= EXCLUDED.updated_at`;
      return updated > 0;
    },
    async markDeleted(jobId, teamId, at) {
      await prisma.$executeRaw`
        INSERT INTO trained_models (job_id, team_id, servable, status_label, base_model, model_name, updated_at, deleted_at)
        VALUES (${jobId}::uuid, ${teamId}, false, 'deleted', '', '', ${at}, ${at})
        ON CONFLICT (job_id) DO UPDATE SET servable = false, status_label = 'deleted', deleted_at = EXCLUDED.deleted_at
        WHERE trained_models.deleted_at IS NULL`;
    },
  };
}
