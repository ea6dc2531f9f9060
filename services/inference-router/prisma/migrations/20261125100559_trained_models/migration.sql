-- CreateTable
CREATE TABLE "trained_models" (
    "job_id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "servable" BOOLEAN NOT NULL,
    "status_label" TEXT NOT NULL,
    "base_model" TEXT NOT NULL,
    "model_name" TEXT NOT NULL,
    "bundle_bucket" TEXT,
    "bundle_key" TEXT,
    "completed_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "trained_models_pkey" PRIMARY KEY ("job_id")
);

-- CreateIndex
CREATE INDEX "trained_models_team_id_servable_idx" ON "trained_models"("team_id", "servable");

