-- AlterTable
ALTER TABLE "adaptations" ADD COLUMN     "control_evaluation_id" UUID,
ADD COLUMN     "control_job_id" UUID,
ADD COLUMN     "control_metrics" JSONB;
