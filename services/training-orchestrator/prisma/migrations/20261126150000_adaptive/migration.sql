-- CreateTable
CREATE TABLE "adaptive_settings" (
    "project_id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "min_corrections" INTEGER NOT NULL,
    "heldout_dataset" TEXT NOT NULL,
    "metric" TEXT NOT NULL,
    "min_gain" DOUBLE PRECISION NOT NULL,
    "f1_tolerance" DOUBLE PRECISION NOT NULL,
    "feedback_weight" INTEGER NOT NULL,
    "min_label_support" INTEGER NOT NULL,
    "nr_epochs" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "adaptive_settings_pkey" PRIMARY KEY ("project_id")
);

-- CreateTable
CREATE TABLE "adaptations" (
    "id" UUID NOT NULL,
    "team_id" TEXT NOT NULL,
    "project_id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "feedback_dataset" TEXT NOT NULL,
    "feedback_version" INTEGER NOT NULL,
    "feedback_rows" INTEGER NOT NULL,
    "corrections" INTEGER NOT NULL,
    "settings" JSONB NOT NULL,
    "heldout_dataset" TEXT NOT NULL,
    "baseline_job_id" UUID NOT NULL,
    "candidate_job_id" UUID NOT NULL,
    "baseline_evaluation_id" UUID NOT NULL,
    "candidate_evaluation_id" UUID NOT NULL,
    "baseline_metrics" JSONB,
    "candidate_metrics" JSONB,
    "decision_reason" TEXT NOT NULL DEFAULT '',
    "gain" DOUBLE PRECISION,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "decided_at" TIMESTAMPTZ(3),

    CONSTRAINT "adaptations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "adaptive_settings_team_id_idx" ON "adaptive_settings"("team_id");

-- CreateIndex
CREATE INDEX "adaptations_team_id_project_id_created_at_idx" ON "adaptations"("team_id", "project_id", "created_at");

-- CreateIndex
CREATE INDEX "adaptations_status_idx" ON "adaptations"("status");

-- CreateIndex
CREATE INDEX "adaptations_candidate_job_id_idx" ON "adaptations"("candidate_job_id");

-- At most one adaptation per project in progress: a second start fails on this index (AlreadyExists).
CREATE UNIQUE INDEX "adaptations_one_in_progress_idx" ON "adaptations"("project_id") WHERE "status" IN ('training', 'evaluating', 'promoting');
