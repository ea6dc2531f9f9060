-- AlterTable
ALTER TABLE "evaluations" ADD COLUMN     "artifact_key" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "base_model" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "dataset_bucket" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "heldout_key" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "lease_owner" TEXT,
ADD COLUMN     "lease_token" TEXT,
ADD COLUMN     "lease_until" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "manifest_key" TEXT;

-- CreateIndex
CREATE INDEX "evaluations_status_created_at_idx" ON "evaluations"("status", "created_at");


-- Evaluations used to run inside the orchestrator. One still running from before has no bundle location to lease.
UPDATE "evaluations" SET "status" = 'failed', "error" = 'The evaluation was interrupted by an upgrade, start it again' WHERE "status" = 'running';
